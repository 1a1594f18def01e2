"""By hand (no shapefuzz): under backed_size_oblivious, a backed dim of size 1 that broadcasts
fails to trace; torch's _refs.broadcast_shapes specializes it to 1 (pytorch/pytorch#167232),
fake_impls.infer_size (the fake binary-op path) does not. Exits 1 while the bug is there."""
import sys, torch
import torch.fx.experimental._config as fxcfg
from torch.fx.experimental.proxy_tensor import make_fx
f = lambda a, b: a + b
a, b = torch.zeros(2), torch.zeros(3, 4, 1)
print("eager:", f(a, b).shape)
ok = {}
for bso in (False, True):
    with fxcfg.patch(backed_size_oblivious=bso):
        try:
            make_fx(f, tracing_mode="symbolic")(a, b); ok[bso] = True; print(f"backed_size_oblivious={bso}: traces")
        except RuntimeError as e:
            ok[bso] = False; print(f"backed_size_oblivious={bso}:", str(e).splitlines()[0])
sys.exit(1 if ok[False] and not ok[True] else 0)
