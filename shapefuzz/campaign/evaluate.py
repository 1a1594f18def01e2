"""One program through every (system, config), then every oracle: the pipeline's middle."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.campaign.rotation import rotated
from shapefuzz.oracles import check_all
from shapefuzz.oracles.findings import Finding
from shapefuzz.program import Program
from shapefuzz.program.kinds import kind_of
from shapefuzz.systems import accepts
from shapefuzz.systems.jobs import Job
from shapefuzz.systems.observation import Observation

__all__ = ["Evaluation", "evaluate", "is_valid", "jobs_for", "variants_json"]


@dataclass(frozen=True, slots=True)
class Evaluation:
    program: Program
    eager: Observation | None  # None for question programs
    observations: tuple[Observation, ...]
    findings: tuple[Finding, ...]


def variants_json(program, n: int, seed: int) -> str:
    return kind_of(program).variants_json(program, n, seed)


def jobs_for(program, targets: tuple[tuple[str, str], ...], n_variants: int, seed: int,
             rotate: int | None = None) -> list[Job]:
    """An eager job first where eager is the truth (tensor programs, Note [program kinds]);
    `rotate`: the program's share of the configs (Note [config rotation]), None for all."""
    pj, kind = program.dumps(), kind_of(program)
    mine = [(s, c) for s, c in rotated(pj, targets, rotate) if accepts(s, kind.name)]
    vj = variants_json(program, n_variants, seed)
    eager = [Job(pj, "eager", "default", "[]")] if kind.has_eager else []
    return eager + [Job(pj, s, c, vj) for s, c in mine]


def evaluate(program: Program, targets: tuple[tuple[str, str], ...], run_many, n_variants: int = 6,
             seed: int = 0, rotate: int | None = None) -> Evaluation:
    """`run_many(jobs) -> observations` is a WorkerPool's, or an in-process stand-in."""
    obs = run_many(jobs_for(program, targets, n_variants, seed, rotate))
    eager, rest = (obs[0], tuple(obs[1:])) if kind_of(program).has_eager else (None, tuple(obs))
    return Evaluation(program, eager, rest, tuple(check_all(program, eager, rest)))


def is_valid(ev: Evaluation) -> bool:
    """Eager ran the tensor program without error / every check of a question program holds."""
    return kind_of(ev.program).valid(ev.program, ev.eager)
