"""How the DecisionRecorder labels an answer: a guard, an assert, a fallback or static."""

from __future__ import annotations

import sympy
from torch.fx.experimental.symbolic_shapes import ShapeEnv

from shapefuzz.systems.common import DecisionRecorder


def _asked(expr_of, fallback):
    se = ShapeEnv()
    u = se.create_unbacked_symint()
    se.pending_fresh_unbacked_symbols.clear()
    rec = DecisionRecorder()
    with rec.active():
        se.evaluate_expr(expr_of(u.node.expr), fallback_value=fallback)
    return rec.raw[-1][2]


def test_an_undecidable_question_answered_by_its_fallback_is_a_fallback():
    assert _asked(lambda u: sympy.Eq(u, 3), False) == "fallback"


def test_a_constant_question_is_static_even_when_it_equals_the_fallback():
    assert _asked(lambda u: sympy.false, False) == "static"
    assert _asked(lambda u: sympy.true, True) == "static"


def test_a_decidable_question_with_another_answer_than_the_fallback_is_static():
    assert _asked(lambda u: sympy.Ge(u * u, 0), False) == "static"
