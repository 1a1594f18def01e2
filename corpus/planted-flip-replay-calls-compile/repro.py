"""compile artifact passes its guards on a new input but disagrees with eager (error-where-eager-succeeds)
oracle replay: when the traced artifact's guards accept a new input and no runtime assert fires, it must behave as eager on it.
system compile, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
try: import pkgutil; [pkgutil.resolve_name(name) for name in ('torch.fx.experimental._config.inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY',)]  # torch's private names used below: another torch version may have moved one
except (ImportError, AttributeError) as e: sys.exit(print(f"repro.py: this torch ({torch.__version__}) lacks a name it uses ({e}); the repro cannot run here") or 2)
import torch.fx.experimental._config

print("torch", torch.__version__)
def f(v0):
    v1 = v0.shape[0]
    v2 = v1 // 2
    v3 = torch.ones(v2, 0)
    v4 = torch.add(v3, v3)
    return (v4,)
calls = [  # the call sequence; its last call shows the finding
    [torch.tensor([False, False], dtype=torch.bool).reshape((2,))],
    [torch.tensor([False, False, False, False, False], dtype=torch.bool).reshape((5,))],
]
torch.fx.experimental._config.inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY = True
cf = torch.compile(f, backend='eager', fullgraph=True)
for call, args in enumerate(calls[:-1]):
    try:
        cf(*args)
    except Exception as e:
        print(f"(call {call} raised {type(e).__name__}: {str(e)[:200]})")
call, args = len(calls) - 1, calls[-1]
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
