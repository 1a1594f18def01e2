"""export raised AssertionError where eager succeeds
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system export, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
from torch.export import Dim, export

print("torch", torch.__version__)
def f(v0, v1):
    v2 = v1.sum().item()
    torch._check(v2 < 3)
    v3 = torch.arange(v2)
    v4 = torch.add(v3, v0)
    return (v4,)
inputs = [torch.tensor([0, 0, 0, 0, 1, 0], dtype=torch.float32).reshape((6,)),  # x0: unbacked
          torch.tensor([True], dtype=torch.bool).reshape((1,))]  # x2: static
M = type("M", (torch.nn.Module,), {"forward": staticmethod(f)})
print("expected (eager):", [getattr(v, "shape", v) for v in f(*inputs)])
try:
    export(M(), tuple(inputs), dynamic_shapes=({0: Dim.DYNAMIC}, None))
except Exception as e:
    print(f"BUG: got {type(e).__name__}: {e}")
    sys.exit(1)
print("OK: the program traces, as eager runs it")
