"""make_fx raised RuntimeError where eager succeeds
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system make_fx, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

print("torch", torch.__version__)
def f(v0, v1):
    v2 = v1.shape[0]
    v3 = v1.shape[1]
    v4 = v2 * v3
    v5 = v1.shape[2]
    v6 = v1.view(v4, v5)
    v7 = v6.select(1, 0)
    v8 = torch.add(v0, v7)
    v9 = torch.add(v1, v0)
    return (v8, v9)
inputs = [torch.tensor([], dtype=torch.float32).reshape((0, 5, 5)),  # x0: static, static, static
          torch.tensor([0, 0, 0, 0, 0], dtype=torch.float32).reshape((1, 5, 1))]  # x1: unbacked, static, static
shape_env = ShapeEnv()
dynamic_sizes = [[DimDynamic.STATIC, DimDynamic.STATIC, DimDynamic.STATIC], [DimDynamic.UNBACKED, DimDynamic.STATIC, DimDynamic.STATIC]]  # how each input dim is traced
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
