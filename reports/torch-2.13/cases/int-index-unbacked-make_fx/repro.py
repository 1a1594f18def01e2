"""make_fx raised IndexError where eager succeeds
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system make_fx, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
from torch.fx.experimental.proxy_tensor import make_fx

print("torch", torch.__version__)
def f(v0):
    v1 = v0.sum().item()
    v2 = v0[v1]
    return (v2,)
inputs = [torch.tensor([False, False], dtype=torch.bool).reshape((2,))]  # x0: static
print("expected (eager):", [getattr(v, "shape", v) for v in f(*inputs)])
try:
    make_fx(f, tracing_mode="fake")(*inputs)
except Exception as e:
    print(f"BUG: got {type(e).__name__}: {e}")
    sys.exit(1)
print("OK: the program traces, as eager runs it")
