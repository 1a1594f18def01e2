"""Row 25 by hand: FloorDiv(FloorDiv(a, b), c) folds to FloorDiv(a, b*c) whatever the sign of c.

torch/utils/_sympy/functions.py FloorDiv.eval: `if isinstance(base, FloorDiv): return
FloorDiv(base.args[0], base.args[1] * divisor)`. floor(floor(x) / c) == floor(x / c) holds for
c > 0 only; for a negative outer divisor (an unbacked int from item()) the folded expression
is another number: (2 // 5) // -2 is 0 in Python, 2 // (5 * -2) is -1. Export reifies the folded
expression for a runtime assert and reuses it for the output, so the exported program returns
-1 where eager returns 0. Exits 1 while the fold is there."""
import sys
import sympy
import torch
from torch.export import export
from torch.fx.experimental.symbolic_shapes import ShapeEnv
from torch.utils._sympy.functions import FloorDiv

print("torch", torch.__version__)
bugs = []

# 1. sympy level
a, c = sympy.symbols("a c", integer=True)
e = FloorDiv(FloorDiv(2, a), c)
got, want = e.xreplace({a: 5, c: -2}), (2 // 5) // -2
print(f"FloorDiv(FloorDiv(2, a), c) = {e}; at a=5, c=-2: {got}, Python: {want}")
if got != want:
    bugs.append("FloorDiv.eval folds the nested division for a negative divisor")

# 2. ShapeEnv level: two unbacked ints, as item() makes them
se = ShapeEnv()
u0, u1 = se.create_unbacked_symint(), se.create_unbacked_symint()
v = (2 // u0) // u1
print(f"(2 // u0) // u1 is traced as {v.node.expr}; var_to_range of u1: {se.var_to_range[u1.node.expr]}")


# 3. end to end: torch.export, a torch._check on the value, then the value used
class M(torch.nn.Module):
    def forward(self, x, y):
        n = (2 // x.item()) // y.item()
        torch._check(n >= -5)
        return torch.zeros(1) + n


x, y = torch.tensor(5), torch.tensor(-2)
eager = M()(x, y)
exported = export(M(), (x, y)).module()(x, y)
print(f"eager: {eager}, exported: {exported}")
if not torch.equal(eager, exported):
    bugs.append(f"the exported program returns {exported.item()} where eager returns {eager.item()}")
print("\n".join("BUG: " + b for b in bugs) or "OK")
sys.exit(1 if bugs else 0)
