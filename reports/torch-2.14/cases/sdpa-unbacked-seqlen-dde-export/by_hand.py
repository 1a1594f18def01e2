"""causal SDPA traced by make_fx with unbacked sizes: 2.13.0 traces (deferring a check), 2.14.1
raises a data-dependent error on Eq(L, 0)?"""
import sys, traceback
import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic as D, ShapeEnv, StatelessSymbolicContext, GuardOnDataDependentSymNode

def run(shape, dims, causal=True):
    se = ShapeEnv(); mode = FakeTensorMode(shape_env=se)
    x = mode.from_tensor(torch.zeros(shape), symbolic_context=StatelessSymbolicContext(dims))
    se.pending_fresh_unbacked_symbols.clear()
    try:
        make_fx(lambda q: F.scaled_dot_product_attention(q, q, q, is_causal=causal), tracing_mode="symbolic")(x)
        return "traces"
    except GuardOnDataDependentSymNode as e:
        fr = [f for f in traceback.extract_tb(e.__traceback__) if "torch" in f.filename][-8:]
        where = " <- ".join(f"{f.filename.split('torch/')[-1]}:{f.name}" for f in reversed(fr) if "symbolic_shapes" not in f.filename and "sym_node" not in f.filename)[:300]
        return f"DDE {str(e).splitlines()[0][:70]} at {where}"
    except Exception as e:
        return f"{type(e).__name__}: {str(e)[:100]}"

print("torch", torch.__version__)
U = D.UNBACKED
for shape in [(0, 1, 1), (2, 3, 4)]:
    for dims in [[U, U, U], [D.STATIC, U, D.STATIC], [D.STATIC, D.STATIC, U]]:
        for causal in (True, False):
            print(shape, [str(d).split(".")[-1] for d in dims], "causal" if causal else "plain", run(shape, dims, causal))
