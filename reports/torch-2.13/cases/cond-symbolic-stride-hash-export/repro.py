"""export raised InternalTorchDynamoError where eager succeeds
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system export, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
from torch.export import Dim, export

print("torch", torch.__version__)
def f(v0, v1):
    v2 = v0.shape[0]
    v3 = v2 // 2
    v4 = v1.narrow(2, v3, 0)
    v5 = v0.sum().item()
    v6 = torch.cond(v5 < -1, lambda t: (t.flip(0)).contiguous(), lambda t: (t.clone()).contiguous(), (v4,))
    return (v6,)
inputs = [torch.tensor([False, False], dtype=torch.bool).reshape((2,)),  # x0: static
          torch.tensor([0, 0, 0, 0], dtype=torch.float32).reshape((1, 1, 4))]  # x1: static, static, dynamic
class M(torch.nn.Module):
    forward = staticmethod(f)
print("expected (eager):", [getattr(v, "shape", v) for v in f(*inputs)])
try:
    export(M(), tuple(inputs), dynamic_shapes=(None, {2: Dim.DYNAMIC}))
except Exception as e:
    print(f"BUG: got {type(e).__name__}: {e}")
    sys.exit(1)
print("OK: the program traces, as eager runs it")
