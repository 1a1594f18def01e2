"""export (strict): stale-fallback on statically_known_true
oracle history: an answer may depend on the facts known when it is asked, never on which questions were asked before (a fresh ShapeEnv with the same facts must not answer sharper).
statically_known_true((Mod(257*s6, 128)) >= 1) in the trace: live ShapeEnv False (fallback); a fresh ShapeEnv with the same symbols, ranges, guards and asserts and no earlier question answers True (static); at the run's values it is True
system export, config strict; found with torch 2.13.0+cpu. Exits 1 while a fresh ShapeEnv holding what the live one knew answers sharper than the live one did, 0 once they agree (or the trace no longer meets the question), 2 for no verdict."""
import sys
import contextlib
import torch
from torch._dynamo.source import ConstantSource
from torch.export import Dim, export
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, statically_known_true, GuardOnDataDependentSymNode
from torch.fx.experimental import symbolic_shapes as ss

print("torch", torch.__version__)
def f(v0, v1):
    v2 = v0.shape[0]
    v3 = 257 * v2
    v4 = v3 % 128
    v5 = v1[:, :v4]
    return (v5,)
inputs = [torch.tensor([False, False], dtype=torch.bool).reshape((2,)),  # x0: unbacked
          torch.tensor([False, False], dtype=torch.bool).reshape((2, 1))]  # x2: static, static
class M(torch.nn.Module):
    forward = staticmethod(f)
EXPR, ASK, LIVE = '(Mod(257*s6, 128)) >= 1', statically_known_true, 'False'  # the question, its call, the live answer
def known_to(se):  # what `se` knows now: (se, ranges, size-like marks, guards then deferred asserts as recorded)
    return se, dict(se.var_to_range), set(se.size_like), [g.expr for g in se.guards] + [a.expr for x in se.deferred_runtime_asserts.values() for a in x]
def fresh_answer(known, ask, expr, live):  # (answer, how) of ask(expr) in a fresh ShapeEnv given only `known` (facts over floats left out)
    env, ranges, size_like, facts = known
    facts = [f for f in facts if all(s.name[0] in "su" for s in f.free_symbols)]
    assert all(s.name[0] in "su" for s in expr.free_symbols), f"{expr}: a symbol that is not a size or an unbacked int"
    se, syms = ShapeEnv(**{k: getattr(env.settings, k) for k in type(env.settings).__dataclass_fields__}), expr.free_symbols.union(*(f.free_symbols for f in facts))
    to = {s: se.create_symbol(int(env.backed_var_to_val[s]), ConstantSource(str(s)), DimDynamic.DYNAMIC, do_not_specialize_zero_one=True) if s in env.backed_var_to_val else se.create_unbacked_symint().node.expr for s in sorted(syms, key=str)}
    se.var_to_range.update({t: ranges[s] for s, t in to.items() if s in ranges})
    se.size_like.update(t for s, t in to.items() if s in size_like)
    se._update_version_counter()  # the ranges set by hand are news to its caches
    [se.guard_or_defer_runtime_assert(f.xreplace(to), "a fact of the live run") for f in facts]
    q, n = expr.xreplace(to), len(se.guards) + se.num_deferred_runtime_asserts
    try:
        got = str(ask(se.create_symboolnode(q) if q.is_Relational or q.is_Boolean else se.create_symintnode(q, hint=None)))
    except GuardOnDataDependentSymNode:
        return "a data-dependent error", "dde"
    return got, "fallback" if got == live else "guard" if len(se.guards) + se.num_deferred_runtime_asserts > n else "static"
live, static_eval = [], ss._static_eval_sym_bool
def on_static(x):  # static evaluation, then what the env knew when it left EXPR undecided
    return live.extend([(known_to(x.node.shape_env), x.node.expr)] if (r := static_eval(x)) is None and str(x.node.expr) == EXPR else []) or r
ss._static_eval_sym_bool = on_static
with contextlib.suppress(Exception):  # what the trace raises after the question is not the point
    export(M(), tuple(inputs), dynamic_shapes=({0: Dim.DYNAMIC}, None), strict=True)
ss._static_eval_sym_bool = static_eval
for known, expr in live or sys.exit(print(f"OK: the live env no longer falls back on (or raises on) {EXPR}") or 0):
    fresh = fresh_answer(known, ASK, expr, LIVE)
    print(f"expected (a fresh ShapeEnv, same facts, no earlier question): {fresh}\ngot (live ShapeEnv): {LIVE or 'a data-dependent error'}")
    if fresh[1] not in ("fallback", "dde"):
        sys.exit(print("BUG: the live answer depends on the questions asked before it, not only on the facts") or 1)
print("OK: the live env answers as sharply as a fresh one")
