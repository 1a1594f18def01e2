"""make_fx's symbolic shape of mul evaluates to [1], eager gives [0]
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system make_fx, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
try: import pkgutil; [pkgutil.resolve_name(name) for name in ('torch._subclasses.fake_tensor.FakeTensorMode', 'torch.fx.experimental.symbolic_shapes.ShapeEnv', 'torch.fx.experimental.symbolic_shapes.StatelessSymbolicContext', 'torch.fx.experimental.symbolic_shapes.DimDynamic.UNBACKED')]  # torch's private names used below: another torch version may have moved one
except (ImportError, AttributeError) as e: sys.exit(print(f"repro.py: this torch ({torch.__version__}) lacks a name it uses ({e}); the repro cannot run here") or 2)
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

print("torch", torch.__version__)
def f(v0):
    v1 = torch.ones(0,)
    v2 = torch.mul(v0, v1)
    v3, = torch.unbind(v0, 0)
    return (v2, v3)
inputs = [torch.tensor([0], dtype=torch.float32).reshape((1,))]  # x0: unbacked
shape_env = ShapeEnv()
dynamic_sizes = [[DimDynamic.UNBACKED]]  # how each input dim is traced
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
