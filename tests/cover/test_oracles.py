"""The oracles on hand-made observations: every oracle fires on a planted disagreement and stays
quiet where the contract says it must. No tracing: observations are plain data."""

from __future__ import annotations

import math
import re

import pytest

from shapefuzz.oracles import check_all, compare_runs, eager_agreement, replay_agreement
from shapefuzz.oracles.findings import SEVERITIES, Finding
from shapefuzz.program import InputSpec, Instr, Program, Ref
from shapefuzz.systems.observation import Observation, Outcome, ReplayRecord, RunResult, Value

NAN, INF = math.nan, math.inf


# ---- builders -----------------------------------------------------------------------------------
def tv(*data, shape=None, dtype="float") -> Value:
    """A tensor value from flat data (1-D unless `shape` says otherwise)."""
    return Value("tensor", (len(data),) if shape is None else tuple(shape), dtype, tuple(data))


def iv(n: int) -> Value:
    return Value("int", (), "int", (n,))


def ok(*values: Value) -> RunResult:
    return RunResult(True, "", tuple(values))


def err(error="RuntimeError: boom", frame="_refs/__init__.py:narrow") -> RunResult:
    return RunResult(False, error, (), frame)


def xspec(n: int = 3, name: str = "x") -> InputSpec:
    return InputSpec(name, "float", (n,), ("dynamic",), tuple(float(k) for k in range(n)))


# x: float[3]; v1 = x + x; v2 = x.shape[0]; returns (v1, v2)
PROG = Program((xspec(),), (Instr("add", (Ref(0), Ref(0))), Instr("size", (Ref(0), 0))), (1, 2))
# the same disagreement can be planted in a different program: x * x, one output
PROG2 = Program((xspec(5, "y"),), (Instr("mul", (Ref(0), Ref(0))),), (1,))
# v1 = x.shape[0]; v2 = torch.empty(v1); v3 = x + x; returns (v2, v3): output 0 is undefined data
PROG_EMPTY = Program((xspec(),), (Instr("size", (Ref(0), 0)), Instr("empty", ((Ref(1),),)),
                                  Instr("add", (Ref(0), Ref(0)))), (2, 3))

GOOD = ok(tv(0.0, 2.0, 4.0), iv(3))  # what PROG returns on its inputs
GOOD_EXPRS, GOOD_EVAL = ("[s0]", "s0"), ("[3]", "3")


def eager_obs(result: RunResult = GOOD) -> Observation:
    status = "ok" if result.ok else "error"
    outcome = Outcome(status) if result.ok else Outcome("error", *result.error.split(": ", 1))
    return Observation("eager", "default", outcome, reference=result, artifact=result)


def traced(reference: RunResult = GOOD, artifact: RunResult = GOOD, *, system="export",
           config="dynamic", outcome: Outcome | None = None, out_exprs=(), out_eval=(),
           binding=(("s0", 3),), replays=()) -> Observation:
    return Observation(system, config, outcome or Outcome("ok"), out_exprs=tuple(out_exprs),
                       binding=tuple(binding), out_eval=tuple(out_eval), reference=reference,
                       artifact=artifact, replays=tuple(replays))


def replay(reference: RunResult, artifact: RunResult | None, accepted: bool = True,
           n: int = 4) -> ReplayRecord:
    return ReplayRecord((xspec(n),), accepted, reference, artifact)


def kinds(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.oracle, f.symptom) for f in findings]


def one(findings: list[Finding], oracle: str, kind: str) -> Finding:
    assert kinds(findings) == [(oracle, kind)], findings
    f = findings[0]
    assert f.severity in SEVERITIES
    assert f.summary and "\n" not in f.summary
    assert f.detail and f.key
    return f


def check(obs: Observation, eager: Observation | None = None, program: Program = PROG) -> list[Finding]:
    return check_all(program, eager or eager_obs(), [obs])


# ---- eager agreement: fires ---------------------------------------------------------------------
def test_wrong_value_fires():
    f = one(check(traced(artifact=ok(tv(0.0, 2.0, 5.0), iv(3)))), "eager-agreement", "wrong-value")
    assert f.severity == "critical" and f.system == "export" and f.config == "dynamic"
    assert f.replay_index == -1
    assert "output 0" in f.detail and "5.0" in f.detail


