"""Row 26 by hand: broadcasting an unbacked size whose range is [0, 1] against a static size.

torch.nonzero of a 1-element mask has u0 rows, u0 in [0, 1] (size-like). Eager: (3, 4) + (1, 1)
broadcasts. _subclasses/fake_impls.py:infer_size asks guard_or_false(u0 == 1), False for an
unbacked size (its comment: "we will unsoundly assume they never equal 1"), then
torch._check(3 == u0), which u0 <= 1 makes statically False: the trace raises although every
value torch allows for u0 other than 1 is one on which eager raises too.
Exits 1 while export raises."""
import sys
import torch
from torch.export import export
from torch.fx.experimental.proxy_tensor import make_fx

print("torch", torch.__version__)


class M(torch.nn.Module):
    def forward(self, x, m):
        return x + torch.nonzero(m)


class Checked(torch.nn.Module):  # the same with the size stated: traces
    def forward(self, x, m):
        n = torch.nonzero(m)
        torch._check(n.shape[0] == 1)
        return x + n


x, m = torch.zeros(3, 4), torch.tensor([True])
print("eager:", M()(x, m).shape)
ep = export(Checked(), (x, m))
print("with torch._check(n.shape[0] == 1): export traces, output", ep.module()(x, m).shape)
try:
    make_fx(M(), tracing_mode="symbolic")(x, m)
    print("make_fx (symbolic): traces")
except Exception as e:
    print(f"make_fx (symbolic): {type(e).__name__}: {e}")
try:
    export(M(), (x, m))
except Exception as e:
    print(f"BUG: export raised {type(e).__name__}: {str(e).splitlines()[0]}")
    sys.exit(1)
print("OK: export traces what eager runs")
