"""make_fx (default): spurious DDE on (((u0 + 1)//2)) >= ((u0//2))
oracle spurious-dde: a data-dependent error must not be raised on an expression that the facts the program gave torch decide (z3 proves it from them).
data-dependent error on (((u0 + 1)//2)) >= ((u0//2)) (raised by branch), but the facts prove it true (z3); root cause: lost[relation] (whole expression: Cmp[FloorDiv]); facts: (none)
system make_fx, config default; found with torch 2.13.0+cpu. Exits 1 while the data-dependent error is raised and z3 decides its expression from the facts torch held, 0 once it traces or they do not decide it, 2 for no verdict."""
import sys
import functools
import operator
import traceback
import sympy
import torch
import z3
try: import pkgutil; [pkgutil.resolve_name(name) for name in ('torch.fx.experimental.symbolic_shapes.ShapeEnv', 'torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode')]  # torch's private names used below: another torch version may have moved one
except (ImportError, AttributeError) as e: sys.exit(print(f"repro.py: this torch ({torch.__version__}) lacks a name it uses ({e}); the repro cannot run here") or 2)
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import ShapeEnv, GuardOnDataDependentSymNode

print("torch", torch.__version__)
def f(v0):
    v1 = v0.sum().item()
    v2 = v1 + 1
    v3 = v2 // 2
    v4 = v1 // 2
    if v3 >= v4:
        v5 = v3
    else:
        v5 = torch.sym_max(v3, v4)
    return (v5,)
inputs = [torch.tensor([], dtype=torch.int64).reshape((0, 4))]  # x0: static, static
def to_z3(e, side):
    if not e.args:
        return z3.Int(e.name) if e.is_Symbol else z3.BoolVal(bool(e)) if e.is_Boolean else z3.IntVal(int(e))
    a, name = [to_z3(x, side) for x in e.args], type(e).__name__
    if name in ("FloorDiv", "CleanDiv", "Mod", "PythonMod"):
        side.append(a[1] != 0)
        q = z3.If(a[1] > 0, a[0] / a[1], -a[0] / -a[1])
        return q if "Div" in name else a[0] - a[1] * q
    ops = {"Add": z3.Sum, "Mul": z3.Product, "And": z3.And, "Or": z3.Or, "Not": z3.Not, "Max": lambda *v: functools.reduce(lambda p, q: z3.If(p >= q, p, q), v),
           "Min": lambda *v: functools.reduce(lambda p, q: z3.If(p <= q, p, q), v), "Equality": operator.eq, "Unequality": operator.ne, "StrictLessThan": operator.lt,
           "LessThan": operator.le, "StrictGreaterThan": operator.gt, "GreaterThan": operator.ge, **dict.fromkeys(("Pow", "PowByNatural"), lambda b, n: z3.Product([b] * n.as_long()))}
    return ops[name](*a) if name in ops else sys.exit(print(f"no z3 translation of {name}: no verdict") or 2)
try:
    make_fx(f, tracing_mode="fake")(*inputs)
    sys.exit(print("OK: the program traces, as eager runs it"))
except Exception as e:  # a DDE, or what wraps one (strict export)
    dde = next((x for x in (e, e.__cause__, e.__context__) if isinstance(x, GuardOnDataDependentSymNode)), None) or sys.exit(print(f"no verdict: {e!r}") or 2)
frame = [fr for fr, _ in traceback.walk_tb(dde.__traceback__) if isinstance(fr.f_locals.get("self"), ShapeEnv)][-1]
se, expr = frame.f_locals["self"], frame.f_locals["expr"]  # the ShapeEnv that raised, the unhinted expression
facts = [g.expr for g in se.guards] + [ra.expr for ras in se.deferred_runtime_asserts.values() for ra in ras] + [sympy.Eq(k, v) for k, v in se.replacements.items() if k != v]
facts += [c for s, r in se.var_to_range.items() for c, finite in ((s >= r.lower, r.lower.is_Integer), (s <= r.upper, r.upper.is_Integer)) if finite]
print(f"raised {type(dde).__name__}: {str(dde).splitlines()[0]}\nfacts: {facts}\nexpression: {expr}")
goal, known = to_z3(expr, side := []), [to_z3(x, side) for x in facts]
for answer, query in ((True, z3.Not(goal)), (False, goal)):
    if z3.Solver().check(*known, *side, query) == z3.unsat:
        sys.exit(print(f"BUG: z3 proves the expression {answer} from the facts (the facts and its negation: unsat), yet torch raised") or 1)
print("OK: the facts do not decide it")
