"""torch-env (default): stale-dde on bool
oracle history: an answer may depend on the facts known when it is asked, never on which questions were asked before (a fresh ShapeEnv with the same facts must not answer sharper).
question 2: bool(u0 >= 2): live run a data-dependent error; a fresh ShapeEnv with the same facts and no earlier question answers True (static)
system torch-env, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import sympy
import torch
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode, ShapeEnv, _constrain_range_for_size, constrain_range, guard_or_true

print("torch", torch.__version__)
added = []  # (guards, asserts) each earlier question added in the live env
def unbacked():  # a fresh unbacked SymInt (its concrete value: in a comment where made)
    u = se.create_unbacked_symint()
    se.pending_fresh_unbacked_symbols.clear()
    return u
def constrain(v, lo, hi):  # as torch._constrain_as_size (lo >= 0) / constrain_range take one
    if lo >= 0 and isinstance(v, torch.SymInt) and isinstance(v.node.expr, sympy.Symbol):
        _constrain_range_for_size(v, min=lo, max=hi)
    else:
        constrain_range(v, min=lo, max=hi)
def asserts():
    return [ra.expr for ras in se.deferred_runtime_asserts.values() for ra in ras]
def asked(q, call):  # live env: question q is asked; the guards and asserts it adds are facts
    g, a = len(se.guards), asserts()
    call()
    added.append(([x.expr for x in se.guards[g:]], [x for x in asserts() if x not in a]))
def facts_of(q, call):  # fresh env: in place of question q, the facts it added in the live env
    for g in added[q][0]:
        se.evaluate_expr(g)
    for a in added[q][1]:
        se.guard_or_defer_runtime_assert(a, "a fact of the live run")
def answer_of(call, c, fallback):  # (answer, is it a claim: no undecided fallback, no DDE)
    n = len(se.guards) + len(asserts())
    try:
        got = call()
    except GuardOnDataDependentSymNode:
        return "data-dependent error", False
    static = se._maybe_evaluate_static(c.node.expr) if isinstance(c, torch.SymBool) else c
    return got, got != fallback or static is not None or len(se.guards) + len(asserts()) > n
def program(earlier):  # earlier(k, ask): how earlier question k is met
    global se
    se = ShapeEnv()
    v0 = unbacked()  # concretely 2
    c = v0 >= 2
    earlier(0, lambda: guard_or_true(c))
    constrain(v0, 2, 2)
    c = v0 >= 2
    earlier(1, lambda: guard_or_true(c))
    v1 = torch.sym_max(v0, v0)
    c = v0 >= 2
    return answer_of(lambda: bool(c), c, None)
live, fresh = program(asked), program(facts_of)
print(f"expected (a fresh ShapeEnv, same facts, no earlier question): {fresh}\ngot (live ShapeEnv): {live}")
bug = fresh[1] and live[0] != fresh[0]
print("BUG: the live answer depends on the questions asked before it, not only on the facts"
      if bug else "OK: the live env answers as sharply as a fresh one")
sys.exit(1 if bug else 0)
