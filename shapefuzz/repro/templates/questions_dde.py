"""Issue-form pieces of a spurious-DDE finding on a question program (shapefuzz/repro/questions.py
puts them together with questions_issue's backed/unbacked; Note [repro templates]). The program's
lines stand where `TRACE()` is; its last question raises the data-dependent error, and z3 then
decides that question's expression from what the program told torch (Note [facts torch is
given] in shapefuzz/oracles/spurious_dde.py)."""

from __future__ import annotations

import functools
import operator
import sys
from typing import TYPE_CHECKING

import sympy
import torch
import z3
from torch.fx.experimental.symbolic_shapes import (
    GuardOnDataDependentSymNode,
    _constrain_range_for_size,
    constrain_range,
)

if TYPE_CHECKING:
    from shapefuzz.repro.templates._slots import TRACE, c, facts, se

def constrain(v, lo, hi):
    """A range constraint (torch._constrain_as_size as traced, or constrain_range): a fact
    where torch takes one, on a symbol."""
    sym = isinstance(v, torch.SymInt) and isinstance(v.node.expr, sympy.Symbol)
    (_constrain_range_for_size if lo >= 0 and sym else constrain_range)(v, min=lo, max=hi)
    facts.extend([sympy.Ge(v.node.expr, lo), sympy.Le(v.node.expr, hi)] if sym else [])


def to_z3(e, side):
    """sympy -> z3 over the integers; // and % as Python has them, divisors != 0 (in `side`)."""
    if e.is_Symbol or e.is_Integer or e in (sympy.true, sympy.false):
        return z3.Int(e.name) if e.is_Symbol else z3.IntVal(int(e)) if e.is_Integer else z3.BoolVal(bool(e))
    a, name = [to_z3(x, side) for x in e.args], type(e).__name__
    if name in ("FloorDiv", "Mod", "PythonMod"):
        side.append(a[1] != 0)
        q = z3.If(a[1] > 0, a[0] / a[1], -a[0] / -a[1])
        return q if name == "FloorDiv" else a[0] - a[1] * q
    if name in ("Pow", "PowByNatural"):
        return functools.reduce(operator.mul, [a[0]] * int(e.args[1]))
    fold = {"Add": operator.add, "Mul": operator.mul, "Max": lambda p, q: z3.If(p >= q, p, q),
            "Min": lambda p, q: z3.If(p <= q, p, q)}
    if name in fold:
        return functools.reduce(fold[name], a)
    return {"Equality": operator.eq, "Unequality": operator.ne, "StrictLessThan": operator.lt,
            "LessThan": operator.le, "StrictGreaterThan": operator.gt, "GreaterThan": operator.ge,
            "And": z3.And, "Or": z3.Or, "Not": z3.Not}[name](*a)


def dde_proof(low):
    """The program up to the question that raises, then z3 on the facts torch was given: the
    sizes' creation range (`low`), range constraints, guards and deferred runtime asserts (what
    torch._check and _check_is_size left)."""
    try:
        TRACE()
    except GuardOnDataDependentSymNode as e:
        print(f"raised {type(e).__name__}: {str(e).splitlines()[0]}")
    else:
        sys.exit(print("OK: no data-dependent error"))
    facts.extend([sympy.Ge(s, low) for s in se.backed_var_to_val] + [g.expr for g in se.guards])
    facts.extend(ra.expr for ras in se.deferred_runtime_asserts.values() for ra in ras)
    side, expr = [], c.node.expr
    known, goal = [to_z3(f, side) for f in facts], to_z3(expr, side)
    print(f"facts: {facts}\nexpression: {expr}")
    for answer, query in ((True, z3.Not(goal)), (False, goal)):
        solver = z3.Solver()
        solver.add(*known, *side, query)
        if solver.check() == z3.unsat:
            print(f"BUG: z3 proves it {answer} (facts and {query}: unsat), yet torch raised")
            sys.exit(1)
    print("OK: the facts do not decide it")
