"""compile disagrees with eager on the traced inputs (error-where-eager-succeeds)
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system compile, config inductor; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch

print("torch", torch.__version__)
def f(v0, v1):
    v2 = (v1 <= 0)
    v3 = v1[v2]
    v4 = torch.add(v0, v3)
    return (v4,)
calls = [[torch.tensor([2, 0], dtype=torch.float32).reshape((2,)), torch.tensor([-2, 2], dtype=torch.int64).reshape((2,))]]  # the one call, which shows the finding
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
refs = [f]  # eager
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
