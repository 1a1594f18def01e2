"""One torch name a config relies on (Note [torch names] in needs.py). torch_toggles.py declares
its Needs next to the code that patches torch, and needs.py reads those declarations (importing
torch_toggles, and with it torch, only when asked): the value sits below both."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Need"]


@dataclass(frozen=True, slots=True)
class Need:
    """One torch name a config relies on, resolved lazily: `name` is dotted from `torch`; with
    `fragment`, a compiled rewrite (Note [compiled rewrites] in rewrite.py) must find that
    text exactly once in the object's source; with `param`, the callable must take that keyword."""

    name: str
    fragment: str = ""
    param: str = ""

    def __post_init__(self) -> None:
        if not self.name.startswith("torch."):
            raise ValueError(f"Need name {self.name!r}: expected a dotted name from torch, e.g. "
                             "'torch.fx.experimental.symbolic_shapes.ShapeEnv._maybe_guard_rel'")
