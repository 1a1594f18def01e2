"""torch-env (default): unsound-value-expr on value
oracle truth: every answer the ShapeEnv claims (not an undecided fallback) must equal the concrete answer for the values the sizes really have, also for other values its guards accept.
value v4 = (2//(u0*u2)) evaluates to -1 with values [5, 0, -2] (guards and asserts hold); concretely 0
system torch-env, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import sympy
import torch
from torch._dynamo.source import ConstantSource
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, guard_or_false
from torch.utils._sympy.symbol import SymT, symbol_is_type

print("torch", torch.__version__)
wrong, claims = [], []  # what is not the concrete answer; (question, answer) of every claim
def backed(hint, name):  # a backed size, as torch makes one for a tensor dim
    src = ConstantSource(name)
    return se.create_symintnode(se.create_symbol(hint, src, DimDynamic.DUCK), hint=hint, source=src)
def unbacked():  # a fresh unbacked SymInt (its concrete value: in a comment where made)
    u = se.create_unbacked_symint()
    se.pending_fresh_unbacked_symbols.clear()
    return u
def claim(k, c, got, fallback, want):  # question k's answer must be the concrete one (want), unless a fallback
    expr = c.node.expr if isinstance(c, torch.SymBool) else c
    static = se._maybe_evaluate_static(expr) if isinstance(c, torch.SymBool) else c
    if got != fallback or static is not None:
        claims.append((k, got))
    if got != want and (got != fallback or (static is not None and bool(static) != want)):
        wrong.append(f"question {k}: {expr}: expected {want} (concretely), got {got} (static: {static})")
def value(k, v, want, leaves):  # value v{k} must evaluate to its concrete value (want) at the leaves' values
    binding = {x.node.expr: sympy.Integer(n) for x, n in leaves if isinstance(x, torch.SymInt)}
    e = v.node.expr if isinstance(v, torch.SymInt) else sympy.Integer(v)
    got = e.xreplace(binding)
    if got.is_number and int(got) != want:
        wrong.append(f"value v{k}: {e} is {got} where {binding}, concretely {want}")
def replay(leaves, answers):  # other values (leaf, value) every guard, assert and size range accepts: claims hold there too
    binding = {}
    for leaf, v in leaves:  # a specialized leaf (an int), or two that share a symbol, must fit
        e = sympy.sympify(leaf.node.expr if isinstance(leaf, torch.SymInt) else leaf)
        if e != v if e.is_number else binding.setdefault(e, v) != v:
            return print("the other values do not fit the symbols")
    facts = [g.expr for g in se.guards] + [a.expr for ras in se.deferred_runtime_asserts.values() for a in ras]
    if not all(f.xreplace(binding) == sympy.true for f in facts) or any(
            v not in se.var_to_range[s] for s, v in binding.items() if symbol_is_type(s, SymT.SIZE)):
        return print("the guards, asserts or size ranges reject the other values")
    for k, got in claims:
        if k < len(answers) and got != answers[k]:
            wrong.append(f"question {k}: expected {answers[k]} with {binding}, where every guard and "
                         f"assert holds, got {got}, claimed for every such value")
    return True
try:
    se = ShapeEnv()
    v0 = unbacked()  # concretely 2
    c = v0 >= v0
    claim(0, c, bool(c), None, True)
    torch._check(v0 <= v0)
    c = v0 >= v0
    claim(1, c, bool(c), None, True)
    v1 = unbacked()  # concretely 0
    v2 = unbacked()  # concretely 3
    v3 = 2 // v0
    c = v3 != v2
    claim(2, c, guard_or_false(c), False, True)
    v4 = v3 // v2
    if replay([(v0, 5), (v1, 0), (v2, -2)], [True, True, True]):  # the other values fit every guard: each value must be its concrete one there
        leaves = [(v0, 5), (v1, 0), (v2, -2)]  # the sizes and their values
        value(3, v3, 0, leaves)
        value(4, v4, 0, leaves)
except Exception as e:
    print(f"raised {type(e).__name__}: {e}")
    if "data-dependent" not in str(e).lower() and not type(e).__name__.startswith("GuardOnData"):
        sys.exit(1)
print("\n".join("BUG: " + w for w in wrong) or "OK: every claim is the concrete answer")
sys.exit(1 if wrong else 0)
