"""By hand (no shapefuzz): strict export of a forward with no tensor operation reports a Dim.DYNAMIC dim of
an input as specialized (ValueError: ... tracing inferred a static shape); non-strict export, and strict
export of a forward with a tensor op, succeed. Exits 1 while the bug is there."""
import sys, torch
from torch.export import export, Dim
bodies = {
  "return (1,)": lambda x, y: (1,),
  "return (x.shape[0],)": lambda x, y: (x.shape[0],),
  "return (x + 1,)": lambda x, y: (x + 1,),
  "return (y.shape[1],)": lambda x, y: (y.shape[1],),
}
rc = 0
for name, body in bodies.items():
    class M(torch.nn.Module):
        forward = staticmethod(body)
    for strict in (False, True):
        x, y = torch.randn(3), torch.randn(3, 4)
        try:
            export(M(), (x, y), dynamic_shapes=(None, {1: Dim.DYNAMIC}), strict=strict)
            print(f"{name:24s} strict={strict}: OK")
        except Exception as e:
            rc = 1; print(f"{name:24s} strict={strict}:", type(e).__name__, str(e).splitlines()[1][:140])
sys.exit(rc)
