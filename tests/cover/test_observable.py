"""The config differential on tensor programs compares what the program can observe (Note
[observable behaviour], shapefuzz/oracles/observable.py), not ShapeEnv's internal decisions."""

from __future__ import annotations

from dataclasses import replace

from shapefuzz.oracles.differential import config_mismatch
from shapefuzz.systems.observation import Decision, Observation, Outcome, RunResult, Value

OUT = RunResult(True, "", (Value("tensor", (2,), "int", (1, 2)),))
BASE = Observation("make_fx", "default", Outcome("ok"), (Decision("Eq(u1, 0)", "False", "guard"),),
                   guards=("s0 >= 2",), out_exprs=("[s0]",), out_eval=("[2]",), artifact=OUT,
                   axioms=((0, "size", "s0 >= 0"),))


def test_other_internal_decisions_with_the_same_behaviour_are_no_mismatch():
    # the noise of issue 17: "question 97: Eq(u1, 0) vs s71 >= 2", equal outputs and guards
    other = replace(BASE, config="slow:expr-cache", guards=("2 <= s0",),
                    decisions=(Decision("s71 >= 2", "True", "static"), Decision("Eq(u1, 0)", "False", "guard")))
    assert config_mismatch(BASE, other, False, diverging=True) is None


def test_an_observable_difference_is_a_mismatch():
    wrong = replace(BASE, config="slow:x", artifact=RunResult(True, "", (Value("tensor", (2,), "int", (1, 3)),)))
    assert "output 0" in config_mismatch(BASE, wrong, False, diverging=True)
    shape = replace(BASE, config="slow:x", out_eval=("[3]",))
    assert "value 0" in config_mismatch(BASE, shape, False, diverging=True)
    branch = replace(BASE, config="slow:x", fallback_branches=(3,))
    assert "general arm" in config_mismatch(BASE, branch, False, diverging=True)


def test_guards_are_compared_up_to_z3_equivalence():
    weaker = replace(BASE, config="slow:x", guards=())  # accepts s0 = 1, which the baseline refuses
    why = config_mismatch(BASE, weaker, False, diverging=True)
    assert why and "s0 >= 2" in why
    same = replace(BASE, config="slow:x", guards=("s0 > 1",))
    assert config_mismatch(BASE, same, False, diverging=True) is None
    # an aggressive level may trade a guard for a fallback
    assert config_mismatch(BASE, weaker, True, diverging=True) is None


def test_single_toggle_blame_judges_tensor_programs_by_the_same_rule():
    from shapefuzz.oracles.differential import _single_toggle_blame

    noisy = replace(BASE, config="slow:expr-cache", decisions=(Decision("s71 >= 2", "True", "static"),))
    wrong = replace(BASE, config="slow:no-hint", out_eval=("[3]",))
    cfgs = {"default": BASE, "slow:expr-cache": noisy, "slow:no-hint": wrong}
    assert _single_toggle_blame(BASE, cfgs, diverging=True) == "expr-cache"
    assert _single_toggle_blame(BASE, cfgs) == ""  # decision by decision, the noise hides it


def test_a_check_an_aggressive_level_defers_to_run_time_is_no_mismatch():
    # Note [checks moved to run time]: all-off fails reshape's check while tracing; agfs=2
    # answers the question before it with a fallback, defers the check as a runtime assert, and
    # its artifact raises on the same input
    claim = (Decision("Eq(u2, 0)", "False", "static"),)
    base = replace(BASE, config="all-off", outcome=Outcome("error", "RuntimeError", "shape is invalid"),
                   decisions=claim, artifact=None)
    raised = RunResult(False, "RuntimeError: cannot reshape tensor of 0 elements")
    deferred = replace(BASE, config="agfs=2", decisions=(Decision("Eq(u2, 0)", "False", "fallback"),),
                       artifact=raised)
    assert config_mismatch(base, deferred, True, diverging=True) is None
    # the same pair is a mismatch when the artifact runs through (the check was dropped), when
    # no fallback split the paths, or when the level is not aggressive
    dropped = replace(deferred, artifact=OUT)
    assert "outcome error" in config_mismatch(base, dropped, True, diverging=True)
    no_split = replace(deferred, decisions=claim)
    assert "outcome error" in config_mismatch(base, no_split, True, diverging=True)
    assert "outcome error" in config_mismatch(base, deferred, False, diverging=True)


def test_a_runtime_assert_an_aggressive_level_deferred_failing_on_the_traced_input_is_no_mismatch():
    # Note [checks moved to run time], both traces ok: all-off decides the broadcast (a size is
    # 1); agfs=2 falls back at once (not 1), defers torch._check(size == u0), and its artifact's
    # assert fails on the traced input (found by ref's tensor campaign, seed 0, 2026-12-04)
    claim = (Decision("Eq(Max(-Min(0, u0) + Min(1, u0), 0), 1)", "True", "static"),)
    base = replace(BASE, config="all-off", decisions=claim)
    asserted = RunResult(False, "Runtime assertion failed for expression Eq(Max(-Min(0, u0) + Min(1, u0), 0), u0)")
    fallback = (Decision("Eq(Max(-Min(0, u0) + Min(1, u0), 0), 1)", "False", "fallback"),)
    deferred = replace(BASE, config="agfs=2", decisions=fallback, artifact=asserted)
    assert config_mismatch(base, deferred, True, diverging=True) is None
    # a mismatch still: without the fallback that split the paths, with another error than a
    # runtime assert, or when the level is not aggressive
    assert "artifact returned" in config_mismatch(base, replace(deferred, decisions=claim), True, diverging=True)
    other = replace(deferred, artifact=RunResult(False, "RuntimeError: The size of tensor a (1) must match"))
    assert "artifact returned" in config_mismatch(base, other, True, diverging=True)
    assert "artifact returned" in config_mismatch(base, deferred, False, diverging=True)
