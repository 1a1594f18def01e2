"""Row 28 without shapefuzz: an unbacked u constrained to [0, 0], a backed s >= 2. torch's own
intervals give s*u in [0, 0], so bool(s*u == 1) is False, but ShapeEnv raises a data-dependent
error: _maybe_evaluate_static rewrites u as an offset positive symbol, Eq(s*u, 1) becomes
Eq(x*s, s + 1), whose two sides' intervals overlap; and the singleton range is no replacement.
Exits 1 while the bug is there."""
import sys

import torch
from torch._dynamo.source import ConstantSource
from torch.fx.experimental.symbolic_shapes import DimDynamic, GuardOnDataDependentSymNode, ShapeEnv, constrain_range

print("torch", torch.__version__)
se = ShapeEnv()
src = ConstantSource("s")
s = se.create_symintnode(se.create_symbol(2, src, DimDynamic.DUCK), hint=2, source=src)
u = se.create_unbacked_symint()
se.pending_fresh_unbacked_symbols.clear()
constrain_range(u, min=0, max=0)
expr = (s * u == 1).node.expr
print("static:", se._maybe_evaluate_static(expr), "| unbacked_only:", se._maybe_evaluate_static(expr, unbacked_only=True))
try:
    print("bool(s*u == 1) =", bool(s * u == 1))
except GuardOnDataDependentSymNode as e:
    print("BUG: data-dependent error on an expression torch's ranges decide:", str(e).splitlines()[0][:160])
    sys.exit(1)
sys.exit(0)
