"""make_fx raised AssertionError where eager succeeds
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system make_fx, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import pkgutil
import sys
import torch
try:  # torch's private names used below: another torch version may have moved one
    for name in ('torch._subclasses.fake_tensor.FakeTensorMode', 'torch.fx.experimental.symbolic_shapes.ShapeEnv', 'torch.fx.experimental.symbolic_shapes.StatelessSymbolicContext', 'torch.fx.experimental.symbolic_shapes.DimDynamic.DUCK', 'torch.fx.experimental.symbolic_shapes.DimDynamic.UNBACKED'): pkgutil.resolve_name(name)
except (ImportError, AttributeError):
    sys.exit(print(f"repro.py: this torch ({torch.__version__}) has no {name}; the repro cannot run here") or 2)
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

print("torch", torch.__version__)
def f(v0):
    v1 = v0.shape[0]
    v2 = (v0 != -1)
    v3 = torch.where(v2, v0, v1 <= 4)
    v4 = v3.transpose(0, 1)
    v5 = torch.cond(v1 > 6, lambda t: (t * 2).contiguous(), lambda t: (t + 1).contiguous(), (v4,))
    return (v5,)
inputs = [torch.tensor([4, -1, 2, -2, -2, -1, 5, 1, 2, -2, 5, 5, 0, -2, 6, 3, 5, 6, 0, -2, 6, 0, 4, 0, 3], dtype=torch.int64).reshape((5, 5))]  # x0: dynamic, unbacked
shape_env = ShapeEnv()
dynamic_sizes = [[DimDynamic.DUCK, DimDynamic.UNBACKED]]  # how each input dim is traced
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
