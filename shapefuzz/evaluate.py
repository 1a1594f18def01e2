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

__all__ = ["Evaluation", "evaluate", "jobs_for", "variants_json"]


@dataclass(frozen=True, slots=True)
class Evaluation:
    program: Program
    eager: Observation
    observations: tuple[Observation, ...]
    findings: tuple[Finding, ...]


def variants_json(program: Program, n: int, seed: int) -> str:
    vs = variants(program, n, seed)
    return json.dumps([[{"name": s.name, "dtype": s.dtype, "shape": list(s.shape), "dims": list(s.dims),
                         "data": list(s.data)} for s in v] for v in vs])


def jobs_for(program: Program, targets: tuple[tuple[str, str], ...], n_variants: int, seed: int) -> list[Job]:
    pj, vj = program.dumps(), variants_json(program, n_variants, seed)
    return [Job(pj, "eager", "default", "[]")] + [Job(pj, s, c, vj) for s, c in targets]


def evaluate(program: Program, targets: tuple[tuple[str, str], ...], run_many, n_variants: int = 6,
             seed: int = 0) -> Evaluation:
    """`run_many(jobs) -> observations` is a WorkerPool's, or an in-process stand-in."""
    obs = run_many(jobs_for(program, targets, n_variants, seed))
    eager, rest = obs[0], tuple(obs[1:])
    return Evaluation(program, eager, rest, tuple(check_all(program, eager, rest)))
