"""A job: one program through one (system, config), as a value a worker process receives, and
running it in this process. Campaign workers, replays of cases and tests all run jobs this way."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.program.kinds import kind_of, load_program
from shapefuzz.systems.observation import Observation

__all__ = ["Job", "run_job"]


@dataclass(frozen=True, slots=True)
class Job:
    program_json: str
    system: str
    config: str
    variants_json: str  # JSON list of lists of input specs


def run_job(job: Job) -> Observation:
    """Run one job in this process (workers call this; so do in-process replays and tests)."""
    import json

    from shapefuzz.program import _input_from_json
    from shapefuzz.systems import get_system

    program = load_program(json.loads(job.program_json))
    variants = [tuple(_input_from_json(k, s) for k, s in enumerate(v))
                for v in json.loads(job.variants_json)]
    system = get_system(job.system)
    obs = system.observe(program, job.config, variants)
    return kind_of(program).extra_runs(system, program, obs)
