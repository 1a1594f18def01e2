"""Oracles: pure functions from observations to findings (DESIGN.md "Oracles")."""

from shapefuzz.oracles.agreement import compare_runs, eager_agreement
from shapefuzz.oracles.differential import config_differential, system_differential
from shapefuzz.oracles.frontends import frontend_differential
from shapefuzz.oracles.recompile import recompile_behaviour
from shapefuzz.oracles.metamorphic import metamorphic
from shapefuzz.oracles.replay import replay_agreement
from shapefuzz.oracles.soundness import smt_findings
from shapefuzz.oracles.truth import truth_agreement

__all__ = ["eager_agreement", "replay_agreement", "compare_runs", "truth_agreement",
           "config_differential", "system_differential", "metamorphic", "check_all"]


def check_all(program, eager, observations):
    """Every oracle over one program's observations. For tensor programs `eager` is the eager
    observation; question programs carry their own truth (Note [question truth])."""
    out = []
    if getattr(program, "kind", "tensors") == "questions":
        for obs in observations:
            out += truth_agreement(program, obs)
            out += metamorphic(program, obs)
            out += smt_findings(program, obs)
    else:
        undefined = _undefined_outputs(program)
        for obs in observations:
            out += eager_agreement(eager, obs, undefined)
            out += replay_agreement(obs, undefined)
            out += recompile_behaviour(obs)
            out += smt_findings(program, obs)
        out += frontend_differential(program, list(observations))
    out += config_differential(list(observations), program)
    out += system_differential(list(observations), eager, program)
    return out


def _undefined_outputs(program) -> frozenset[int]:
    bad = program.undefined_data()
    return frozenset(k for k, v in enumerate(program.outputs) if v in bad)
