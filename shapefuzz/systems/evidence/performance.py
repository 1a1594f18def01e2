"""The performance oracle's evidence (shapefuzz.oracles.performance; Note [typed evidence]):
the program's family scaled by n, measured by make_fx on the programs it samples (Note [scaling
family] in shapefuzz.systems.scaling); a performance finding carries the family that shows it."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.systems.evidence.base import declare
from shapefuzz.systems.observation import by_position

__all__ = ["Scaling", "ScalingEvidence"]


@by_position
@dataclass(frozen=True, slots=True)
class Scaling:
    """A program's family scaled by n, measured (Note [scaling family] in systems/scaling.py):
    per n, the trace's CPU time (the least over the rounds) and its expression size (characters
    of the guards and deferred asserts); read by the performance oracle."""

    family: str
    ns: tuple[int, ...]
    cpu_s: tuple[float, ...]
    sizes: tuple[int, ...]
    rounds: int
    expected_order: float  # the family's own growth with n (independent copies: 1)
    profile: str = ""  # the hottest torch functions (when it looked superlinear)
    profile_n: int = 0  # the member profiled (Note [measurement budget] in systems/scaling.py)


@declare("performance")
@dataclass(frozen=True, slots=True)
class ScalingEvidence:
    """The families measured on one observation; a finding's holds the one it is about."""

    families: tuple[Scaling, ...] = ()
