"""By hand (no shapefuzz): non-strict export of torch.cond on x[:, :2] with x.shape[1] Dim.DYNAMIC (static
sizes, symbolic stride) raises InternalTorchDynamoError (TypeError: unhashable type: non-nested SymInt)
in _dynamo/variables/builder.py:record_automatic_dynamic; strict export works. Exits 1 while the bug is there."""
import sys, torch
from torch.export import export, Dim
class M(torch.nn.Module):
    def forward(self, x):
        v = x[:, :2]                # sizes static (3, 2), strides (s, 1) symbolic
        return torch.cond(v.sum() > 0, lambda t: t + 1, lambda t: t - 1, (v,))
x = torch.randn(3, 5)
print("eager:", M()(x).shape)
rc = 0
for strict in (False, True):
    try:
        export(M(), (x,), dynamic_shapes=({1: Dim.DYNAMIC},), strict=strict); print("strict", strict, "OK")
    except Exception as e:
        rc = 1; print("strict", strict, type(e).__name__, str(e).splitlines()[0])
sys.exit(rc)
