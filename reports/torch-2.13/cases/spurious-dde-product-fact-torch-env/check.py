"""torch-env (no-specialize-zero-one): spurious DDE on Eq(u0*(Mod(s23, s22)), 1)
oracle spurious-dde: a data-dependent error must not be raised on an expression that the facts the program gave torch decide (z3 proves it from them).
data-dependent error on Eq(u0*(Mod(s23, s22)), 1) (raised by guard_size_oblivious), but the facts prove it false (z3)
root cause: lost[Mul(x,x)] (whole expression: Eq[Mod,nonlinear])
facts: [0] range: True; [0] check: True; [1] range: True; [4] guard: Ne(s22, 4); [5] assert: Eq(u0*(Mod(s23, s22)), 0); [5] check: Eq(u0*(Mod(s23, s22)), 0); [6] assert: Ne(s22, u0*(Mod(s23, s22))); [6] check: Ne(s22, u0*(Mod(s23, s22)))
system torch-env, config no-specialize-zero-one; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import functools
import operator
import sys
import sympy
import torch
import z3
try: import pkgutil; [pkgutil.resolve_name(name) for name in ('torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode', 'torch.fx.experimental.symbolic_shapes.ShapeEnv', 'torch.fx.experimental.symbolic_shapes.guard_or_false', 'torch.fx.experimental.symbolic_shapes.guard_or_true', 'torch.fx.experimental.symbolic_shapes.guard_size_oblivious', 'torch.fx.experimental.symbolic_shapes.statically_known_true', 'torch._dynamo.source.ConstantSource', 'torch.fx.experimental.symbolic_shapes.DimDynamic.DUCK')]  # torch's private names used below: another torch version may have moved one
except (ImportError, AttributeError) as e: sys.exit(print(f"repro.py: this torch ({torch.__version__}) lacks a name it uses ({e}); the repro cannot run here") or 2)
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode, DimDynamic, ShapeEnv, guard_or_false, guard_or_true, guard_size_oblivious, statically_known_true
from torch._dynamo.source import ConstantSource

print("torch", torch.__version__)
facts, side, low = [], [], 0  # facts the program states; divisors != 0; sizes >= low
def backed(hint, name):  # a backed size, as torch makes one for a tensor dim
    src = ConstantSource(name)
    return se.create_symintnode(se.create_symbol(hint, src, DimDynamic.DUCK), hint=hint, source=src)
def unbacked():  # a fresh unbacked SymInt (its concrete value: in a comment where made)
    u = se.create_unbacked_symint()
    se.pending_fresh_unbacked_symbols.clear()
    return u
def div(a, b):
    side.append(b != 0)
    return z3.If(b > 0, a / b, -a / -b)
Z3 = {  # sympy -> z3 for the functions this program can make
    "Add": lambda *a: sum(a), "Mul": lambda *a: functools.reduce(operator.mul, a),
    "Pow": lambda b, n: functools.reduce(operator.mul, [b] * n.as_long()),
    "PowByNatural": lambda b, n: functools.reduce(operator.mul, [b] * n.as_long()),
    "Mod": lambda a, b: a - b * div(a, b), "PythonMod": lambda a, b: a - b * div(a, b),
    "Min": lambda *a: functools.reduce(lambda p, q: z3.If(p <= q, p, q), a), "Equality": operator.eq,
    "Unequality": operator.ne, "StrictLessThan": operator.lt, "LessThan": operator.le,
    "StrictGreaterThan": operator.gt, "GreaterThan": operator.ge, "And": z3.And, "Or": z3.Or,
    "Not": z3.Not,
}
def to_z3(e):
    if not e.args:
        return z3.Int(e.name) if e.is_Symbol else z3.BoolVal(bool(e)) if e.is_Boolean else z3.IntVal(int(e))
    op = Z3.get(type(e).__name__) or sys.exit(print(f"no z3 translation of {type(e).__name__}: add it to Z3") or 2)
    return op(*map(to_z3, e.args))
try:
    se = ShapeEnv(specialize_zero_one=False)
    v0 = backed(5, 'v0')
    torch._check_is_size(v0)
    c = v0 >= 0
    guard_or_true(c)
    v1 = backed(0, 'v1')
    c = v1 == 0
    statically_known_true(c)
    v2 = v1 % v0
    c = v1 != v2
    statically_known_true(c)
    v3 = torch.sym_min(v2, v2)
    v4 = unbacked()  # concretely 5
    c = v0 != 4
    guard_or_true(c)
    v5 = v4 * v2
    c = v5 != 0
    guard_or_false(c)
    torch._check(v5 == 0)
    c = v5 != 0
    guard_or_false(c)
    torch._check(v0 != v5)
    c = v5 == 1
    guard_size_oblivious(c)
except GuardOnDataDependentSymNode as e:
    print(f"raised {type(e).__name__}: {str(e).splitlines()[0]}")
else:
    sys.exit(print("OK: no data-dependent error"))
facts.extend([sympy.Ge(s, low) for s in se.backed_var_to_val] + [g.expr for g in se.guards])
facts.extend(ra.expr for ras in se.deferred_runtime_asserts.values() for ra in ras)
print(f"facts: {facts}\nexpression: {c.node.expr}")
known, goal = [to_z3(f) for f in facts], to_z3(c.node.expr)
proved = [a for a, q in ((True, z3.Not(goal)), (False, goal)) if z3.Solver().check(*known, *side, q) == z3.unsat]
print(f"BUG: z3 proves it {proved[0]} from the facts: expected {proved[0]}, got a data-dependent error"
      if proved else "OK: the facts do not decide it")
sys.exit(1 if proved else 0)
