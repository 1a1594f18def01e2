"""z3 on ref's tensor observations (Note [ref tensor claims]): every static, guard and assert
claim of the z3 configs is asked of the prover; a wrong static answer planted in ref's static
evaluation is refuted and confirmed by a replay on the model's input, and unmodified ref
records verdicts without any finding."""

from __future__ import annotations

import sympy

from shapefuzz.oracles.soundness import smt_findings
from shapefuzz.program import InputSpec, Instr, Program, Ref
from shapefuzz.systems.ref import evaluate as eval_mod
from shapefuzz.systems.ref.system import RefSystem

# x + x on an unbacked dim u0 (3 in this run): broadcasting asks guard_or_false(u0 == 1)
P = Program((InputSpec("x0", "float", (3,), ("unbacked",), (1.0, 2.0, 3.0)),),
            (Instr("add", (Ref(0), Ref(0))),), (1,))


def test_unmodified_ref_records_z3_verdicts_and_no_finding():
    o = RefSystem().observe(P, "default")
    assert (0, "size", "u0 >= 0") in o.axioms, o.axioms  # the unbacked input dim is a size
    assert o.smt and all(c.status in ("unsat", "premature") for c in o.smt), o.smt
    assert smt_findings(P, o) == []
    assert RefSystem().observe(P, "off:expr-cache").smt == ()  # z3 runs on Z3_CONFIGS only


def test_a_planted_wrong_static_answer_is_refuted_and_confirmed(monkeypatch):
    real = eval_mod.static_eval

    def wrong(env, expr, size_oblivious=False):
        if isinstance(expr, sympy.Eq) and 1 in expr.args:  # "u0 == 1" is False: a bad range
            return False
        return real(env, expr, size_oblivious)

    monkeypatch.setattr(eval_mod, "static_eval", wrong)
    o = RefSystem().observe(P, "default")
    found = smt_findings(P, o)
    assert [f.oracle for f in found] == ["static-soundness"], o.smt
    assert "Ne(u0, 1)" in found[0].detail and "false there" in found[0].detail
