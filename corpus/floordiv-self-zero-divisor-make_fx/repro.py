"""make_fx artifact passes its guards on a new input but disagrees with eager (accepts-invalid)
oracle replay: when the traced artifact's guards accept a new input and no runtime assert fires, it must behave as eager on it.
new_inputs: replay input 4 (x0[0]): eager raised ZeroDivisionError: integer division or modulo by zero; traced returned normally
system make_fx, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
try: import pkgutil; [pkgutil.resolve_name(name) for name in ('torch._subclasses.fake_tensor.FakeTensorMode', 'torch.fx.experimental.symbolic_shapes.ShapeEnv', 'torch.fx.experimental.symbolic_shapes.StatelessSymbolicContext', 'torch.fx.experimental.symbolic_shapes.guard_or_false', 'torch.fx.experimental.symbolic_shapes.DimDynamic.UNBACKED')]  # torch's private names used below: another torch version may have moved one
except (ImportError, AttributeError) as e: sys.exit(print(f"repro.py: this torch ({torch.__version__}) lacks a name it uses ({e}); the repro cannot run here") or 2)
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext, guard_or_false
from torch.fx.passes.runtime_assert import insert_deferred_runtime_asserts

print("torch", torch.__version__)
def f(v0):
    v1 = v0.shape[0]
    if guard_or_false(v1 < v1):
        v2 = 0
    else:
        v2 = v1 // v1
    torch._check_is_size(v1)
    v3 = torch.ones(v2,)
    return (v3,)
inputs = [torch.tensor([4, 2, 0], dtype=torch.int64).reshape((3,))]  # x0: unbacked
new_inputs = [torch.tensor([], dtype=torch.int64).reshape((0,))]  # x0: unbacked
shape_env = ShapeEnv()
dynamic_sizes = [[DimDynamic.UNBACKED]]  # how each input dim is traced
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
# the reference: eager, with the branches the trace sent to their fallback arm
def f_ref(v0):
    v1 = v0.shape[0]
    v2 = v1 // v1  # fallback arm, as traced
    torch._check_is_size(v1)
    v3 = torch.ones(v2,)
    return (v3,)
try:
    f_ref(*args)
    print("OK: eager runs the program")
    sys.exit(0)
except Exception as e:
    print(f"expected (eager): {type(e).__name__}: {e}")
try:
    print("BUG: got (traced): it returns normally:", gm(*args))
except Exception as e:
    print(f"OK: the traced artifact raises too: {type(e).__name__}: {e}")
    sys.exit(0)
sys.exit(1)