def test_wrong_int_value_fires():
    f = one(check(traced(artifact=ok(tv(0.0, 2.0, 4.0), iv(4)))), "eager-agreement", "wrong-value")
    assert "output 1" in f.detail


def test_wrong_shape_fires():
    bad = ok(tv(0.0, 2.0, 4.0, 6.0), iv(3))
    f = one(check(traced(artifact=bad)), "eager-agreement", "wrong-shape")
    assert "output 0" in f.detail


def test_same_numbers_other_shape_is_wrong_shape():
    bad = ok(tv(0.0, 2.0, 4.0, shape=(3, 1)), iv(3))
    one(check(traced(artifact=bad)), "eager-agreement", "wrong-shape")


def test_wrong_dtype_fires_as_wrong_shape():
    bad = ok(tv(0, 2, 4, dtype="int"), iv(3))
    one(check(traced(artifact=bad)), "eager-agreement", "wrong-shape")


def test_tensor_where_int_expected_fires():
    bad = ok(tv(0.0, 2.0, 4.0), tv(3, shape=(), dtype="int"))
    one(check(traced(artifact=bad)), "eager-agreement", "wrong-shape")


@pytest.mark.parametrize("values", [(tv(0.0, 2.0, 4.0),), (tv(0.0, 2.0, 4.0), iv(3), iv(3)), ()])
def test_wrong_arity_fires(values):
    f = one(check(traced(artifact=ok(*values))), "eager-agreement", "wrong-arity")
    assert str(len(values)) in f.detail


def test_accepts_invalid_fires():
    ref = err("RuntimeError: start (4) + length (1) exceeds dimension size (3).")
    obs = traced(reference=ref, artifact=GOOD)
    f = one(check(obs, eager_obs(ref)), "eager-agreement", "accepts-invalid")
    assert f.severity == "critical"
    assert "RuntimeError" in f.key and "exceeds" not in f.key


def test_error_where_eager_succeeds_fires():
    art = err("IndexError: index 3 is out of bounds", "_decomp/decompositions.py:narrow")
    f = one(check(traced(artifact=art)), "eager-agreement", "error-where-eager-succeeds")
    assert "IndexError@_decomp/decompositions.py:narrow" in f.key
    assert "out of bounds" in f.detail and "out of bounds" not in f.key


@pytest.mark.parametrize("out_eval,why", [(("[4]", "3"), "tensor"), (("[3]", "7"), "int")])
def test_symbolic_shape_mismatch_fires(out_eval, why):
    f = one(check(traced(out_exprs=GOOD_EXPRS, out_eval=out_eval)), "eager-agreement", "symbolic-shape")
    assert f.key.endswith(why)
    assert ("4" if why == "tensor" else "7") in f.summary


def test_symbolic_shape_reports_only_the_first_mismatch():
    f = one(check(traced(out_exprs=GOOD_EXPRS, out_eval=("[4]", "7"))), "eager-agreement", "symbolic-shape")
    assert "output 0" in f.detail


def test_symbolic_shape_and_wrong_value_both_reported():
    obs = traced(artifact=ok(tv(0.0, 2.0, 5.0), iv(3)), out_exprs=GOOD_EXPRS, out_eval=("[2]", "3"))
    assert kinds(check(obs)) == [("eager-agreement", "wrong-value"), ("eager-agreement", "symbolic-shape")]


def test_symbolic_shape_of_zero_dim_tensor():
    ref = ok(tv(1.0, shape=()))
    assert check(traced(ref, ref, out_exprs=("[]",), out_eval=("[]",))) == []
    one(check(traced(ref, ref, out_exprs=("[u0]",), out_eval=("[1]",))), "eager-agreement", "symbolic-shape")


def test_trace_error_fires():
    o = Outcome("error", "Unsupported", "data dependent operator: aten.nonzero\nmore", "_dynamo/exc.py:unimplemented")
    f = one(check(traced(outcome=o, reference=None, artifact=None)), "eager-agreement", "trace-error")
    assert f.severity == "critical"
    assert "Unsupported" in f.summary and "_dynamo/exc.py:unimplemented" in f.detail
    assert f.key.endswith("Unsupported:_dynamo/exc.py:unimplemented")


