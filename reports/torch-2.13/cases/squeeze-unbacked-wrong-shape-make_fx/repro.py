"""make_fx disagrees with eager on the traced inputs (wrong-shape)
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system make_fx, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
from torch._dynamo.source import LocalSource
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

print("torch", torch.__version__)
def f(v0):
    v1 = v0.squeeze(1)
    v2 = v1.shape[0]
    v3 = v1.shape[1]
    v4 = v1.view(v2, v3, 1)
    return (v4,)
inputs = [torch.tensor([], dtype=torch.bool).reshape((0, 1, 6))]  # x0: static, unbacked, static
shape_env = ShapeEnv()
dynamic_sizes = [[DimDynamic.STATIC, DimDynamic.UNBACKED, DimDynamic.STATIC]]  # how each input dim is traced
mode = FakeTensorMode(shape_env=shape_env)
fakes = [mode.from_tensor(t, symbolic_context=StatelessSymbolicContext(d))
         for t, d in zip(inputs, dynamic_sizes)]
shape_env.pending_fresh_unbacked_symbols.clear()  # unbacked input dims are bound by the inputs
gm = make_fx(f, tracing_mode="symbolic")(*fakes)
args = inputs  # checked on the inputs it was traced with
unbacked = ["L['t0'].size()[1]"]  # the unbacked input dims, as the guards name them
sources = [LocalSource(f"t{i}") for i in range(len(fakes))]
guards = shape_env.produce_guards(fakes, sources, ignore_static=False)
bad = [g for g in guards if not shape_env.evaluate_guards_expression(g, args)]
if bad and not any(u in g for g in bad for u in unbacked):
    print("BUG: the trace's own guards reject the inputs it was traced with:", bad)
    sys.exit(1)
f_ref = f  # the reference: eager (no branch was sent to its fallback arm)
expected = f_ref(*args)
print("expected (eager):", expected)
try:
    got = gm(*args)
except Exception as e:  # an assert or guard that rejects the input: outside the contract
    rejected = str(e).startswith(("Runtime assertion failed", "Guard failed"))
    print(f"{'OK: the trace rejects the input' if rejected else 'BUG: got'} {type(e).__name__}: {e}")
    sys.exit(0 if rejected else 1)
print("got (traced):", got)
try:
    torch.testing.assert_close(tuple(got), tuple(expected), rtol=1e-5, atol=1e-5, equal_nan=True)
except AssertionError as e:
    print("BUG: traced and eager outputs differ:", e)
    sys.exit(1)
print("OK: traced and eager agree")
