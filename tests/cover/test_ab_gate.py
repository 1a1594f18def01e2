"""A/B mode as a patch gate (Notes [pre-existing findings] in oracles/ab.py, [pre-existing at
confirmation] in campaign/ab_confirm.py, [the baseline rejects its own input]): the exit code is
1 only for a difference between candidate and baseline; a finding both builds show is reported,
marked pre-existing, and fails the run only under --strict; a candidate that drops a fact the
baseline's own traced input fails is an improvement. Hand-made observations and throwaway
scripts: no torch run."""

from __future__ import annotations

import dataclasses
import json
import sys
import time

import pytest

from shapefuzz.campaign.ab_confirm import (
    BASELINE_CONFIRM,
    BaselineConfirm,
    baseline_shows,
    mark_rows,
)
from shapefuzz.campaign.run import exit_code
from shapefuzz.cases.corpus import Case, save_case
from shapefuzz.oracles import check_all
from shapefuzz.oracles.ab import ABEvidence, improvements, mark, self_refuted
from shapefuzz.program import Ref
from shapefuzz.program.questions import QInstr, QProgram
from shapefuzz.repro.ab import Baseline
from shapefuzz.systems.observation import (
    Decision,
    Observation,
    Outcome,
    ReplayRecord,
    RunResult,
    SmtCheck,
    Value,
)

# v0 = backed(6); v1 = unbacked(3); check(v1 >= 0); ask(guard_or_false, v1 >= 2); v2 = v0 + v1
P = QProgram((QInstr("backed", (6,)), QInstr("unbacked", (3,)), QInstr("check", (">=", Ref(1), 0)),
              QInstr("ask", ("guard_or_false", ">=", Ref(1), 2)), QInstr("binop", ("+", Ref(0), Ref(1)))))
SPEC = ABEvidence("/usr/bin/python3", (("PYTHONPATH", ""),), 0)
#: the shape of torch 2.13's deferred check in causal SDPA with unbacked sizes (0 <= 1/sqrt(u)),
#: here shifted so that it fails at P's own value u0 = 3
SDPA_LIKE = "0 <= FloatTrueDiv(1.0, OpaqueUnaryFn_sqrt(ToFloat(u0 - 3)))"


def obs(answer="True", how="static", u="u0", status="ok", asserts=None, replays=(), smt=(), expr=""):
    asserts = (f"{u} >= 0",) if asserts is None else asserts
    return Observation("torch-env", "default", Outcome(status, expr=expr), (Decision(f"{u} >= 2", answer, how),),
                       (), asserts, out_exprs=("s0", u, f"s0 + {u}"), binding=(("s0", 6), (u, 3)),
                       out_eval=("6", "3", "9"), replays=replays, smt=smt, elapsed_s=0.01)


def ab(cand, base):
    return [f for f in check_all(P, None, [cand, mark(base, SPEC)]) if f.oracle == "ab"]


# ---- pre-existing, from every oracle ------------------------------------------------------------
def _spurious(u="u0"):
    """A DDE on a question the facts decide: the spurious-dde oracle's, which compares all of a
    program's observations rather than one (it was never marked pre-existing before)."""
    check = SmtCheck("spurious-dde", -1, f"{u} >= 2", "unsat", "the facts prove it true")
    return dataclasses.replace(obs(u=u, status="dde", expr=f"{u} >= 2"), decisions=(), smt=(check,))


def test_a_spurious_dde_both_builds_raise_is_pre_existing_and_one_only_the_candidate_raises_is_not():
    both = [f for f in check_all(P, None, [_spurious(), mark(_spurious("u5"), SPEC)]) if f.oracle == "spurious-dde"]
    assert both and all(f.pre_existing for f in both), both
    alone = check_all(P, None, [_spurious(), mark(obs(), SPEC)])
    assert [f for f in alone if f.oracle == "spurious-dde" and not f.pre_existing], alone
    assert any(f.oracle == "ab" and f.symptom == "lost-precision" for f in alone)


# ---- the exit code ------------------------------------------------------------------------------
def test_the_gate_fails_on_a_difference_and_not_on_what_both_builds_show():
    regression = {"signature": "ab:regression:torch-env:default:truth", "oracle": "ab", "pre_existing": False}
    shared = {"signature": "truth:wrong-claim:torch-env:default", "oracle": "truth", "pre_existing": True}
    assert exit_code([regression], [], strict=False) == 1
    assert exit_code([shared, regression], [], strict=False) == 1
    assert exit_code([shared], [], strict=False) == 0
    assert exit_code([shared], [], strict=True) == 1  # --strict: every finding counts


