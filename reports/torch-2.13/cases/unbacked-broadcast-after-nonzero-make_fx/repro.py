"""make_fx raised RuntimeError where eager succeeds
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system make_fx, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
from torch.fx.experimental.proxy_tensor import make_fx

print("torch", torch.__version__)
def f(v0):
    v1 = v0.shape[0]
    v2 = torch.arange(v1)
    v3 = (v2 < 1)
    v4 = torch.nonzero(v3)
    v5 = v4.select(1, 0)
    v6 = v0.index_select(0, v5)
    v7 = torch.add(v4, v0)
    v8 = torch.add(v6, v0)
    return (v7, v8)
inputs = [torch.tensor([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 2, 1, 0], dtype=torch.float32).reshape((4, 2, 3))]  # x0: static, static, static
print("expected (eager):", [getattr(v, "shape", v) for v in f(*inputs)])
try:
    make_fx(f, tracing_mode="fake")(*inputs)
except Exception as e:
    print(f"BUG: got {type(e).__name__}: {e}")
    sys.exit(1)
print("OK: the program traces, as eager runs it")
