"""One program through every (system, config), then every oracle: the pipeline's middle."""

from __future__ import annotations

import json
from dataclasses import dataclass

from shapefuzz.findings import Finding
from shapefuzz.observation import Observation
from shapefuzz.oracles import check_all
from shapefuzz.program import Program
from shapefuzz.variants import variants
from shapefuzz.workers import Job

__all__ = ["Evaluation", "evaluate", "jobs_for", "variants_json", "is_valid"]


@dataclass(frozen=True, slots=True)
class Evaluation:
    program: Program
    eager: Observation | None  # None for question programs
    observations: tuple[Observation, ...]
    findings: tuple[Finding, ...]


def variants_json(program: Program, n: int, seed: int) -> str:
    vs = variants(program, n, seed)
    return json.dumps([[{"name": s.name, "dtype": s.dtype, "shape": list(s.shape), "dims": list(s.dims),
                         "data": list(s.data)} for s in v] for v in vs])


def jobs_for(program, targets: tuple[tuple[str, str], ...], n_variants: int, seed: int) -> list[Job]:
    """Tensor programs get an eager job first; question programs carry their own truth."""
    from shapefuzz.systems import accepts

    pj = program.dumps()
    mine = [(s, c) for s, c in targets if accepts(s, program.kind)]
    if program.kind == "questions":
        return [Job(pj, s, c, "[]") for s, c in mine]
    vj = variants_json(program, n_variants, seed)
    return [Job(pj, "eager", "default", "[]")] + [Job(pj, s, c, vj) for s, c in mine]


def evaluate(program: Program, targets: tuple[tuple[str, str], ...], run_many, n_variants: int = 6,
             seed: int = 0) -> Evaluation:
    """`run_many(jobs) -> observations` is a WorkerPool's, or an in-process stand-in."""
    obs = run_many(jobs_for(program, targets, n_variants, seed))
    if program.kind == "questions":
        eager, rest = None, tuple(obs)
    else:
        eager, rest = obs[0], tuple(obs[1:])
    return Evaluation(program, eager, rest, tuple(check_all(program, eager, rest)))


def is_valid(ev: Evaluation) -> bool:
    """Eager ran the tensor program without error / every check of a question program holds."""
    if ev.eager is not None:
        return ev.eager.outcome.kind == "ok"
    from shapefuzz.questions import truth

    return truth(ev.program).failed_check is None
