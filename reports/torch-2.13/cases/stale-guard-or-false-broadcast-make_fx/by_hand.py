"""By hand (no shapefuzz): guard_or_false(u == 1) asked before torch._check(5 * u == 5) keeps its
answer False afterwards (ShapeEnv._inner_evaluate_expr's lru_cache, row 6); a fresh ShapeEnv says
True. Under make_fx this makes infer_size refuse to broadcast u (== 1) against 0 (the case's
repro.py). Clearing _inner_evaluate_expr's cache makes it True. Exits 1 while the bug is there."""
import sys, torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext, guard_or_false
def answer(ask_first, clear=False):
    se = ShapeEnv()
    x = FakeTensorMode(shape_env=se).from_tensor(
        torch.zeros(1, 5, 1), symbolic_context=StatelessSymbolicContext([DimDynamic.UNBACKED] + [DimDynamic.STATIC] * 2))
    u = x.shape[0]
    if ask_first:
        guard_or_false(u == 1)
    torch._check(5 * u == 5)
    if clear:
        se._inner_evaluate_expr.cache_clear()
    return guard_or_false(u == 1)
fresh, live, cleared = answer(False), answer(True), answer(True, clear=True)
print(f"fresh: {fresh}; asked before the check: {live}; same, cache cleared: {cleared}")
sys.exit(1 if live != fresh else 0)
