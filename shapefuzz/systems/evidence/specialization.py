"""The specialization oracle's evidence (shapefuzz.oracles.specialization; Note [typed
evidence]): the dims a user declared dynamic (Dim.DYNAMIC, a named Dim) that export's trace made
constant without a constraint violation, recorded by the export system (Note [export contract]
in shapefuzz.systems.export)."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.systems.evidence.base import declare
from shapefuzz.systems.observation import by_position

__all__ = ["Specialization", "SpecializedDim"]


@by_position
@dataclass(frozen=True, slots=True)
class SpecializedDim:
    input: int
    dim: int
    declared: str  # how: "Dim.DYNAMIC", "a named Dim"
    value: int  # the constant it became

    def describe(self) -> str:
        return f"input {self.input} dim {self.dim} (declared {self.declared}) was specialized to {self.value}"


@declare("specialization")
@dataclass(frozen=True, slots=True)
class Specialization:
    dims: tuple[SpecializedDim, ...] = ()
