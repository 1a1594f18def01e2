"""compile disagrees with eager on the traced inputs (error-where-eager-succeeds)
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system compile, config inductor; found with torch 2.14.1+cu130. Exits 1 while the bug is there, 0 once it is fixed."""
import pkgutil
import sys
import torch
try:  # torch's private names used below: another torch version may have moved one
    for name in ('torch.fx.experimental.symbolic_shapes.guard_or_false',): pkgutil.resolve_name(name)
except (ImportError, AttributeError):
    sys.exit(print(f"repro.py: this torch ({torch.__version__}) has no {name}; the repro cannot run here") or 2)
from torch.fx.experimental.symbolic_shapes import guard_or_false

print("torch", torch.__version__)
def f(v0):
    v1 = v0.shape[0]
    v2 = v0.view(v1, 1)
    v3 = v2.transpose(0, 0)
    v4 = v3[v3]
    v5 = torch.flip(v4, (0,))
    if guard_or_false(3 == v5.shape[0]):
        v6 = v5
    else:
        v6 = v5.narrow(0, 0, 3)
    v7 = v2.transpose(0, 0)
    v8 = torch.nonzero(v7)
    return (v6, v8)
def f_general1(v0):
    v1 = v0.shape[0]
    v2 = v0.view(v1, 1)
    v3 = v2.transpose(0, 0)
    v4 = v3[v3]
    v5 = torch.flip(v4, (0,))
    v6 = v5.narrow(0, 0, 3)  # fallback arm, as traced
    v7 = v2.transpose(0, 0)
    v8 = torch.nonzero(v7)
    return (v6, v8)
calls = [[torch.tensor([True, True, True, True, True, True], dtype=torch.bool).reshape((6,))]]  # the one call, which shows the finding
cf = torch.compile(f, backend='inductor', fullgraph=True)
call, args = 0, calls[0]
undefined = set()  # outputs of torch.empty: only shape and dtype count
def outcome(fn, args):
    try:
        return tuple(torch.zeros_like(v) if k in undefined else v for k, v in enumerate(fn(*args)))
    except Exception as e:
        return f"{type(e).__name__}: {e}"
def agree(want, got):
    if isinstance(want, str) or isinstance(got, str):
        return isinstance(want, str) and isinstance(got, str)
    try:
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)
    except AssertionError as e:
        print("outputs differ:", e)
        return False
    return True
refs = [f, f_general1]  # eager
expected = [outcome(r, args) for r in refs]
got = outcome(cf, args)
print("expected (eager):", expected[0])
print("got (compiled):", got)
if isinstance(got, str) and "Runtime assertion failed" in got:
    print("OK: a runtime assert rejects the input")
    sys.exit(0)
if not any(agree(want, got) for want in expected):
    print("BUG: the compiled function disagrees with eager")
    sys.exit(1)
print("OK: compiled and eager agree")
