"""export raised AssertionError where eager succeeds
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system export, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
from torch.export import export

print("torch", torch.__version__)
def f(v0):
    v1, v2, v3 = torch.chunk(v0, 3, 0)
    v4 = v3.shape[0]
    v5 = v3.shape[1]
    v6 = v3.shape[2]
    v7 = v3.view(v4, v5, v6, 1)
    v8 = v0.sum().item()
    v9 = torch.sym_min(v6, v8)
    v10 = v0.narrow(0, v9, 0)
    return (v1, v2, v7, v10)
inputs = [torch.tensor([], dtype=torch.int64).reshape((0, 5, 3))]  # x0: static, static, static
M = type("M", (torch.nn.Module,), {"forward": staticmethod(f)})
print("expected (eager):", [getattr(v, "shape", v) for v in f(*inputs)])
try:
    export(M(), tuple(inputs))
except Exception as e:
    print(f"BUG: got {type(e).__name__}: {e}")
    sys.exit(1)
print("OK: the program traces, as eager runs it")