@pytest.mark.parametrize("status", ["crash", "timeout"])
def test_crash_and_timeout_fire(status):
    o = Outcome(status, "", "worker died with signal 11" if status == "crash" else "60s")
    f = one(check(traced(outcome=o, reference=None, artifact=None)), "eager-agreement", status)
    assert f.severity == "high"
    assert f.detail == o.message


@pytest.mark.parametrize("status", ["crash", "timeout"])
def test_crash_and_timeout_fire_even_when_eager_errors(status):
    obs = traced(outcome=Outcome(status, "", "x"), reference=None, artifact=None)
    one(check(obs, eager_obs(err())), "eager-agreement", status)


def test_float_outside_tolerance_fires():
    one(check(traced(artifact=ok(tv(0.0, 2.0, 4.001), iv(3)))), "eager-agreement", "wrong-value")
    one(check(traced(artifact=ok(tv(0.0, 2.0 + 1e-4, 4.0), iv(3)))), "eager-agreement", "wrong-value")


@pytest.mark.parametrize("a,b", [(NAN, 1.0), (1.0, NAN), (NAN, 0.0)])
def test_nan_against_a_number_fires(a, b):
    obs = traced(ok(tv(a), iv(3)), ok(tv(b), iv(3)))
    one(check(obs), "eager-agreement", "wrong-value")


# ---- eager agreement: quiet ---------------------------------------------------------------------
def test_identical_runs_are_quiet():
    assert check(traced(out_exprs=GOOD_EXPRS, out_eval=GOOD_EVAL)) == []


def test_eager_observation_itself_is_quiet():
    e = eager_obs()
    assert eager_agreement(e, e, frozenset()) == []
    assert check_all(PROG, e, [e, traced()]) == []


def test_both_erroring_is_quiet_even_with_different_errors():
    obs = traced(reference=err("RuntimeError: a"), artifact=err("ValueError: b", "x.py:f"))
    assert check(obs, eager_obs(err("RuntimeError: a"))) == []


@pytest.mark.parametrize("status", ["dde", "constraint"])
def test_dde_and_constraint_outcomes_are_quiet(status):
    o = Outcome(status, "GuardOnDataDependentSymNode", "Could not guard on u0 < 3", "x.py:f", "u0 < 3")
    assert check(traced(outcome=o, reference=None, artifact=None)) == []
    # even if the (absent in practice) runs would disagree
    assert check(traced(outcome=o, artifact=err())) == []


def test_trace_error_when_eager_also_errors_is_quiet():
    o = Outcome("error", "RuntimeError", "narrow out of range", "_refs/__init__.py:narrow")
    assert check(traced(outcome=o, reference=None, artifact=None), eager_obs(err())) == []


@pytest.mark.parametrize("a,b", [
    (1.0, 1.0 + 5e-6),           # absolute, below 1
    (0.0, 9e-6),
    (1e6, 1e6 + 9.0),            # relative: 9e-6
    (-3.0e4, -3.0e4 - 0.25),
    (2.0, 2),                    # int and float compare by value
])
def test_float_within_tolerance_is_quiet(a, b):
    assert check(traced(ok(tv(a), iv(3)), ok(tv(b), iv(3)))) == []


def test_nan_equals_nan():
    obs = traced(ok(tv(NAN, 1.0), iv(3)), ok(tv(NAN, 1.0), iv(3)))
    assert check(obs) == []


def test_undefined_outputs_differing_only_in_data_are_quiet():
    assert PROG_EMPTY.undefined_data() == frozenset({2})
    ref = ok(tv(1e30, NAN, 0.0), tv(0.0, 2.0, 4.0))
    art = ok(tv(7.0, -1.0, 3.0), tv(0.0, 2.0, 4.0))
    obs = traced(ref, art, out_exprs=("[s0]", "[s0]"), out_eval=("[3]", "[3]"))
    assert check(obs, program=PROG_EMPTY) == []
    assert compare_runs(ref, art, frozenset({0})) is None


