"""make_fx raised RuntimeError where eager succeeds
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system make_fx, config backed-size-oblivious; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
import torch.fx.experimental._config
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

print("torch", torch.__version__)
def f(v0, v1):
    v2 = torch.add(v0, v1)
    return (v2,)
inputs = [torch.tensor([0, 0], dtype=torch.float32).reshape((2,)),  # x0: static
          torch.tensor([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], dtype=torch.float32).reshape((3, 4, 1))]  # x1: static, static, dynamic
torch.fx.experimental._config.backed_size_oblivious = True
shape_env = ShapeEnv()
dynamic_sizes = [[DimDynamic.STATIC], [DimDynamic.STATIC, DimDynamic.STATIC, DimDynamic.DUCK]]  # how each input dim is traced
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
