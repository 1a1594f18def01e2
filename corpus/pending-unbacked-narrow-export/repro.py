"""export raised PendingUnbackedSymbolNotFound where eager succeeds
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system export, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
from torch.export import export

print("torch", torch.__version__)
def f(v0):
    v1 = v0.sum().item()
    v2 = v1 + 1
    v3 = v2 // 2
    v4 = v1 - v3
    v5 = v0.narrow(1, v3, v4)
    return (v5,)
inputs = [torch.tensor([], dtype=torch.int64).reshape((2, 0))]  # x0: static, static
M = type("M", (torch.nn.Module,), {"forward": staticmethod(f)})
print("expected (eager):", [getattr(v, "shape", v) for v in f(*inputs)])
try:
    export(M(), tuple(inputs))
except Exception as e:
    print(f"BUG: got {type(e).__name__}: {e}")
    sys.exit(1)
print("OK: the program traces, as eager runs it")
