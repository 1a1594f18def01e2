"""make_fx raised AssertionError where eager succeeds
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system make_fx, config default; found with torch 2.14.1+cu130. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

print("torch", torch.__version__)
def f(v0):
    v1 = v0[-1]
    v2 = v1.shape[0]
    v3 = torch.cond(v2 > 0, lambda t: (t * 2).contiguous(), lambda t: (t + 1).contiguous(), (v1,))
    return (v3,)
inputs = [torch.tensor([2, -1, -3, 0, -3, 2], dtype=torch.float32).reshape((6, 1))]  # x1: unbacked, unbacked
shape_env = ShapeEnv()
dynamic_sizes = [[DimDynamic.UNBACKED, DimDynamic.UNBACKED]]  # how each input dim is traced
mode = FakeTensorMode(shape_env=shape_env)
fakes = [mode.from_tensor(t, symbolic_context=StatelessSymbolicContext(d))
         for t, d in zip(inputs, dynamic_sizes)]
shape_env.pending_fresh_unbacked_symbols.clear()  # unbacked input dims are bound by the inputs
print("expected (eager):", [getattr(v, "shape", v) for v in f(*inputs)])
try:
    make_fx(f, tracing_mode="symbolic")(*fakes)
except Exception as e:
    print(f"BUG: got {type(e).__name__}: {e}")
    sys.exit(1)
print("OK: the program traces, as eager runs it")
