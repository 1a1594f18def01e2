"""torch-env (no-specialize-zero-one): wrong-static on bool
oracle truth: every answer the ShapeEnv claims (not an undecided fallback) must equal the concrete answer for the values the sizes really have, also for other values its guards accept.
question 0: bool(True) answered True (static); the concrete answer is False
system torch-env, config no-specialize-zero-one; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
try: import pkgutil; [pkgutil.resolve_name(name) for name in ('torch._dynamo.source.ConstantSource', 'torch.fx.experimental.symbolic_shapes.guard_or_false', 'torch.fx.experimental.symbolic_shapes.DimDynamic.DUCK', 'torch.fx.experimental.symbolic_shapes.ShapeEnv._maybe_evaluate_static')]  # torch's private names used below: another torch version may have moved one
except (ImportError, AttributeError) as e: sys.exit(print(f"repro.py: this torch ({torch.__version__}) lacks a name it uses ({e}); the repro cannot run here") or 2)
from torch._dynamo.source import ConstantSource
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, guard_or_false

print("torch", torch.__version__)
wrong = []  # the answers that are not the concrete answer
def backed(hint, name):  # a backed size, as torch makes one for a tensor dim
    src = ConstantSource(name)
    return se.create_symintnode(se.create_symbol(hint, src, DimDynamic.DUCK), hint=hint, source=src)
def answer(k, c, got, fallback, want):  # question k's answer must be the concrete one (want), unless a fallback
    expr = c.node.expr if isinstance(c, torch.SymBool) else c
    static = se._maybe_evaluate_static(expr) if isinstance(c, torch.SymBool) else c
    if got != want and (got != fallback or (static is not None and bool(static) != want)):
        wrong.append(f"question {k}: {expr}: expected {want} (concretely), got {got} (static: {static})")
try:
    se = ShapeEnv(specialize_zero_one=False)
    v0 = backed(0, 'v0')
    v1 = v0 * v0
    c = v1 != 0
    answer(0, c, bool(c), None, False)
    v2 = backed(4, 'v2')
    v3 = v2 - 0
    c = v1 >= 0
    answer(1, c, guard_or_false(c), False, True)
except Exception as e:
    print(f"raised {type(e).__name__}: {e}")
    if "data-dependent" not in str(e).lower() and not type(e).__name__.startswith("GuardOnData"):
        sys.exit(1)
print("\n".join("BUG: " + w for w in wrong) or "OK: every claim is the concrete answer")
sys.exit(1 if wrong else 0)
