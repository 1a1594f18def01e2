"""export (default) and export (strict) disagree on the outcome: ok vs constraint
oracle frontend-differential: front-ends that declare the same dims dynamic must reach the same outcome (ok, data-dependent error, constraint violation).
signature: frontend-differential:outcome:export:default-vs-export:strict:ok-vs-constraint
system export, config strict; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
import torch._dynamo
from torch._dynamo.source import LocalSource
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.export import Dim, export
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

print("torch", torch.__version__)
def f(v0, v1):
    v2 = v0.shape[0]
    v3 = int(v2 != -1)
    return (v3,)

inputs = [
    torch.tensor([], dtype=torch.float32).reshape((0,)),  # x0: static
    torch.tensor([], dtype=torch.float32).reshape((1, 0, 2)),  # x1: static, static, dynamic
]
DIMS = [['static'], ['static', 'static', 'dynamic']]
SIDES = [('export', 'default'), ('export', 'strict')]


def outcome(e):
    """ok / dde / constraint / error, as shapefuzz classifies (a DDE wrapped in a UserError
    by Dynamo is a DDE)."""
    from torch.fx.experimental.symbolic_shapes import (
        ConstraintViolationError,
        GuardOnDataDependentSymNode,
    )
    x, seen = e, set()
    while x is not None and id(x) not in seen:
        seen.add(id(x))
        if isinstance(x, GuardOnDataDependentSymNode):
            return "dde"
        if isinstance(x, ConstraintViolationError):
            return "constraint"
        x = x.__cause__ or x.__context__
    msg = str(e)
    if "Constraints violated" in msg or "conflicts between user-specified ranges" in msg:
        return "constraint"
    if "Runtime assertion failed" in msg:
        return "ok"  # the trace succeeded; its assert refused the input
    return "error"


def run_make_fx(duck):
    from torch._dynamo.source import LocalSource
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext
    kinds = {"static": DimDynamic.STATIC, "dynamic": DimDynamic.DUCK, "unbacked": DimDynamic.UNBACKED}
    se = ShapeEnv(duck_shape=duck)
    mode = FakeTensorMode(shape_env=se)
    fakes = [mode.from_tensor(t, source=LocalSource(f"x{i}"), symbolic_context=StatelessSymbolicContext(
        dynamic_sizes=[kinds[k] for k in DIMS[i]], constraint_sizes=[None] * t.dim()))
        for i, t in enumerate(inputs)]
    se.pending_fresh_unbacked_symbols.clear()
    make_fx(f, tracing_mode="symbolic")(*fakes)


def run_export(strict):
    from torch.export import Dim, export

    class M(torch.nn.Module):
        def forward(self, *xs):
            return f(*xs)

    specs = tuple({d: Dim.DYNAMIC for d, (k, n) in enumerate(zip(DIMS[i], t.shape))
                   if k != "static" and n >= 2} or None for i, t in enumerate(inputs))
    export(M(), tuple(inputs), dynamic_shapes=(specs,), strict=strict)


def run_compile_marked():
    torch._dynamo.reset()
    args = [t.clone() for t in inputs]
    for t, dims in zip(args, DIMS):
        for d, k in enumerate(dims):
            if k != "static" and t.shape[d] >= 2:
                torch._dynamo.mark_dynamic(t, d)
    torch.compile(f, backend="eager", fullgraph=True)(*args)


RUNNERS = {("make_fx", "default"): lambda: run_make_fx(True),
           ("make_fx", "no-duck-shape"): lambda: run_make_fx(False),
           ("export", "default"): lambda: run_export(False),
           ("export", "strict"): lambda: run_export(True),
           ("compile", "mark-dynamic"): run_compile_marked}


def main():
    got = []
    for side in SIDES:
        try:
            RUNNERS[side]()
            got.append(("ok", ""))
        except Exception as e:
            got.append((outcome(e), f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"))
        print(f"{side[0]}:{side[1]}: {got[-1][0]} {got[-1][1][:200]}")
    if got[0][0] != got[1][0]:
        print("BUG: the two front-ends disagree on the outcome")
        return 1
    print("OK: same outcome")
    return 0


if __name__ == "__main__":
    sys.exit(main())
