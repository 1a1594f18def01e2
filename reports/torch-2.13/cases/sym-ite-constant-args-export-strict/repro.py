"""export raised Unsupported where eager succeeds
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system export, config strict; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
from torch.export import export

print("torch", torch.__version__)
def f(v0):
    v1 = v0.shape[0]
    v2 = v0.shape[0]
    v3 = v2 // 2
    v4 = v1 - v3
    v5, v6 = torch.split(v0, [v3, v4], 0)
    v7 = v6.shape[0]
    v8 = torch.sym_ite((v7 != 0), 0, 0)
    return (v8,)
inputs = [torch.tensor([True, False, False, False], dtype=torch.bool).reshape((2, 2))]  # x0: static, static
class M(torch.nn.Module):
    forward = staticmethod(f)
print("expected (eager):", [getattr(v, "shape", v) for v in f(*inputs)])
try:
    export(M(), tuple(inputs), strict=True)
except Exception as e:
    print(f"BUG: got {type(e).__name__}: {e}")
    sys.exit(1)
print("OK: the program traces, as eager runs it")
