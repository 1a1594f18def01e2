"""By hand: the broadcast of an unbacked size against 2 makes torch assume it is 2 (a deferred
runtime assert Eq(u0, 2) and the replacement u0 = 2); AOTAutograd's retrace of Dynamo's graph
then evaluates that assert with the replacement in place, so it becomes _assert_scalar(True) and
the index output has the static size 2. aot_eager returns eager's broadcast result where the
assert should have rejected the input; Inductor plans a size-2 buffer and its own size check
raises. A torch that kept the assert raises "Runtime assertion failed for expression Eq(u0, 2)"
on both backends. Exits 1 while either backend runs past the assumption."""
import sys

import torch

torch._dynamo.config.capture_dynamic_output_shape_ops = True


def f(v0, v1):
    return v0 + v1[v1 <= 0]  # one element selected: (2,) + (1,) broadcasts in eager


v0, v1 = torch.tensor([2.0, 0.0]), torch.tensor([-2, 2])
print("eager:", f(v0, v1))
bad = False
for backend in ("aot_eager", "inductor"):
    torch._dynamo.reset()
    try:
        out = torch.compile(f, backend=backend, fullgraph=True)(v0, v1)
        print(f"{backend}: returned {out} (the assumed u0 == 2 was not checked)")
        bad = True
    except Exception as e:
        msg = str(e).splitlines()[0]
        print(f"{backend}: {type(e).__name__}: {msg}")
        bad |= "Runtime assertion failed" not in msg
sys.exit(1 if bad else 0)
