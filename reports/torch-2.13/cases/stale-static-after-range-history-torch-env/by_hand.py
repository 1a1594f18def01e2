"""By hand (no shapefuzz): guard_or_true(u >= 2) asked before _constrain_range_for_size(u, 2, 2) makes
bool(u >= 2) raise a data-dependent error afterwards (ShapeEnv._maybe_evaluate_static's cache is keyed on
_version_counter, which a range update does not bump); a fresh ShapeEnv answers True. Exits 1 while the bug is there."""
import sys, torch
from torch.fx.experimental.symbolic_shapes import ShapeEnv, _constrain_range_for_size, guard_or_true, GuardOnDataDependentSymNode
def run(ask_first, clear):
    se = ShapeEnv()
    u = se.create_unbacked_symint(); se.pending_fresh_unbacked_symbols.clear()
    if ask_first:
        guard_or_true(u >= 2)
    _constrain_range_for_size(u, min=2, max=2)   # now u == 2
    for name in clear:
        getattr(se, name).cache_clear()
    try:
        return bool(u >= 2)
    except GuardOnDataDependentSymNode:
        return "DDE"
print("fresh (no earlier question):", run(False, ()))
print("asked first:", run(True, ()))
print("asked first, _maybe_evaluate_static cleared:", run(True, ("_maybe_evaluate_static",)))
print("asked first, _inner_evaluate_expr cleared:", run(True, ("_inner_evaluate_expr",)))
sys.exit(1 if run(True, ()) != run(False, ()) else 0)
