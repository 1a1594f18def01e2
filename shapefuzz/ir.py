"""The words an op's type rule is written in: a value's static type (VType, SYMINT) and the error
a malformed program raises (ProgramError).

They sit below both program/ and ops/ (Note [layers]): an op types its outputs with them, and a
program type-checks by asking its ops (Program.types), so neither package may hold them without
importing the other. shapefuzz.program re-exports them: import them from there."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz import BadInput

__all__ = ["SYMINT", "ProgramError", "VType"]


class ProgramError(BadInput):
    """A program (usually one loaded from a file) is malformed. The message says what and where."""


@dataclass(frozen=True, slots=True)
class VType:
    """Static type of a value: a tensor of a dtype and rank, or a SymInt ('int')."""

    sort: str  # "tensor" | "int"
    dtype: str = ""
    rank: int = 0

    @staticmethod
    def tensor(dtype: str, rank: int) -> VType:
        return VType("tensor", dtype, rank)


SYMINT = VType("int")
