"""torch-env (default): stale-fallback on statically_known_true
oracle history: an answer may depend on the facts known when it is asked, never on which questions were asked before (a fresh ShapeEnv with the same facts must not answer sharper).
question 1: statically_known_true(Ne(s22, 2)): live run False (fallback); a fresh ShapeEnv with the same facts and no earlier question answers True (static)
system torch-env, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import torch
try: import pkgutil; [pkgutil.resolve_name(name) for name in ('torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode', 'torch.fx.experimental.symbolic_shapes.statically_known_true', 'torch._dynamo.source.ConstantSource', 'torch.fx.experimental.symbolic_shapes.DimDynamic.DUCK', 'torch.fx.experimental.symbolic_shapes.ShapeEnv._maybe_evaluate_static')]  # torch's private names used below: another torch version may have moved one
except (ImportError, AttributeError) as e: sys.exit(print(f"repro.py: this torch ({torch.__version__}) lacks a name it uses ({e}); the repro cannot run here") or 2)
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode, DimDynamic, ShapeEnv, statically_known_true
from torch._dynamo.source import ConstantSource

print("torch", torch.__version__)
added = []  # (guards, asserts) each earlier question added in the live env
def backed(hint, name):  # a backed size, as torch makes one for a tensor dim
    src = ConstantSource(name)
    return se.create_symintnode(se.create_symbol(hint, src, DimDynamic.DUCK), hint=hint, source=src)
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
    v0 = backed(3, 'v0')
    v1 = 2 % v0
    c = v0 != 2
    earlier(0, lambda: statically_known_true(c))
    torch._check(v0 != 2)
    c = v0 != 2
    answer = answer_of(lambda: statically_known_true(c), c, False)  # the finding's question
    return answer
live, fresh = program(asked), program(facts_of)
print(f"expected (a fresh ShapeEnv, same facts, no earlier question): {fresh}\ngot (live ShapeEnv): {live}")
bug = fresh[1] and live[0] != fresh[0]
print("BUG: the live answer depends on the questions asked before it, not only on the facts"
      if bug else "OK: the live env answers as sharply as a fresh one")
sys.exit(1 if bug else 0)
