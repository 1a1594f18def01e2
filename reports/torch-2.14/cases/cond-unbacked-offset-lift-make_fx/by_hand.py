"""torch.cond on a view whose storage offset is unbacked, traced by make_fx (new in 2.14.1?)."""
import sys
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic as D, ShapeEnv, StatelessSymbolicContext

def run(name, view, dims):
    def f(x):
        v = view(x)
        return torch.cond(v.shape[0] > 0, lambda t: (t * 2).contiguous(), lambda t: (t + 1).contiguous(), (v,))
    x = torch.ones(6, 1)
    se = ShapeEnv(); mode = FakeTensorMode(shape_env=se)
    fx = mode.from_tensor(x, symbolic_context=StatelessSymbolicContext(dims))
    se.pending_fresh_unbacked_symbols.clear()
    try:
        make_fx(f, tracing_mode="symbolic")(fx)
        print(f"{name}: traces"); return True
    except Exception as e:
        print(f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:150]}"); return False

CASES = [("x[-1], both dims unbacked", lambda x: x[-1], [D.UNBACKED, D.UNBACKED]),
      ("x[0], both dims unbacked", lambda x: x[0], [D.UNBACKED, D.UNBACKED]),
      ("x[1], both dims unbacked", lambda x: x[1], [D.UNBACKED, D.UNBACKED]),
      ("x[-1], dim 0 unbacked", lambda x: x[-1], [D.UNBACKED, D.STATIC]),
      ("x[-1], dims backed", lambda x: x[-1], [D.DYNAMIC, D.DYNAMIC]),
      ("x[1:], both dims unbacked", lambda x: x[1:], [D.UNBACKED, D.UNBACKED])]
if len(sys.argv) > 1:  # one case per process: cond's internal compile keeps Dynamo state
    sys.exit(0 if run(*CASES[int(sys.argv[1])]) else 1)
import subprocess
print("torch", torch.__version__)
rcs = [subprocess.run([sys.executable, __file__, str(k)]).returncode for k in range(len(CASES))]
sys.exit(0 if not any(rcs) else 1)
