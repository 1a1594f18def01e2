"""The specialization oracle's form (shapefuzz/oracles/specialization.py; Note [repro forms]):
after the program is exported (`ep`, by the traced writer's `TRACE()`), each dim declared
Dim.DYNAMIC (or a named Dim) must still be symbolic in the exported program. DECLARED: those
dims, per input (the form's value)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import torch
from torch.fx.experimental.symbolic_shapes import ConstraintViolationError

if TYPE_CHECKING:
    from shapefuzz.repro.templates._slots import DECLARED, TRACE


def trace():
    """The export, where a constraint violation is the contract kept (torch raises it as itself,
    or as the UserError it caused): exit 0."""
    try:
        ep = TRACE()
    except Exception as e:
        if not any(isinstance(x, ConstraintViolationError) for x in (e, e.__cause__, e.__context__)):
            raise
        print(f"OK: export raised a constraint violation ({type(e).__name__}: {str(e).splitlines()[0][:200]})")
        sys.exit(0)
    return ep


def check(ep):
    """A dim declared Dim.DYNAMIC (or a named Dim) must stay symbolic: export raises a
    constraint violation when the program specializes it."""
    user = [n for n in ep.graph.find_nodes(op="placeholder") if n.name in ep.graph_signature.user_inputs]
    for i, (ph, dims) in enumerate(zip(user, DECLARED)):
        for d in dims:
            s = ph.meta["val"].shape[d]
            expr = s.node.expr if isinstance(s, torch.SymInt) else None  # replacements applied
            vr = ep.range_constraints.get(expr)
            if expr is None or expr.is_number or (vr is not None and vr.lower == vr.upper):
                print(f"BUG: input {i} dim {d} was declared dynamic; the exported program has it "
                      f"as {s} (range {vr}), and no constraint violation was raised")
                sys.exit(1)
    print("OK: every declared dim is symbolic")
