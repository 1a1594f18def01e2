"""The metamorphic oracle's evidence (shapefuzz.oracles.metamorphic; Note [typed evidence]): what
each variant run of a question program said (shapefuzz.program.metamorphic: the same program in
a fresh env, and with a redundant question before each one), recorded where a job ends
(systems/jobs.py) from its program kind's `echoes`."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.program.metamorphic import Echo
from shapefuzz.systems.evidence.base import declare

__all__ = ["Echo", "Echoes"]


@declare("metamorphic")
@dataclass(frozen=True, slots=True)
class Echoes:
    echoes: tuple[Echo, ...] = ()
