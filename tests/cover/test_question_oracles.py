"""Truth, config-differential and system-differential oracles on hand-made observations: each
must fire on a planted disagreement and stay quiet on agreement."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from shapefuzz.oracles import check_all, config_differential, system_differential, truth_agreement
from shapefuzz.program import ProgramError, Ref
from shapefuzz.program.questions import QInstr, QProgram, truth
from shapefuzz.strategies import qprograms
from shapefuzz.systems.evidence import of, record
from shapefuzz.systems.evidence.metamorphic import Echoes
from shapefuzz.systems.evidence.truth import QuestionReplays
from shapefuzz.systems.observation import Decision, Observation, Outcome

# v0 = backed(6); v1 = unbacked(3); check(v1 >= 0); ask(guard_or_false, v1 >= 2); v2 = v0 + v1
P = QProgram((QInstr("backed", (6,)), QInstr("unbacked", (3,)), QInstr("check", (">=", Ref(1), 0)),
              QInstr("ask", ("guard_or_false", ">=", Ref(1), 2)), QInstr("binop", ("+", Ref(0), Ref(1)))))


def obs(answer="True", how="static", system="ref", config="default", evals=("6", "3", "9"),
        status="ok", guards=(), asserts=("u0 >= 0",)):
    return Observation(system, config, Outcome(status), (Decision("u0 >= 2", answer, how),), guards,
                       asserts, out_exprs=("s0", "u0", "s0 + u0"), binding=(("s0", 6), ("u0", 3)),
                       out_eval=evals)


def test_truth_of_the_example():
    t = truth(P)
    assert t.values == (6, 3, 9) and t.answers == (True,) and t.failed_check is None


def test_question_program_json_round_trip_and_validation():
    assert QProgram.from_json(json.loads(P.dumps())) == P
    bad = P.to_json()
    bad["instrs"][3]["args"][0] = "__import__('os')"
    with pytest.raises(ProgramError, match="is not one of"):
        QProgram.from_json(bad)
    bad = P.to_json()
    bad["instrs"][2]["args"][1] = {"v": 7}
    with pytest.raises(ProgramError, match="before it is defined"):
        QProgram.from_json(bad)


@given(qprograms())
@settings(max_examples=150)
def test_generated_question_programs_round_trip(p):
    assert QProgram.from_json(json.loads(p.dumps())) == p


def test_truth_quiet_on_correct_claim_and_on_fallback():
    assert truth_agreement(P, obs("True", "static")) == []
    assert truth_agreement(P, obs("False", "fallback")) == []


def test_truth_fires_on_wrong_claim():
    (f,) = truth_agreement(P, obs("False", "static"))
    assert f.symptom == "wrong-static" and "concrete answer is True" in f.detail


def test_truth_fires_on_wrong_fallback_value():
    (f,) = truth_agreement(P, obs("True", "fallback"))  # guard_or_false's fallback is False
    assert f.symptom == "wrong-fallback"


def test_truth_fires_on_wrong_value_expression():
    (f,) = truth_agreement(P, obs(evals=("6", "3", "10")))
    assert f.symptom == "wrong-value-expr" and "v2" in f.detail


def test_truth_quiet_after_a_false_check_and_fires_on_error_for_valid_program():
    bad = QProgram(P.instrs[:2] + (QInstr("check", ("<", Ref(1), 0)),) + P.instrs[3:])
    assert truth(bad).failed_check == 2
    assert truth_agreement(bad, obs("False", "static", evals=("6", "3", "10"))) == []
    assert truth_agreement(bad, obs(status="error")) == []
    (f,) = truth_agreement(P, obs(status="error"))
    assert f.symptom == "error-on-valid"


def test_config_differential_quiet_when_configs_agree():
    o = [obs(config="all-off"), obs(config="default"), obs(config="off:expr_cache")]
    assert config_differential(o) == []


def test_config_differential_fires_and_blames_the_toggle():
    # default (all on) answers wrongly; off:cache (cache reverted) agrees with all-off
    o = [obs(config="all-off"), obs("False", "static", config="default"),
         obs(config="off:cache"), obs("False", "static", config="off:sort")]
    (f,) = config_differential(o)
    assert f.oracle == "config-differential" and "guilty toggle: cache" in f.summary
    assert f.key == "config-differential:config-mismatch:ref:cache"


def test_config_differential_fires_on_value_and_guard_count():
    (f,) = config_differential([obs(config="all-off"), obs(config="default", evals=("6", "3", "8"))])
    assert "value 2" in f.detail
    (g,) = config_differential([obs(config="all-off"), obs(config="default", guards=("s0 > 2",))])
    assert "guards" in g.detail


def test_aggressive_level_may_fall_back_but_not_claim_otherwise():
    assert config_differential([obs(config="all-off"), obs("False", "fallback", config="agfs=2")]) == []
    (f,) = config_differential([obs(config="all-off"), obs("False", "static", config="agfs=2")])
    assert f.config == "agfs=2"


def test_settings_configs_are_not_compared_by_config_differential():
    assert config_differential([obs(config="all-off"), obs("False", "guard", config="no-duck-shape")]) == []


def test_system_differential():
    assert system_differential([obs(), obs(system="torch-env", how="guard")]) == []  # how may differ
    assert system_differential([obs(), obs("False", "fallback", system="torch-env")]) == []
    (f,) = system_differential([obs(), obs("False", "static", system="torch-env")])
    assert f.oracle == "system-differential" and f.symptom == "answer"
    # ref sharper than torch: a known, documented difference
    assert system_differential([obs(), obs(system="torch-env", status="dde")]) == []
    (g,) = system_differential([obs(status="dde"), obs(system="torch-env")])
    assert g.symptom == "outcome" and g.key.endswith("dde-vs-ok")


def test_check_all_routes_question_programs_to_truth():
    fs = check_all(P, None, [obs("False", "static")])
    assert [f.oracle for f in fs] == ["truth"]


def test_replay_under_other_values():

    from shapefuzz.systems.qreplay import QReplay, qvariants, replay_questions

    # guard_or_false(v1 >= 2) claimed True (static) with no guard or assert on v1 >= 2: under
    # v1 = 1 (asserts hold: 1 >= 0) the claim is false -> unsound.
    o = record(obs("True", "static"), QuestionReplays((QReplay((6, 1), True, ("6", "1", "7")),)))
    (f,) = truth_agreement(P, o)
    assert f.symptom == "unsound-guards" and "[6, 1]" in f.detail and f.replay_index == 0
    # rejected assignments are not compared
    o = record(obs("True", "static"), QuestionReplays((QReplay((6, 1), False, ("6", "1", "7")),)))
    assert truth_agreement(P, o) == []
    # a value expression that is only right at the traced values
    o = record(obs("False", "fallback"), QuestionReplays((QReplay((4, 3), True, ("4", "3", "9")),)))
    (g,) = truth_agreement(P, o)
    assert g.symptom == "unsound-value-expr"
    # the replay service itself: a guard u0 >= 2 rejects u0 = 1; duck sizing needs equal values
    import sympy

    s0, u0 = sympy.Symbol("s0", integer=True), sympy.Symbol("u0", integer=True)
    r = replay_questions(P, [(6, 1), (6, 3)], [s0, u0], [u0 >= 2], [u0 >= 0], [s0, u0, s0 + u0])
    assert [x.accepted for x in r] == [False, True] and r[1].out_eval == ("6", "3", "9")
    (d,) = replay_questions(P, [(6, 2)], [s0, s0], [], [], [s0])
    assert not d.accepted and "duck" in d.why
    vs = qvariants(P, 5)
    assert len(vs) == len(set(vs)) == 5 and all(len(v) == 2 for v in vs)


def test_metamorphic_oracle():

    from shapefuzz.oracles import metamorphic
    from shapefuzz.program.metamorphic import Echo, ask_map, redundant

    r = redundant(P)
    assert [i.args[0] for i in r.instrs if i.op == "ask"] == ["statically_known_true", "guard_or_false"]
    assert ask_map(P) == [1]
    base = obs("True", "static")
    same = Echo("fresh", "ok", (("True", "static"),), ("6", "3", "9"))
    red = Echo("redundant", "ok", (("False", "fallback"), ("True", "static")), ("6", "3", "9"))
    assert metamorphic(P, record(base, Echoes((same, red)))) == []
    # a warm global cache changes an answer in a fresh env
    stale = Echo("fresh", "ok", (("False", "static"),), ("6", "3", "9"))
    (f,) = metamorphic(P, record(base, Echoes((stale, red))))
    assert f.oracle == "metamorphic" and f.symptom == "fresh"
    # a redundant question changes a claim into another claim
    flip = Echo("redundant", "ok", (("False", "fallback"), ("False", "static")), ("6", "3", "9"))
    (g,) = metamorphic(P, record(base, Echoes((same, flip))))
    assert g.symptom == "redundant"
    # ... but a claim becoming its fallback is allowed
    fb = Echo("redundant", "ok", (("False", "fallback"), ("False", "fallback")), ("6", "3", "9"))
    assert metamorphic(P, record(base, Echoes((same, fb)))) == []


def test_metamorphic_runs_are_attached_for_default_config():
    from shapefuzz.systems.jobs import Job, run_job

    o = run_job(Job(P.dumps(), "ref", "default", "[]"))
    assert [e.label for e in of(o, Echoes).echoes] == ["fresh", "redundant"]
    assert of(run_job(Job(P.dumps(), "ref", "all-off", "[]")), Echoes) is None


@pytest.mark.parametrize("kind", ["fresh", "redundant"])
@pytest.mark.parametrize("script", ["repro.py", "check.py"])
def test_metamorphic_repro_passes_and_fails(kind, script, tmp_path):
    import subprocess
    import sys

    from shapefuzz.cases.corpus import Case
    from shapefuzz.oracles.findings import Finding
    from shapefuzz.repro import check_source, repro_source

    p = QProgram(P.instrs[:4] + (QInstr("ask", ("bool", ">", Ref(0), 2)),))
    f = Finding("metamorphic", "medium", "torch-env", "default", kind, "s", "d",
                f"metamorphic:{kind}:torch-env:default")
    src = (repro_source if script == "repro.py" else check_source)(Case(f, p, None, torch_version="2.13"))
    path = tmp_path / script
    path.write_text(src)
    ok = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # plant a difference in the second run: its bool answer is negated
    if script == "repro.py":
        planted = src.replace("answers[-1].append((got,", "answers[-1].append((got if len(answers) == 1 else not got,")
    else:
        head, tail = src.split("def main2(", 1)
        planted = head + "def main2(" + tail.replace("bool(c)", "not bool(c)", 1)
    assert planted != src
    path.write_text(planted)
    bad = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert bad.returncode == 1 and "BUG" in bad.stdout, bad.stdout + bad.stderr


@pytest.mark.parametrize(("config", "code"), [("no-specialize-zero-one", 1), ("default", 0)])
def test_a_wrong_value_expr_repro_checks_the_value(config, code, tmp_path):
    """The truth oracle's wrong-value-expr issue form evaluates every value at the sizes' values:
    torch 2.13 makes a size-0 backed symbol positive without 0/1 specialization
    (corpus/zero-size-backed-positive-torch-env), so min(1, v0) folds to 1 where v0 = 0 (exit
    1); with 0/1 specialization the value is 0 (exit 0). Before, the form checked questions
    only, and such findings stayed unconfirmed."""
    import subprocess
    import sys

    from shapefuzz.cases.corpus import Case
    from shapefuzz.oracles.findings import Finding
    from shapefuzz.repro import repro_source

    p = QProgram((QInstr("backed", (0,)), QInstr("binop", ("min", 1, Ref(0)))))
    f = Finding("truth", "critical", "torch-env", config, "wrong-value-expr", "s",
                "value v1 = 1 evaluates to 1; its concrete value is 0", f"truth:wrong-value-expr:torch-env:{config}:C")
    path = tmp_path / "repro.py"
    path.write_text(repro_source(Case(f, p, None, torch_version="2.13")))
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert r.returncode == code, r.stdout + r.stderr
    assert ("BUG: value v1" in r.stdout) == (code == 1), r.stdout


@pytest.mark.parametrize(("config", "code"), [("no-specialize-zero-one", 1), ("default", 0)])
def test_an_unsound_value_expr_repro_checks_the_value_at_the_other_values(config, code, tmp_path):
    """The unsound-value-expr form evaluates each value at the finding's other values when
    every guard accepts them: without 0/1 specialization torch 2.13 takes the backed symbol as
    positive, so max(v0, 1) is v0, 0 at v0 = 0 where it is concretely 1 (exit 1); with it the
    symbol's range starts at 2 and the other value is rejected (exit 0)."""
    import subprocess
    import sys

    from shapefuzz.cases.corpus import Case
    from shapefuzz.oracles.findings import Finding
    from shapefuzz.repro import repro_source

    p = QProgram((QInstr("backed", (3,)), QInstr("binop", ("max", Ref(0), 1))))
    f = Finding("truth", "critical", "torch-env", config, "unsound-value-expr", "s",
                "value v1 = s0 evaluates to 0 with values [0]; concretely 1", f"truth:wrong-value-expr:torch-env:{config}:B")
    path = tmp_path / "repro.py"
    path.write_text(repro_source(Case(f, p, None, torch_version="2.13", alt_values=(0,))))
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert r.returncode == code, r.stdout + r.stderr
    assert ("BUG: value v1" in r.stdout) == (code == 1), r.stdout


