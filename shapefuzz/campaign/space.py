"""What a campaign generates: the program kinds its targets accept, and their strategy."""

from __future__ import annotations

from typing import Any

__all__ = ["example_space", "kinds", "strategy"]


def kinds(cfg: Any) -> list[str]:
    """The program kinds some target accepts, in KINDS order."""
    from shapefuzz.program.kinds import KINDS
    from shapefuzz.systems import accepts

    return [k for k in KINDS if any(accepts(s, k) for s, _ in cfg.targets)]


def example_space(cfg: Any) -> dict:
    """What a choice sequence means: the program kinds and generator settings."""
    from shapefuzz.systems.observation import to_jsonable

    return {"kinds": sorted(kinds(cfg)), "gen": to_jsonable(cfg.gen)}


def strategy(cfg: Any):
    """Tensor programs, question programs, or both, as the targets accept them."""
    from hypothesis import strategies as st

    from shapefuzz.program.kinds import KINDS

    strats = [KINDS[k].strategy(cfg.gen) for k in kinds(cfg)]
    return strats[0] if len(strats) == 1 else st.one_of(*strats)
