"""By hand (no shapefuzz): ShapeEnv.get_implications derives the implied facts of a guard only when it is an
Lt/Le/Eq instance, so a guard recorded as x > 1 (StrictGreaterThan) leaves statically_known_true(x >= 1)
False, while the same guard written 1 < x makes it True. Exits 1 while the two forms differ."""
import sys, sympy, torch
from torch.fx.experimental.symbolic_shapes import ShapeEnv, DimDynamic, statically_known_true
from torch._dynamo.source import ConstantSource
out = {}
for form in ("x > 1", "1 < x"):
    se = ShapeEnv()
    s = se.create_symbol(2, ConstantSource("s"), DimDynamic.DYNAMIC)
    si = se.create_symintnode(s, hint=2)
    m = (257 * si) % 128
    mx = m.node.expr
    g = sympy.Gt(mx, 1, evaluate=False) if form == "x > 1" else sympy.Lt(1, mx, evaluate=False)
    se.evaluate_expr(g)        # record the guard, as a branch on m > 1 does
    out[form] = statically_known_true(m >= 1)
    print(f"guard {form}: axioms {list(se.axioms)}; statically_known_true(x >= 1) = {out[form]}")
sys.exit(1 if out["x > 1"] != out["1 < x"] else 0)
