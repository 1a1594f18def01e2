"""Issue-form pieces of a spurious-DDE finding on a tensor program (shapefuzz/repro/traced.py puts
them together; Note [repro templates]): the public call that traces the program stands where
`TRACE()` is; when it raises a data-dependent error, z3 decides the expression from the facts the
ShapeEnv that raised held (Note [facts torch is given] in shapefuzz/oracles/spurious_dde.py)."""

from __future__ import annotations

import functools
import operator
import sys
import traceback
from typing import TYPE_CHECKING

import sympy
import z3
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode, ShapeEnv

if TYPE_CHECKING:
    from shapefuzz.repro.templates._slots import TRACE


def to_z3(e, side):
    """sympy -> z3 over the integers; // and % as Python has them, divisors != 0 (in `side`)."""
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


def dde_proof():
    """The trace raises a DDE; z3 decides its expression (unhinted, the raising frame's `expr`)
    from the raising ShapeEnv's guards, deferred asserts, replacements and value ranges."""
    try:
        TRACE()
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