def test_planted_regression_fails_the_gate_and_a_shared_bug_does_not():
    """From observations to the exit code: the rows a campaign would build from check_all."""
    def rows(cand, base):
        return [{"signature": f.key, "pre_existing": f.pre_existing}
                for f in check_all(P, None, [cand, mark(base, SPEC)])]

    wrong = obs("False", "static")  # a claim P's own values refute
    assert exit_code(rows(wrong, obs(u="u4")), [], strict=False) == 1  # only the candidate: regression
    shared = rows(wrong, obs("False", "static", u="u4"))
    assert shared and exit_code(shared, [], strict=False) == 0
    assert exit_code(shared, [], strict=True) == 1


# ---- pre-existing at confirmation ---------------------------------------------------------------
def _case_dir(tmp_path, repro: str):
    (f,) = [g for g in check_all(P, None, [obs("False", "static")]) if g.oracle == "truth"]
    return save_case(tmp_path, Case(f, P, None), repro, "")


REPRO = ("import os, sys\n"
         "if os.environ.get('SF_TEST_BASELINE_FIXED'):\n    print('OK'); sys.exit(0)\n"
         "print('BUG: got 7, expected 6'); sys.exit(1)\n")


def _confirm(d, timeout_s):  # the candidate's confirmation, as run._exits_1 records it
    (d / "confirm.txt").write_text("exit 1\nBUG: got 7, expected 6\n")
    return True


def test_a_repro_that_fails_under_the_baseline_too_is_pre_existing(tmp_path):
    d = _case_dir(tmp_path, REPRO)
    assert BaselineConfirm(Baseline(sys.executable, (("SF_AB_NOISE", ""),)), _confirm)(d, 30.0)
    assert (d / BASELINE_CONFIRM).read_text().startswith("exit 1\n") and baseline_shows(d)
    rows = [{"case_dir": str(d), "pre_existing": False, "signature": "s"}]
    mark_rows(rows)
    assert rows[0]["pre_existing"] and "baseline" in rows[0]["pre_existing_by"]
    assert exit_code(rows, [], strict=False) == 0


def test_a_repro_the_baseline_passes_is_a_difference(tmp_path):
    d = _case_dir(tmp_path, REPRO)
    assert BaselineConfirm(Baseline(sys.executable, (("SF_TEST_BASELINE_FIXED", "1"),)), _confirm)(d, 30.0)
    assert (d / BASELINE_CONFIRM).read_text().startswith("exit 0\n") and not baseline_shows(d)
    rows = [{"case_dir": str(d), "pre_existing": False, "signature": "s"}]
    mark_rows(rows)
    assert not rows[0]["pre_existing"] and exit_code(rows, [], strict=False) == 1


def test_a_known_issue_the_baseline_does_not_show_is_a_difference_and_one_it_shows_is_not(tmp_path):
    """Note [known in A/B]: a known upstream issue's finding fails an A/B run only where the
    change made it happen (the baseline's repro passes); where the baseline shows it too it
    stays known and pre-existing."""
    known = {"known": True, "known_note": "pytorch/pytorch#1 (a known bug)", "signature": "s"}
    fixed = _case_dir(tmp_path / "a", REPRO)
    assert BaselineConfirm(Baseline(sys.executable, (("SF_TEST_BASELINE_FIXED", "1"),)), _confirm)(fixed, 30.0)
    shown = _case_dir(tmp_path / "b", REPRO)
    assert BaselineConfirm(Baseline(sys.executable, (("SF_AB_NOISE", ""),)), _confirm)(shown, 30.0)
    rows = [{**known, "case_dir": str(fixed), "pre_existing": False},
            {**known, "case_dir": str(shown), "pre_existing": False},
            {**known, "case_dir": "", "pre_existing": True}]  # the baseline's observation showed it
    mark_rows(rows)
    assert [r["known"] for r in rows] == [False, True, True]
    assert "pytorch/pytorch#1" in rows[0]["known_note"] and "baseline does not show it" in rows[0]["known_note"]
    new = [r for r in rows if not r["known"]]  # as run_fuzz takes them
    assert exit_code(new, [], strict=False) == 1 and exit_code(rows[1:], [], strict=False) == 0


def test_an_exit_1_with_another_symptom_under_the_baseline_is_not_the_same_bug(tmp_path):
    d = _case_dir(tmp_path, "raise ImportError('no such torch API in the baseline')\n")
    assert BaselineConfirm(Baseline(sys.executable, ()), _confirm)(d, 30.0)
    assert (d / BASELINE_CONFIRM).read_text().startswith("exit 1\n") and not baseline_shows(d)


