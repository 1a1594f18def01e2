"""torch-env raised ValueRangeError on a valid question program
oracle truth: every answer the ShapeEnv claims (not an undecided fallback) must equal the concrete answer for the values the sizes really have, also for other values its guards accept.
ValueRangeError: Invalid ranges [1:0]
system torch-env, config backed-size-oblivious; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import pkgutil
import sys
import torch
try:  # torch's private names used below: another torch version may have moved one
    for name in ('torch._dynamo.source.ConstantSource', 'torch.fx.experimental._config.backed_size_oblivious', 'torch.fx.experimental.symbolic_shapes.DimDynamic.DUCK', 'torch.fx.experimental.symbolic_shapes.ShapeEnv._maybe_evaluate_static'): pkgutil.resolve_name(name)
except (ImportError, AttributeError):
    sys.exit(print(f"repro.py: this torch ({torch.__version__}) has no {name}; the repro cannot run here") or 2)
import torch.fx.experimental._config
from torch._dynamo.source import ConstantSource
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv

print("torch", torch.__version__)
torch.fx.experimental._config.backed_size_oblivious = True
wrong = []  # the answers that are not the concrete answer
def backed_oblivious(hint, name):  # a backed size under backed_size_oblivious: size-like, not 0/1-specialized
    src = ConstantSource(name)
    s = se.create_symbol(hint, src, DimDynamic.DUCK, do_not_specialize_zero_one=True)
    se.size_like.add(s)
    return se.create_symintnode(s, hint=hint, source=src)
def unbacked():  # a fresh unbacked SymInt (its concrete value: in a comment where made)
    u = se.create_unbacked_symint()
    se.pending_fresh_unbacked_symbols.clear()
    return u
def answer(k, c, got, fallback, want):  # question k's answer must be the concrete one (want), unless a fallback
    expr = c.node.expr if isinstance(c, torch.SymBool) else c
    static = se._maybe_evaluate_static(expr) if isinstance(c, torch.SymBool) else c
    if got != want and (got != fallback or (static is not None and bool(static) != want)):
        wrong.append(f"question {k}: {expr}: expected {want} (concretely), got {got} (static: {static})")
try:
    se = ShapeEnv()
    v0 = backed_oblivious(0, 'v0')
    v1 = unbacked()  # concretely -1
    torch._check(v1 <= 0)
    v2 = v0 * v1
    torch._check(v0 == v2)
except Exception as e:
    print(f"raised {type(e).__name__}: {e}")
    if "data-dependent" not in str(e).lower() and not type(e).__name__.startswith("GuardOnData"):
        sys.exit(1)
print("\n".join("BUG: " + w for w in wrong) or "OK: every claim is the concrete answer")
sys.exit(1 if wrong else 0)