def test_undefined_outputs_are_still_compared_by_shape():
    ref = ok(tv(1.0, 2.0, 3.0), tv(0.0, 2.0, 4.0))
    art = ok(tv(1.0, 2.0), tv(0.0, 2.0, 4.0))
    one(check(traced(ref, art), program=PROG_EMPTY), "eager-agreement", "wrong-shape")


def test_defined_outputs_of_a_program_with_empty_are_still_compared():
    ref = ok(tv(1.0, 2.0, 3.0), tv(0.0, 2.0, 4.0))
    art = ok(tv(1.0, 2.0, 3.0), tv(0.0, 2.0, 4.5))
    f = one(check(traced(ref, art), program=PROG_EMPTY), "eager-agreement", "wrong-value")
    assert "output 1" in f.detail


def test_undefined_index_is_an_output_position_not_a_value_index():
    # the same runs under PROG (no empty) do fire: undefined-ness comes from the program
    ref = ok(tv(1.0, 2.0, 3.0), tv(0.0, 2.0, 4.0))
    art = ok(tv(7.0, 2.0, 3.0), tv(0.0, 2.0, 4.0))
    one(check(traced(ref, art), program=PROG), "eager-agreement", "wrong-value")
    assert check(traced(ref, art), program=PROG_EMPTY) == []


def test_unevaluable_symbolic_shape_is_quiet():
    assert check(traced(out_exprs=("[u0]", "u1"), out_eval=("", ""))) == []


def test_symbolic_shape_not_checked_when_reference_errors():
    ref = err()
    obs = traced(ref, err("ValueError: x"), out_exprs=GOOD_EXPRS, out_eval=("[4]", "9"))
    assert check(obs, eager_obs(ref)) == []


# ---- replay agreement ---------------------------------------------------------------------------
BAD = ok(tv(0.0, 2.0, 4.0, 7.0), iv(4))
REF4 = ok(tv(0.0, 2.0, 4.0, 6.0), iv(4))


def test_accepted_replay_disagreeing_fires():
    obs = traced(replays=[replay(REF4, BAD)])
    f = one(check(obs), "replay", "wrong-value")
    assert f.replay_index == 0 and f.severity == "critical"
    assert "replay input 0" in f.detail and "x[4]" in f.detail


def test_replay_index_points_at_the_disagreeing_record():
    recs = [
        replay(REF4, REF4),                              # 0: agrees
        replay(REF4, RunResult(False, "guard failed"), accepted=False),  # 1: rejected
        replay(REF4, BAD, accepted=False),               # 2: rejected, disagrees
        replay(REF4, None, accepted=False),              # 3: rejected, no artifact run
        replay(err(), err("ValueError: other")),         # 4: both error
        replay(ok(tv(1.0), iv(1)), ok(tv(1.5), iv(1)), n=1),  # 5: accepted, disagrees
        replay(REF4, BAD),                               # 6: a later disagreement
    ]
    f = one(replay_agreement(traced(replays=recs), frozenset()), "replay", "wrong-value")
    assert f.replay_index == 5
    assert "replay input 5 (x[1])" in f.detail


@pytest.mark.parametrize("artifact", [BAD, None, RunResult(False, "Runtime assertion failed: u0 >= 0")])
def test_rejected_replay_is_quiet(artifact):
    obs = traced(replays=[replay(REF4, artifact, accepted=False)])
    assert check(obs) == []


def test_replay_where_both_error_is_quiet():
    obs = traced(replays=[replay(err("RuntimeError: a"), err("IndexError: b", "y.py:g"))])
    assert check(obs) == []


def test_agreeing_replays_are_quiet():
    assert check(traced(replays=[replay(REF4, REF4), replay(GOOD, GOOD, n=3)])) == []


@pytest.mark.parametrize("ref,art,kind", [
    (err("RuntimeError: size mismatch"), REF4, "accepts-invalid"),
    (REF4, err("RuntimeError: index out of range", "_ops.py:__call__"), "error-where-eager-succeeds"),
    (REF4, ok(tv(0.0, 2.0, 4.0), iv(4)), "wrong-shape"),
    (REF4, ok(tv(0.0, 2.0, 4.0, 6.0)), "wrong-arity"),
])
def test_replay_disagreement_kinds(ref, art, kind):
    f = one(check(traced(replays=[replay(ref, art)])), "replay", kind)
    assert f.replay_index == 0