def test_an_unconfirmed_finding_or_an_ab_one_never_runs_the_baseline(tmp_path):
    d = _case_dir(tmp_path, REPRO)
    t = time.monotonic()
    assert not BaselineConfirm(Baseline(sys.executable, ()), lambda d, s: False)(d, 30.0)
    assert not (d / BASELINE_CONFIRM).exists() and time.monotonic() - t < 10
    (f,) = ab(obs("False", "fallback"), obs("True", "static"))  # lost precision: an A/B finding
    e = save_case(tmp_path / "ab", Case(f, P, None), REPRO, "")
    assert BaselineConfirm(Baseline(sys.executable, ()), _confirm)(e, 30.0)
    assert not (e / BASELINE_CONFIRM).exists()
    case = json.loads((e / "case.json").read_text())
    assert case["finding"]["oracle"] == "ab"


# ---- the baseline rejects its own input ---------------------------------------------------------
def test_a_fact_false_at_the_traced_values_is_found_and_an_unbound_or_true_one_is_not():
    base = obs(asserts=("u0 >= 0", SDPA_LIKE, "u9 >= 1", "Eq(u0, 3)", "0 <= 1/(u0 - 3)"))
    assert self_refuted(base) == [SDPA_LIKE, "0 <= 1/(u0 - 3)"]


@pytest.mark.parametrize("fact", [SDPA_LIKE, "0 <= 1/(u0 - 3)", "Ne(u0, 3)"])
def test_dropping_a_check_the_baseline_s_own_input_fails_is_an_improvement_not_weaker_guards(fact):
    """The last two translate to z3, which finds a model of the candidate's facts that violates
    them: weaker guards, before the baseline's own values were looked at."""
    cand, base = obs(u="u2"), obs(asserts=("u0 >= 0", fact))
    assert ab(cand, base) == []
    assert improvements(P, None, cand, base) == ["drops a guard or runtime assert that the baseline's own "
                                                 "traced input fails"]
    # the same missing check, true at the traced values: weaker guards, as before
    sound = obs(asserts=("u0 >= 0", "u0 >= 3"))
    assert [f.symptom for f in ab(cand, sound)] == ["weaker-guards"]
    assert improvements(P, None, cand, sound) == []
    # the candidate keeps the failing check too: nothing dropped, nothing to list
    assert improvements(P, None, obs(asserts=("u0 >= 0", fact)), base) == []


def _replay(accepted: bool, agrees: bool = True) -> ReplayRecord:
    six = RunResult(True, values=(Value("int", data=(6,)),))
    got = six if agrees else RunResult(True, values=(Value("int", data=(7,)),))
    return ReplayRecord((), accepted, six, got if accepted else None)


def test_an_input_only_such_a_baseline_rejects_is_no_finding_where_the_candidate_agrees_with_eager():
    base = obs(asserts=("u0 >= 0", SDPA_LIKE), replays=(_replay(False),))
    assert ab(obs(replays=(_replay(True),)), base) == []
    wrong = ab(obs(replays=(_replay(True, agrees=False),)), base)  # still critical where it is wrong
    assert [(f.symptom, f.severity) for f in wrong] == [("weaker-guards", "critical")]
    plain = obs(replays=(_replay(False),))  # a baseline whose facts hold at its traced values
    assert [(f.symptom, f.severity) for f in ab(obs(replays=(_replay(True),)), plain)] == [("weaker-guards", "high")]


def test_a_slowdown_repro_times_each_side_twice_and_keeps_its_fastest(monkeypatch):
    """Note [A/B repro]: candidate, baseline, baseline, candidate; a load burst during one turn
    (here the candidate's first) does not make a slowdown."""
    from types import SimpleNamespace

    from shapefuzz.repro import ab as repro_ab

    order, cand_times, base_times = [], iter([1.0, 0.1]), iter([0.12, 0.11])

    def run_side(case, jobs, repeat):
        order.append("c")
        return [SimpleNamespace(elapsed_s=next(cand_times))]

    def side(python, env, script, name, timed):
        order.append("b")
        mine = [SimpleNamespace(elapsed_s=next(base_times))]
        return SimpleNamespace(result=lambda: mine)

    monkeypatch.setattr(repro_ab, "_run_side", run_side)
    monkeypatch.setattr(repro_ab, "_side", side)
    monkeypatch.setattr(repro_ab, "_jobs", lambda case, seed, side: ["job"])
    cand, base = repro_ab._timed(None, Baseline(sys.executable, ()), 0, "repro.py")
    assert order == ["c", "b", "b", "c"]
    assert [o.elapsed_s for o in cand] == [0.1] and [o.elapsed_s for o in base] == [0.11]
