"""What the generator may produce. One frozen value, validated once."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.ops import families
from shapefuzz.program import DIM_KINDS

__all__ = ["GenSettings"]


@dataclass(frozen=True, slots=True)
class GenSettings:
    families: tuple[str, ...] = ()  # empty: every op family
    max_ops: int = 8
    max_rank: int = 3
    max_size: int = 6
    max_inputs: int = 3
    dim_kinds: tuple[str, ...] = DIM_KINDS
    max_numel: int = 512  # no value may hold more elements (Note [bounded sizes])

    def __post_init__(self) -> None:
        unknown = sorted(set(self.families) - set(families()))
        if unknown:
            raise ValueError(f"unknown op families {unknown}; choose from {families()}")
        for name, lo, hi in (("max_ops", 1, 64), ("max_rank", 1, 5), ("max_size", 1, 64),
                             ("max_inputs", 1, 6), ("max_numel", 16, 1 << 16)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise ValueError(f"{name}={v!r}: expected an int in [{lo}, {hi}]")
        if not self.dim_kinds or set(self.dim_kinds) - set(DIM_KINDS):
            raise ValueError(f"dim_kinds={self.dim_kinds!r}: expected a non-empty subset of {DIM_KINDS}")