def test_replay_ignores_undefined_data():
    ref = ok(tv(1.0, 2.0, 3.0, 4.0), tv(0.0, 2.0, 4.0, 6.0))
    art = ok(tv(9.0, 9.0, 9.0, 9.0), tv(0.0, 2.0, 4.0, 6.0))
    obs = traced(ok(tv(0.0, 0.0, 0.0), tv(0.0, 2.0, 4.0)), ok(tv(1.0, 1.0, 1.0), tv(0.0, 2.0, 4.0)),
                 replays=[replay(ref, art)])
    assert check(obs, program=PROG_EMPTY) == []
    assert kinds(check(obs, program=PROG)) == [("eager-agreement", "wrong-value"), ("replay", "wrong-value")]


@pytest.mark.parametrize("status", ["error", "dde", "constraint", "crash", "timeout"])
def test_replays_of_a_failed_trace_are_ignored(status):
    obs = traced(outcome=Outcome(status, "E", "m"), replays=[replay(REF4, BAD)])
    assert replay_agreement(obs, frozenset()) == []


def test_eager_and_replay_findings_together():
    obs = traced(artifact=ok(tv(0.0, 2.0, 5.0), iv(3)), replays=[replay(REF4, BAD)])
    fs = check(obs)
    assert kinds(fs) == [("eager-agreement", "wrong-value"), ("replay", "wrong-value")]
    assert fs[0].key != fs[1].key
    assert [f.replay_index for f in fs] == [-1, 0]


def test_check_all_covers_every_observation():
    a = traced(artifact=ok(tv(0.0, 2.0, 5.0), iv(3)), system="export")
    b = traced(outcome=Outcome("crash", "", "segfault"), reference=None, artifact=None, system="dynamo")
    c = traced(system="aot")
    fs = check_all(PROG, eager_obs(), [a, b, c])
    assert [(f.system, f.symptom) for f in fs] == [("export", "wrong-value"), ("dynamo", "crash")]


# ---- signatures ---------------------------------------------------------------------------------
def _sig(fs):
    assert len(fs) == 1, fs
    return fs[0].key


def test_same_disagreement_in_two_programs_has_the_same_signature():
    s1 = _sig(check(traced(artifact=ok(tv(0.0, 2.0, 5.0), iv(3))), program=PROG))
    y = ok(tv(0.0, 1.0, 4.0, 9.0, 16.0))
    s2 = _sig(check(traced(y, ok(tv(0.0, 1.0, 4.0, 9.0, 17.5)), binding=(("s1", 5),)), program=PROG2))
    assert s1 == s2


def test_same_error_with_different_messages_has_the_same_signature():
    def sig(msg, program, eager):
        o = Outcome("error", "Unsupported", msg, "_dynamo/exc.py:unimplemented")
        return _sig(check(traced(outcome=o, reference=None, artifact=None), eager_obs(eager), program))

    assert sig("dynamic shape operator: aten.nonzero at 0x7f00aa", PROG, GOOD) == \
        sig("dynamic shape operator: aten.repeat_interleave", PROG2, ok(tv(0.0, 1.0)))

    def sig2(error, program):
        return _sig(check(traced(artifact=err(error, "_ops.py:__call__")), program=program))

    assert sig2("RuntimeError: shape '[3]' is invalid for input of size 4", PROG) == \
        sig2("RuntimeError: shape '[7, 2]' is invalid for input of size 9", PROG2)


def test_same_replay_disagreement_in_two_programs_has_the_same_signature():
    s1 = _sig(check(traced(replays=[replay(REF4, BAD)]), program=PROG))
    s2 = _sig(check(traced(ok(tv(0.0)), ok(tv(0.0)),
                           replays=[replay(REF4, REF4), replay(ok(tv(1.0)), ok(tv(2.0)), n=1)]),
                    program=PROG2))
    assert s1 == s2