# v0 = backed(2); v1 = max(v0, 1); ask(bool, v1 == v0): torch folds max(s0, 1) to s0 when it takes
# a backed symbol for positive, so the question it is asked is s0 == s0 (sympy: True)
FOLD = QProgram((QInstr("backed", (2,)), QInstr("binop", ("max", Ref(0), 1)),
                 QInstr("ask", ("bool", "==", Ref(1), Ref(0)))))


def _folded(evals=("2", "2"), replays=()):
    return record(Observation("torch-env", "no-specialize-zero-one", Outcome("ok"),
                              (Decision("True", "True", "static"),), (), (), out_exprs=("s0", "s0"),
                              binding=(("s0", 2),), out_eval=evals), QuestionReplays(replays))


def test_a_claim_over_a_wrong_value_is_the_value_s_finding():
    """Note [a claim over a wrong value]: at s0 = 0 the claim is false only because v1 = s0 is
    (concretely 1); the finding is the value's, bucketed by the rule that built it."""
    from shapefuzz.systems.qreplay import QReplay

    (f,) = truth_agreement(FOLD, _folded(replays=(QReplay((0,), True, ("0", "0")),)))
    assert (f.symptom, f.signature.shape) == ("unsound-value-expr", "wrong[max(sym,const)]"), f
    assert "v1 = s0" in f.detail


def test_a_wrong_claim_over_right_values_is_still_the_claim_s_finding():
    from shapefuzz.systems.qreplay import QReplay

    # the same claim where every operand evaluates right: the claim itself is wrong
    right = QProgram((QInstr("backed", (2,)), QInstr("ask", ("bool", "==", Ref(0), 0))))
    o = record(Observation("torch-env", "default", Outcome("ok"), (Decision("Eq(s0, 0)", "True", "static"),),
                           (), (), out_exprs=("s0",), binding=(("s0", 2),), out_eval=("2",)),
               QuestionReplays((QReplay((3,), True, ("3",)),)))
    kinds = [f.symptom for f in truth_agreement(right, o)]
    assert kinds == ["wrong-static"], kinds
