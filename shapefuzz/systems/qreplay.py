"""Replaying a question program's answers on other values (oracle 4 by sampling).

A ShapeEnv's answers hold for every assignment that satisfies its guards and deferred asserts:
that is what a guard is for. So after answering a question program, a system evaluates its
guards and asserts under other assignments of the symbols (other hints, other unbacked values);
where they all hold, every claim it made must still be the concrete answer, and every value
expression must still evaluate to the concrete value (shapefuzz.oracles.truth checks both). A
dropped guard, a too-wide range or a wrong static simplification shows up as an accepted
assignment under which a claim is false."""

from __future__ import annotations

from functools import lru_cache

import sympy

from shapefuzz.program.questions import QInstr, QProgram
from shapefuzz.program.variants import question_variants as qvariants
from shapefuzz.systems.evidence.truth import QReplay

__all__ = ["QReplay", "qvariants", "replay_questions", "value_under", "with_values"]


def with_values(program: QProgram, values: tuple[int, ...]) -> QProgram:
    """The same program with its backed hints / unbacked values replaced."""
    it = iter(values)
    return QProgram(tuple(QInstr(i.op, (next(it),)) if i.op in ("backed", "unbacked") else i
                          for i in program.instrs))


def replay_questions(program: QProgram, variants, leaf_exprs: list, guards: list, asserts: list,
                     value_exprs: list) -> tuple[QReplay, ...]:
    """`leaf_exprs[j]`: the sympy expression (a symbol or a constant) the system made of the j-th
    backed/unbacked instruction; guards/asserts/value_exprs: sympy expressions."""
    out = []
    for vals in variants:
        binding: dict = {}
        why = ""
        for e, v in zip(leaf_exprs, vals):
            e = sympy.sympify(e)
            if e.is_Symbol:
                if binding.setdefault(e, v) != v:
                    why = f"{e} would need two values (duck sizing)"
            elif e.is_number and int(e) != v:
                why = f"a specialized constant {e} would need the value {v}"
        ok = not why and all(_holds(g, binding) for g in list(guards) + list(asserts))
        if not why and not ok:
            why = "a guard or assert fails"
        out.append(QReplay(tuple(vals), ok, tuple(value_under(e, binding) for e in value_exprs), why))
    return tuple(out)


#: an expression that is not defined under a binding: a free symbol, a division by zero, or one of
#: torch's sympy functions refusing its operands (Mod asserts they are non-negative: with an
#: unbacked value of -1, `u0 % 2` is torch's Mod(-1, 2), an AssertionError)
_UNDEFINED = (TypeError, ValueError, ArithmeticError, AssertionError)


def _holds(expr, binding) -> bool:
    return _holds_under(sympy.sympify(expr), tuple(binding.items()))


def value_under(expr, binding) -> str:
    """The integer `expr` evaluates to under `binding`, as text; "" where it is not defined."""
    return _eval_under(sympy.sympify(expr), tuple(binding.items()))


# Note [replay memo]: the configs of one program ask torch mostly the same questions, so their
# guards, asserts and values are mostly the same expressions, replayed under the same variant
# bindings: without a memo, a torch-env program's 16 configs spent 28% of their time in these two
# functions (benchmarks/campaign_bench.py). Both are pure functions of the expression and the
# binding (a toggle changes how torch builds an expression, never how sympy evaluates a built one
# on integers), so a bounded memo keyed by both is exact, across configs and programs alike.
@lru_cache(maxsize=1 << 16)
def _holds_under(expr, items: tuple) -> bool:
    try:
        return bool(expr.xreplace(dict(items)))
    except _UNDEFINED:
        return False  # not decidable under this binding (e.g. a symbol left free): reject


@lru_cache(maxsize=1 << 16)
def _eval_under(expr, items: tuple) -> str:
    try:
        r = sympy.sympify(expr.xreplace(dict(items)))
        return str(int(r)) if r.is_Integer else ""
    except _UNDEFINED:
        return ""