PLANTS = {
    "wrong-value": dict(artifact=ok(tv(0.0, 2.0, 5.0), iv(3))),
    "wrong-shape": dict(artifact=ok(tv(0.0, 2.0), iv(3))),
    "wrong-arity": dict(artifact=ok(tv(0.0, 2.0, 4.0))),
    "error-where-eager-succeeds": dict(artifact=err()),
    "symbolic-shape": dict(out_exprs=GOOD_EXPRS, out_eval=("[4]", "3")),
    "trace-error": dict(outcome=Outcome("error", "RuntimeError", "m", "_refs/__init__.py:narrow"),
                        reference=None, artifact=None),
    "crash": dict(outcome=Outcome("crash", "", "m"), reference=None, artifact=None),
    "timeout": dict(outcome=Outcome("timeout", "", "m"), reference=None, artifact=None),
    "replay-wrong-value": dict(replays=[replay(REF4, BAD)]),
}


def test_different_kinds_have_different_signatures():
    sigs = {name: _sig(check(traced(**kw))) for name, kw in PLANTS.items()}
    sigs["accepts-invalid"] = _sig(check(traced(err(), GOOD), eager_obs(err())))
    assert len(set(sigs.values())) == len(sigs), sigs


@pytest.mark.parametrize("name", sorted(PLANTS))
def test_different_systems_and_configs_have_different_signatures(name):
    kw = PLANTS[name]
    base = _sig(check(traced(**kw)))
    other_system = _sig(check(traced(system="dynamo", **kw)))
    other_config = _sig(check(traced(config="static", **kw)))
    assert len({base, other_system, other_config}) == 3
    assert "export" in base and "dynamo" in other_system and "static" in other_config


def test_different_exception_types_and_frames_have_different_signatures():
    a = _sig(check(traced(artifact=err("RuntimeError: m", "_ops.py:__call__"))))
    b = _sig(check(traced(artifact=err("IndexError: m", "_ops.py:__call__"))))
    c = _sig(check(traced(artifact=err("RuntimeError: m", "_refs/__init__.py:narrow"))))
    assert len({a, b, c}) == 3


HOSTILE_MSG = ("RuntimeError: failed at /usr/lib/python3.12/site-packages/torch/_refs/__init__.py:123 "
               "for <torch.fx.Node object at 0x7f3a2b1c9d40> (id 140234567890)")


def _hostile_findings() -> list[Finding]:
    out = []
    rel = "_refs/__init__.py:narrow"
    o = Outcome("error", "RuntimeError", HOSTILE_MSG, rel)
    out += check(traced(outcome=o, reference=None, artifact=None))
    out += check(traced(outcome=Outcome("crash", "", HOSTILE_MSG), reference=None, artifact=None))
    out += check(traced(outcome=Outcome("timeout", "", HOSTILE_MSG), reference=None, artifact=None))
    out += check(traced(artifact=RunResult(False, HOSTILE_MSG, (), rel)))
    out += check(traced(RunResult(False, HOSTILE_MSG, (), rel), GOOD), eager_obs(err(HOSTILE_MSG)))
    other = Value("other", (), "Node", ("<torch.fx.Node object at 0x7f3a2b1c9d40>",))
    out += check(traced(ok(tv(0.0, 2.0, 4.0), other), ok(tv(0.0, 2.0, 4.0), iv(3))))
    out += check(traced(replays=[replay(REF4, RunResult(False, HOSTILE_MSG, (), rel))]))
    out += check(traced(artifact=ok(tv(0.0, 2.0, 5.0), iv(3)),
                        out_exprs=GOOD_EXPRS, out_eval=("[4]", "3")))
    return out


def test_signatures_hold_no_paths_addresses_or_messages():
    fs = _hostile_findings()
    assert len(fs) == 9
    for f in fs:
        s = f.key
        assert not re.search(r"0x[0-9a-fA-F]+", s), s
        assert not re.search(r"(^|[\s:@'\"(])/", s), s  # no absolute POSIX path
        assert not re.search(r"[A-Za-z]:\\", s), s       # no absolute Windows path
        assert "site-packages" not in s and "140234567890" not in s and "object at" not in s, s
        assert "\n" not in s and " " not in s, s
        assert s.split(":", 1)[0] in ("eager-agreement", "replay")


