"""export raised AssertionError where eager succeeds
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system export, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
try: import pkgutil; [pkgutil.resolve_name(name) for name in ('torch.fx.experimental._config.inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY',)]  # torch's private names used below: another torch version may have moved one
except (ImportError, AttributeError) as e: sys.exit(print(f"repro.py: this torch ({torch.__version__}) lacks a name it uses ({e}); the repro cannot run here") or 2)
import torch.fx.experimental._config
from torch.export import Dim, export

print("torch", torch.__version__)
def f(v0):
    v1 = v0.shape[0]
    torch._check(v1 != 3)
    return ()
inputs = [torch.tensor([], dtype=torch.int64).reshape((6, 0, 1))]  # x2: dynamic, static, dynamic
torch.fx.experimental._config.inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY = True
M = type("M", (torch.nn.Module,), {"forward": staticmethod(f)})
print("expected (eager):", [getattr(v, "shape", v) for v in f(*inputs)])
try:
    export(M(), tuple(inputs), dynamic_shapes=({0: Dim.DYNAMIC},))
except Exception as e:
    print(f"BUG: got {type(e).__name__}: {e}")
    sys.exit(1)
print("OK: the program traces, as eager runs it")
