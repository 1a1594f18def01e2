"""Oracles: pure functions from observations to findings (DESIGN.md "Oracles")."""

from shapefuzz.oracles.agreement import compare_runs, eager_agreement
from shapefuzz.oracles.replay import replay_agreement

__all__ = ["eager_agreement", "replay_agreement", "compare_runs", "check_all"]


def check_all(program, eager, observations):
    """Every oracle over one program's observations; `eager` is the eager observation."""
    undefined = _undefined_outputs(program)
    out = []
    for obs in observations:
        out += eager_agreement(eager, obs, undefined)
        out += replay_agreement(obs, undefined)
    return out


def _undefined_outputs(program) -> frozenset[int]:
    bad = program.undefined_data()
    return frozenset(k for k, v in enumerate(program.outputs) if v in bad)
