"""By hand (no shapefuzz): non-strict export of torch.cond on x.select(0, u) (static sizes, unbacked
storage offset) raises InternalTorchDynamoError (TypeError: '<' not supported between NoneType and
int) in ShapeEnv.transfer_symbols_from_foreign_shape_env; strict export works. Exits 1 while the bug is there."""
import sys, torch
from torch.export import export
class M(torch.nn.Module):
    def forward(self, x, i):
        u = i.item()
        v = x.select(0, u)          # sizes static (4,), storage offset 4*u unbacked
        return torch.cond(v.sum() > 0, lambda t: t + 1, lambda t: t - 1, (v,))
x, i = torch.randn(3, 4), torch.tensor(1)
print("eager:", M()(x, i).shape)
rc = 0
for strict in (False, True):
    try:
        export(M(), (x, i), strict=strict); print("strict", strict, "OK")
    except Exception as e:
        rc = 1; print("strict", strict, type(e).__name__, str(e).splitlines()[0])
sys.exit(rc)
