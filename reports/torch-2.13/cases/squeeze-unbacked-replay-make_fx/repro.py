"""make_fx artifact passes its guards on a new input but disagrees with eager (wrong-shape)
oracle replay: when the traced artifact's guards accept a new input and no runtime assert fires, it must behave as eager on it.
new_inputs: replay input 0 (x0[0, 1, 6]): output 0: eager bool[0, 6, 1] [], traced bool[0, 1, 1] []
system make_fx, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext
from torch.fx.passes.runtime_assert import insert_deferred_runtime_asserts

print("torch", torch.__version__)
def f(v0):
    v1 = v0.squeeze(1)
    v2 = v1.shape[0]
    v3 = v1.shape[1]
    v4 = v1.view(v2, v3, 1)
    return (v4,)
inputs = [torch.tensor([], dtype=torch.bool).reshape((0, 1, 6))]  # x0: static, unbacked, static
new_inputs = [torch.tensor([], dtype=torch.bool).reshape((0, 1, 6))]  # x0: static, unbacked, static
shape_env = ShapeEnv()
dynamic_sizes = [[DimDynamic.STATIC, DimDynamic.UNBACKED, DimDynamic.STATIC]]  # how each input dim is traced
mode = FakeTensorMode(shape_env=shape_env)
fakes = [mode.from_tensor(t, symbolic_context=StatelessSymbolicContext(d))
         for t, d in zip(inputs, dynamic_sizes)]
shape_env.pending_fresh_unbacked_symbols.clear()  # unbacked input dims are bound by the inputs
gm = make_fx(f, tracing_mode="symbolic")(*fakes)
args = new_inputs  # a new input, its guards accept it
insert_deferred_runtime_asserts(gm, shape_env, "repro")
gm.recompile()
if not shape_env.evaluate_guards_for_args(fakes, args, ignore_static=False):
    print("OK: the guards reject the new input")
    sys.exit(0)
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
