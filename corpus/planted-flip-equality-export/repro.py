"""export raised ValueError where eager succeeds
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system export, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
try: import pkgutil; [pkgutil.resolve_name(name) for name in ('torch.fx.experimental._config.inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY',)]  # torch's private names used below: another torch version may have moved one
except (ImportError, AttributeError) as e: sys.exit(print(f"repro.py: this torch ({torch.__version__}) lacks a name it uses ({e}); the repro cannot run here") or 2)
import torch.fx.experimental._config
from torch.export import Dim, export

print("torch", torch.__version__)
def f(v0, v1):
    v2 = torch.cat([v1, v1], 2)
    v3 = v0.shape[0]
    v4 = v0.shape[1]
    v5 = v3 * v4
    v6 = v0.shape[2]
    v7 = v0.reshape(v5, v6)
    return (v2, v7)
inputs = [torch.tensor([-1, 3, 1, 1, 1, -1, -2, 2, 0, -1, -2, -1, -1, 3, -3, 0, -2, -1, 3, 1, -1, -2, -2, -2, -2, -1, 3, 0, 1, -2, -1, 2, 2, 2, -2, -2, 0, -3, 2, 3, 2, -2, -1, 2, -2, -2, 2, -3, 0, 2, 1, -3, 1, 3, 1, 0, 2, -1, 0, -1, 3, 1, 1, 0, 2, -2, 0, 2, 3, 0, 0, 0, 1, 2, 0, -2, -2, -3, 3, -2, -1, -3, -3, 3, -1, -1, -1, 1, 1, -3, -1, 3, -2, 1, 0, 3], dtype=torch.float32).reshape((4, 6, 4)),  # x0: static, dynamic, unbacked
          torch.tensor([], dtype=torch.bool).reshape((1, 6, 0))]  # x1: dynamic, unbacked, static
torch.fx.experimental._config.inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY = True
M = type("M", (torch.nn.Module,), {"forward": staticmethod(f)})
print("expected (eager):", [getattr(v, "shape", v) for v in f(*inputs)])
try:
    export(M(), tuple(inputs), dynamic_shapes=({1: Dim.DYNAMIC, 2: Dim.DYNAMIC}, {1: Dim.DYNAMIC}))
except Exception as e:
    print(f"BUG: got {type(e).__name__}: {e}")
    sys.exit(1)
print("OK: the program traces, as eager runs it")
