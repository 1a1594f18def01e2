"""export (default) and export (strict) disagree on the outcome: ok vs constraint
oracle frontend-differential: front-ends that declare the same dims dynamic must reach the same outcome (ok, data-dependent error, constraint violation).
system export, config strict; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
from torch.export import Dim, export
from torch.fx.experimental.symbolic_shapes import ConstraintViolationError, GuardOnDataDependentSymNode

print("torch", torch.__version__)
def f(v0, v1):
    v2 = v0.shape[0]
    v3 = int(v2 != -1)
    return (v3,)
inputs = [torch.tensor([], dtype=torch.float32).reshape((0,)),  # x0: static
          torch.tensor([], dtype=torch.float32).reshape((1, 0, 2))]  # x1: static, static, dynamic
dynamic_shapes = (None, {2: Dim.DYNAMIC})  # export: Dim.DYNAMIC on the dims traced dynamic
class M(torch.nn.Module):
    forward = staticmethod(f)
def export_default():
    export(M(), tuple(inputs), dynamic_shapes=dynamic_shapes)
def export_strict():
    export(M(), tuple(inputs), dynamic_shapes=dynamic_shapes, strict=True)
def outcome(trace):
    """ok, dde (a data-dependent error), constraint (a constraint violation) or error; and the
    message. A runtime assert that refuses the input means the trace itself succeeded."""
    try:
        trace()
        return "ok", ""
    except Exception as e:
        msg, x, seen = f"{type(e).__name__}: {str(e).strip()[:300]}", e, set()
        while x is not None and id(x) not in seen:  # a DDE wrapped by Dynamo is a DDE
            seen.add(id(x))
            if isinstance(x, (GuardOnDataDependentSymNode, ConstraintViolationError)):
                return ("dde" if isinstance(x, GuardOnDataDependentSymNode) else "constraint"), msg
            x = x.__cause__ or x.__context__
        if "Constraints violated" in msg or "conflicts between user-specified ranges" in msg:
            return "constraint", msg
        return ("ok" if "Runtime assertion failed" in msg else "error"), msg
sides = [('export:default', export_default), ('export:strict', export_strict)]
got = []
for name, trace in sides:
    got.append(outcome(trace))
    print(f"{name}: {got[-1][0]} {got[-1][1]}")
if got[0][0] != got[1][0]:
    print("BUG: the two front-ends disagree on the outcome")
    sys.exit(1)
print("OK: the same outcome")
