"""torch.export of scaled_dot_product_attention on a query whose sequence length comes from
item() raises a data-dependent error on Eq(u1, 0) in torch 2.14.1; torch 2.13.0 exports it.
Found by shapefuzz's A/B campaign of 2.14.1 against 2.13.0 (ab:lost-precision, make_fx, causal
SDPA on unbacked dims); written by hand in the issue form. Exits 1 while the bug is there."""
import sys

import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, x, n):
        k = n.item()
        torch._check(k <= x.shape[1])
        q = x[:, :k]  # (2, u0, 4): an unbacked sequence length
        return F.scaled_dot_product_attention(q, q, q)


x, n = torch.randn(2, 5, 4), torch.tensor(3)
print("torch", torch.__version__)
print("expected (eager):", tuple(M()(x, n).shape))
try:
    ep = torch.export.export(M(), (x, n))
except Exception as e:
    print(f"BUG: got {type(e).__name__}: {str(e).splitlines()[0]}")
    sys.exit(1)
print("OK: exported;", tuple(ep.module()(x, n).shape))