def test_signature_does_not_depend_on_data_or_elapsed_time():
    a = traced(artifact=ok(tv(0.0, 2.0, 5.0), iv(3)))
    b = traced(ok(tv(9.0, 9.0), iv(2)), ok(tv(9.0, 8.0), iv(2)), binding=(("s0", 2),))
    b = Observation(b.system, b.config, b.outcome, reference=b.reference, artifact=b.artifact,
                    elapsed_s=12.5, log=("line",), guards=("Eq(s0, 2)",))
    assert _sig(check(a)) == _sig(check(b))


# ---- known oracle bugs (see the report); strict so a fix turns these red until un-marked -----------
def test_equal_infinities_are_quiet():
    assert check(traced(ok(tv(INF, -INF), iv(3)), ok(tv(INF, -INF), iv(3)))) == []


@pytest.mark.parametrize("a,b", [(INF, 1.0), (1.0, INF), (INF, -INF), (-INF, 0.0)])
def test_infinity_against_another_number_fires(a, b):
    one(check(traced(ok(tv(a), iv(3)), ok(tv(b), iv(3)))), "eager-agreement", "wrong-value")


# v1 = x.shape[0]; v2 = torch.empty(v1); v3 = v2.long(); v4 = v3.sum().item(): an int of undefined data
PROG_EMPTY_ITEM = Program((xspec(),), (Instr("size", (Ref(0), 0)), Instr("empty", ((Ref(1),),)),
                                       Instr("cast", (Ref(2), "int")), Instr("item", (Ref(3), "sum"))),
                          (4,))


def test_int_of_undefined_data_has_no_wrong_value():
    assert PROG_EMPTY_ITEM.undefined_data() >= {4}
    obs = traced(ok(iv(5)), ok(iv(-17)))
    assert check(obs, eager_obs(ok(iv(5))), PROG_EMPTY_ITEM) == []


def test_symbolic_value_of_undefined_int_is_quiet():
    obs = traced(ok(iv(5)), ok(iv(-17)), out_exprs=("u0",), out_eval=("-17",), binding=(("u0", -17),))
    assert check(obs, eager_obs(ok(iv(5))), PROG_EMPTY_ITEM) == []


def test_a_replay_failing_as_the_traced_inputs_did_is_not_a_second_finding():
    """torch.compile whose first call raised compiles again on each new input and raises the
    same error: eager agreement reports it once; a replay failing another way still fires."""
    same = err("Unsupported: torch.* op returned non-Tensor", "_dynamo/eval_frame.py:compile_wrapper")
    obs = traced(artifact=same, replays=[replay(REF4, same)])
    assert [k for k in kinds(check(obs)) if k[0] == "replay"] == []
    other = err("IndexError: out of range", "_refs/__init__.py:index")
    obs = traced(artifact=same, replays=[replay(REF4, other)])
    assert ("replay", "error-where-eager-succeeds") in kinds(check(obs))


def test_an_aggressive_level_on_other_arms_is_judged_by_eager_not_by_its_baseline():
    """Note [different arms]: all-off took a branch's fast arm (0), agfs=2 fell back to the general
    arm ((u0 - 1) // 3 = -1 at u0 = 0): two programs, each judged against its own forced-eager
    reference; the same values on the same arms are still compared, and a semantics-preserving
    config that changes the arms is still a mismatch."""
    from shapefuzz.oracles.differential import config_mismatch

    base = Observation("ref", "all-off", Outcome("ok"), out_exprs=("0",), out_eval=("0",))
    other_arm = Observation("ref", "agfs=2", Outcome("ok"), out_exprs=("((u0 - 1)//3)",), out_eval=("-1",),
                            fallback_branches=(4,))
    assert config_mismatch(base, other_arm, aggressive=True, diverging=True) is None
    same_arm = Observation("ref", "agfs=2", Outcome("ok"), out_exprs=("0",), out_eval=("-1",))
    assert "value 0" in config_mismatch(base, same_arm, aggressive=True, diverging=True)
    assert "general arm" in config_mismatch(base, other_arm, aggressive=False, diverging=True)
