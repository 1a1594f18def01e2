"""What a campaign generates: the program kinds its targets accept, and their strategy."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from shapefuzz.program.kinds import KINDS
from shapefuzz.strategies import programs_of_kind
from shapefuzz.systems import accepts
from shapefuzz.systems.observation import to_jsonable

__all__ = ["example_space", "kinds", "strategy"]


def kinds(cfg: Any) -> list[str]:
    """The program kinds some target accepts, in KINDS order."""
    return [k for k in KINDS if any(accepts(s, k) for s, _ in cfg.targets)]


def example_space(cfg: Any) -> dict:
    """What a choice sequence means: the program kinds and generator settings."""
    return {"kinds": sorted(kinds(cfg)), "gen": to_jsonable(cfg.gen)}


def strategy(cfg: Any):
    """Tensor programs, question programs, or both, as the targets accept them."""
    strats = [programs_of_kind(k, cfg.gen) for k in kinds(cfg)]
    return strats[0] if len(strats) == 1 else st.one_of(*strats)
