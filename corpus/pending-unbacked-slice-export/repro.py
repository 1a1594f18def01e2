"""export raised PendingUnbackedSymbolNotFound where eager succeeds
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system export, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
from torch.export import export

print("torch", torch.__version__)
def f(v0):
    v1 = v0.sum().item()
    v2 = v1 // 2
    v3 = v0[:, v2:]
    return (v3,)
inputs = [torch.tensor([], dtype=torch.bool).reshape((2, 0))]  # x1: static, static
M = type("M", (torch.nn.Module,), {"forward": staticmethod(f)})
print("expected (eager):", [getattr(v, "shape", v) for v in f(*inputs)])
try:
    export(M(), tuple(inputs))
except Exception as e:
    print(f"BUG: got {type(e).__name__}: {e}")
    sys.exit(1)
print("OK: the program traces, as eager runs it")
