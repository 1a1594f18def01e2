"""A job: one program through one (system, config), as a value a worker process receives, and
running it in this process. Campaign workers, replays of cases and tests all run jobs this way."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.program import _input_from_json
from shapefuzz.program.kinds import kind_of, load_program
from shapefuzz.systems import get_system
from shapefuzz.systems.evidence import record, recorded
from shapefuzz.systems.evidence.metamorphic import Echoes
from shapefuzz.systems.observation import Observation

__all__ = ["Job", "run_job"]


@dataclass(frozen=True, slots=True)
class Job:
    program_json: str
    system: str
    config: str
    variants_json: str  # JSON list of lists of input specs


def run_job(job: Job, parsed: dict | None = None) -> Observation:
    """Run one job in this process (workers call this; so do in-process replays and tests).
    `parsed` memoizes the parsed program and variants by their JSON (the jobs of one program
    share them: one parse for all its configs)."""
    key = (job.program_json, job.variants_json)
    hit = parsed.get(key) if parsed is not None else None
    if hit is None:
        hit = _parse(job)
        if parsed is not None:
            parsed.clear()  # one program at a time: its configs' jobs come together
            parsed[key] = hit
    program, variants = hit
    system = get_system(job.system)
    reusing = getattr(system, "observe_reusing", None)
    if reusing is not None and parsed is not None:  # Note [unread toggles] (systems/ref/reuse.py)
        scratch = parsed.setdefault(("scratch", job.system), {})  # this program's, for the system
        obs = reusing(program, job.config, variants, scratch)
    else:
        obs = system.observe(program, job.config, variants)
    echoes = kind_of(program).echoes(system, program, obs)
    if echoes:
        obs = record(obs, Echoes(echoes))
    # Note [typed evidence]: the evidence of oracles no built-in system records (a plugin's)
    return recorded(program, obs)



def _parse(job: Job) -> tuple:
    import json

    program = load_program(json.loads(job.program_json))
    variants = [tuple(_input_from_json(k, s) for k, s in enumerate(v))
                for v in json.loads(job.variants_json)]
    return program, variants
