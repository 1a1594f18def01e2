"""Issue-form pieces of a spurious-DDE finding on a question program (shapefuzz/repro/questions.py
puts them together with questions_issue's backed/unbacked; Note [repro templates]). The program's
lines stand where `TRACE()` is; its last question raises the data-dependent error, and z3 then
decides that question's expression from what the program told torch (Note [facts torch is
given] in shapefuzz/oracles/spurious_dde.py). The script's sympy -> z3 table `Z3` holds only the
entries of OPS whose functions the program's operators can make (questions.z3_names)."""

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
    from shapefuzz.repro.templates._slots import TRACE, Z3, c, facts, se, side


def constrain(v, lo, hi):
    """A range constraint (torch._constrain_as_size as traced, or constrain_range): a fact."""
    sym = isinstance(v, torch.SymInt) and isinstance(v.node.expr, sympy.Symbol)
    (_constrain_range_for_size if lo >= 0 and sym else constrain_range)(v, min=lo, max=hi)
    facts.extend([sympy.Ge(v.node.expr, lo), sympy.Le(v.node.expr, hi)] if sym else [])


def div(a, b):
    """a // b as Python has it (z3's is Euclidean); b != 0 is a side condition."""
    side.append(b != 0)
    return z3.If(b > 0, a / b, -a / -b)


#: sympy function name -> z3, one entry a line (a script keeps the ones it can meet)
OPS = {
    "Add": lambda *a: sum(a),
    "Mul": lambda *a: functools.reduce(operator.mul, a),
    "Pow": lambda b, n: functools.reduce(operator.mul, [b] * n.as_long()),
    "PowByNatural": lambda b, n: functools.reduce(operator.mul, [b] * n.as_long()),
    "FloorDiv": div,
    "CleanDiv": div,
    "Mod": lambda a, b: a - b * div(a, b),
    "PythonMod": lambda a, b: a - b * div(a, b),
    "Max": lambda *a: functools.reduce(lambda p, q: z3.If(p >= q, p, q), a),
    "Min": lambda *a: functools.reduce(lambda p, q: z3.If(p <= q, p, q), a),
    "Equality": operator.eq,
    "Unequality": operator.ne,
    "StrictLessThan": operator.lt,
    "LessThan": operator.le,
    "StrictGreaterThan": operator.gt,
    "GreaterThan": operator.ge,
    "And": z3.And,
    "Or": z3.Or,
    "Not": z3.Not,
}


def to_z3(e):
    """sympy -> z3 over the integers; a function without an entry in Z3 exits 2 (no verdict)."""
    if not e.args:
        return z3.Int(e.name) if e.is_Symbol else z3.BoolVal(bool(e)) if e.is_Boolean else z3.IntVal(int(e))
    op = Z3.get(type(e).__name__) or sys.exit(print(f"no z3 translation of {type(e).__name__}: add it to Z3") or 2)
    return op(*map(to_z3, e.args))


def dde_proof(low):
    """The program up to the question that raises, then z3 on the facts torch was given: the
    sizes' creation range (`low`), range constraints, guards and deferred runtime asserts."""
    try:
        TRACE()
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
