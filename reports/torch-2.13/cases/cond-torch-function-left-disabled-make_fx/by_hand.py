"""torch.cond traced by make_fx: a data-dependent error while Dynamo builds the guards of cond's
internal compile (torch/_dynamo/convert_frame.py -> guards.py) leaves torch-function dispatch
disabled for the rest of the process (torch._C._is_torch_function_enabled() True -> False), so
every later trace in the process takes other paths. Found by shapefuzz's state guard (campaign G1,
seed 215, 5 jobs). Exit 1 while the state is left changed, 0 once it is restored."""
import sys

import torch
from torch._dynamo.source import LocalSource
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic as D, ShapeEnv, StatelessSymbolicContext

def f(v0, v1):
    v2 = v1.sum().item()
    v3 = v2 + 1
    v4 = v3 // 2
    v5 = v3 - v4
    v6 = v0.shape[1]
    v7 = v6 // 2
    v8 = 2 * v7
    v9 = torch.full((v4, v5), v8)
    v10 = v1.shape[0]
    v11 = v10 - v10
    v12, v13 = torch.split(v1, [v10, v11], 0)
    v14 = v9.shape[0]
    v15 = torch.cond(v14 >= 0, lambda t: (t.flip(0)).contiguous(), lambda t: (t.clone()).contiguous(), (v9,))
    return (v12, v13, v15)

se = ShapeEnv(); mode = FakeTensorMode(shape_env=se)
def fake(t, dims, name):
    return mode.from_tensor(t, symbolic_context=StatelessSymbolicContext(dynamic_sizes=dims, constraint_sizes=[None]*t.dim()), source=LocalSource(name))
x0 = fake(torch.zeros(0, 0, 4, dtype=torch.bool), [D.STATIC, D.UNBACKED, D.STATIC], "x0")
x1 = fake(torch.zeros(6, dtype=torch.bool), [D.STATIC], "x1")
se.pending_fresh_unbacked_symbols.clear()
print("before:", torch._C._is_torch_function_enabled())
try:
    make_fx(f, tracing_mode="symbolic")(x0, x1)
except Exception as e:
    print(type(e).__name__, str(e).splitlines()[0][:120])
after = torch._C._is_torch_function_enabled()
print("after:", after, "(expected True)")
sys.exit(0 if after else 1)
