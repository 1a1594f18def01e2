"""By hand (no shapefuzz): CPU eager accepts x.repeat(-1) on an empty tensor, the meta kernel
(_meta_registrations.py:meta_repeat) rejects it, so torch.compile fails where eager runs. Exits 1 while
meta and eager disagree."""
import sys, torch
x = torch.zeros(0)
print("cpu eager:", x.repeat(-1).shape, torch.zeros(0, 2).repeat(-1, 1).shape)
try:
    torch.zeros(2).repeat(-1)
except RuntimeError as e:
    print("cpu, non-empty:", str(e).splitlines()[0])
rc = 0
try:
    print("meta:", torch.zeros(0, device="meta").repeat(-1).shape)
except RuntimeError as e:
    rc = 1; print("meta:", str(e).splitlines()[0])
try:
    print("compile:", torch.compile(lambda t: t.repeat(t.shape[0] - 1), backend="eager")(x).shape)
except Exception as e:
    rc = 1; print("compile:", type(e).__name__, str(e).splitlines()[0])
sys.exit(rc)
