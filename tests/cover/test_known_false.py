"""statically_known_false as a question (Note [statically_known_false]): its answer is recorded as
the value of the condition the caller acts on, so torch-env and ref answer alike, the truth oracle
stays quiet on unmodified torch and fires when torch's static evaluation calls an undecided
condition known."""

from __future__ import annotations

import pytest
from _helpers import both_ways
from torch.fx.experimental import symbolic_shapes as ss

from shapefuzz.oracles import check_all
from shapefuzz.program import Ref
from shapefuzz.program.questions import ASK_MODES, FALLBACK, QInstr, QProgram
from shapefuzz.systems.ref import RefSystem
from shapefuzz.systems.torch_env import TorchEnvSystem

R = Ref


def P(*instrs) -> QProgram:
    p = QProgram(tuple(QInstr(op, tuple(args)) for op, *args in instrs))
    p.validate()
    return p


#: s0 (hint 6): s0 >= 0 is known True, s0 < 0 known False, s0 == 6 undecided (no guard asked);
#: u0 (value 5) >= 3 after the check is known True, u0 > 7 undecided
PROGRAM = P(("backed", 6), ("unbacked", 5), ("check", ">=", R(1), 3),
            ("ask", "statically_known_false", ">=", R(0), 0),
            ("ask", "statically_known_false", "<", R(0), 0),
            ("ask", "statically_known_false", "==", R(0), 6),
            ("ask", "statically_known_false", ">=", R(1), 3),
            ("ask", "statically_known_false", ">", R(1), 7))
WANT = [("True", "static"), ("False", "static"), ("True", "fallback"), ("True", "static"),
        ("True", "fallback")]


def _answers(o):
    return [(d.answer, d.how) for d in o.decisions]


def test_the_mode_is_asked_and_falls_back_to_true():
    assert "statically_known_false" in ASK_MODES and FALLBACK["statically_known_false"] is True


@pytest.mark.parametrize("system", [TorchEnvSystem(), RefSystem()], ids=["torch-env", "ref"])
def test_both_systems_record_the_value_of_the_condition(system):
    o = system.observe(PROGRAM, "default", ())
    assert o.outcome.status == "ok", o.outcome.short()
    assert _answers(o) == WANT
    assert o.guards == ()  # statically_known_false never guards
    assert check_all(PROGRAM, None, (o,)) == []


def _undecided_is_false(x):
    """A planted regression of torch's static evaluation (mutant b0047f0b3451 of the mutation
    score: `simplified is not None` negated): an undecided condition comes back False."""
    simplified = x.node.shape_env._maybe_evaluate_static(x.node.expr)
    return bool(simplified) if simplified is None else None


def test_truth_fires_when_an_undecided_condition_is_called_known_false(monkeypatch):
    monkeypatch.setattr(ss, "_static_eval_sym_bool", _undecided_is_false)
    p = P(("unbacked", 5), ("ask", "statically_known_false", ">", R(0), 2))
    o = TorchEnvSystem().observe(p, "default", ())
    assert _answers(o) == [("False", "static")]  # "u0 > 2 is known False"; u0 = 5
    found = check_all(p, None, (o,))
    # the concrete answer (truth) and z3 (the claim does not follow from u0's range) both see it
    assert {(f.oracle, f.symptom) for f in found} == {("truth", "wrong-static"),
                                                   ("static-soundness", "unsound-static")}, found


def _plant_source() -> str:
    """The same planted regression as a sitecustomize.py, so the repro's interpreter runs it."""
    import inspect

    return ("import torch.fx.experimental.symbolic_shapes as ss\n" + inspect.getsource(_undecided_is_false)
            + "ss._static_eval_sym_bool = _undecided_is_false\n")


def test_the_repro_exits_1_under_the_plant_and_0_without(monkeypatch, tmp_path):
    from shapefuzz.cases.corpus import Case
    from shapefuzz.repro import repro_source

    monkeypatch.setattr(ss, "_static_eval_sym_bool", _undecided_is_false)
    p = P(("unbacked", 5), ("ask", "statically_known_false", ">", R(0), 2))
    (f,) = [f for f in check_all(p, None, (TorchEnvSystem().observe(p, "default", ()),)) if f.oracle == "truth"]
    monkeypatch.undo()
    script = tmp_path / "repro.py"
    script.write_text(repro_source(Case(f, p, None, torch_version="2.13.0")))
    planted, clean = both_ways(script, _plant_source())
    assert planted.returncode == 1 and "BUG" in planted.stdout, planted.stdout + planted.stderr
    assert clean.returncode == 0, clean.stdout + clean.stderr
