"""The A/B oracle (shapefuzz/oracles/ab.py, Note [A/B oracle]) on hand-made observation pairs:
each class fires on a planted difference, and identical behaviour stays quiet even when the two
builds number their symbols differently."""

from __future__ import annotations

import dataclasses

from shapefuzz.campaign.ab_speed import improvement_summary, speed_summary
from shapefuzz.oracles import check_all
from shapefuzz.oracles.ab import ABEvidence, improvements, mark
from shapefuzz.program import Ref
from shapefuzz.program.questions import QInstr, QProgram
from shapefuzz.repro.ab import Baseline
from shapefuzz.systems.observation import Decision, Observation, Outcome

# v0 = backed(6); v1 = unbacked(3); check(v1 >= 0); ask(guard_or_false, v1 >= 2); v2 = v0 + v1
P = QProgram((QInstr("backed", (6,)), QInstr("unbacked", (3,)), QInstr("check", (">=", Ref(1), 0)),
              QInstr("ask", ("guard_or_false", ">=", Ref(1), 2)), QInstr("binop", ("+", Ref(0), Ref(1)))))
SPEC = ABEvidence("/usr/bin/python3", (("PYTHONPATH", ""),), 0)


def obs(answer="True", how="static", u="u0", s="s0", status="ok", guards=(), elapsed=0.01, expr="", ranges=()):
    """One torch-env observation of P, with the unbacked symbol called `u` (builds differ)."""
    return Observation("torch-env", "default", Outcome(status, expr=expr), (Decision(f"{u} >= 2", answer, how),),
                       guards, (f"{u} >= 0",), out_exprs=(s, u, f"{s} + {u}"),
                       ranges=ranges, binding=((s, 6), (u, 3)), out_eval=("6", "3", "9"), elapsed_s=elapsed)


def ab(cand, base):
    return [f for f in check_all(P, None, [cand, mark(base, SPEC)]) if f.oracle == "ab"]


def test_identical_behaviour_is_quiet_under_other_symbol_numbers():
    assert ab(obs(u="u0"), obs(u="u7")) == []
    assert ab(obs("False", "fallback", u="u2"), obs("False", "fallback", u="u5")) == []
    assert improvements(P, None, obs(u="u1"), obs(u="u4")) == []


def test_other_oracles_never_see_the_baseline():
    wrong = obs("False", "static")  # a wrong claim, on the baseline only
    found = check_all(P, None, [obs(), mark(wrong, SPEC)])
    assert found == [], found


def test_regression_when_only_the_candidate_contradicts_the_truth():
    (f,) = ab(obs("False", "static", u="u3"), obs("True", "static", u="u0"))
    assert (f.symptom, f.severity) == ("regression", "critical")
    assert "truth" in f.key and f.evidence == SPEC  # the repro reads its baseline there (Note [typed evidence])
    # reported once: the truth finding it was made from is not reported beside it
    assert [g.oracle for g in check_all(P, None, [obs("False", "static"), mark(obs(), SPEC)])] == ["ab"]
    # both wrong: a bug of both builds, the one-torch oracles report it, not A/B
    assert ab(obs("False", "static"), obs("False", "static")) == []
    assert "truth" in {g.oracle for g in check_all(P, None, [obs("False", "static"), mark(obs("False", "static"), SPEC)])}


def test_no_regression_where_the_baseline_never_traced():
    """A baseline that raised a DDE did not agree with eager on what the candidate traced past
    it: the candidate's wrong claim is its one-torch finding (truth), not an A/B regression."""
    dde = obs(status="dde", expr="Eq(u0, 1)")
    assert ab(obs("False", "static"), dde) == []
    assert "truth" in {f.oracle for f in check_all(P, None, [obs("False", "static"), mark(dde, SPEC)])}
    (f,) = ab(obs("False", "static"), obs())  # the baseline traced and agrees: a regression
    assert f.symptom == "regression"


def test_a_one_torch_finding_the_baseline_shares_is_pre_existing():
    """Note [pre-existing findings]: marked when the baseline shows the same oracle and kind on
    the same (system, config), never otherwise, and never outside an A/B campaign."""
    both = check_all(P, None, [obs("False", "static"), mark(obs("False", "static", u="u4"), SPEC)])
    assert both and all(f.pre_existing for f in both if f.oracle == "truth"), both
    alone = check_all(P, None, [obs("False", "static")])  # one torch: nothing to share it with
    assert alone and not any(f.pre_existing for f in alone)
    other = dataclasses.replace(obs("False", "static"), config="agfs=1")  # the baseline's is another config
    mixed = check_all(P, None, [other, mark(obs("False", "static"), SPEC)])
    assert [f.oracle for f in mixed] and not any(f.pre_existing for f in mixed), mixed


def test_an_error_of_another_exception_on_the_baseline_is_not_the_same_bug():
    """Note [pre-existing findings]: the same oracle and kind with another `where` (exception and
    torch frame) on the baseline leaves the candidate's finding new; the same one marks it."""
    def err(exc, frame):
        return dataclasses.replace(obs(), outcome=Outcome("error", exc, "boom", frame), decisions=())

    cand = err("AssertionError", "fx/experimental/symbolic_shapes.py:create_symintnode")
    mine = [f for f in check_all(P, None, [cand]) if f.oracle != "ab"]
    assert mine, "the truth oracle reports a torch-env error where the program is valid"
    other = check_all(P, None, [cand, mark(err("ValueError", "fx/experimental/symbolic_shapes.py:simplify"), SPEC)])
    assert [f for f in other if f.oracle != "ab"] and not any(f.pre_existing for f in other if f.oracle != "ab")
    same = check_all(P, None, [cand, mark(cand, SPEC)])
    assert all(f.pre_existing for f in same if f.oracle != "ab")


def test_lost_precision_fallback_and_dde():
    (f,) = ab(obs("False", "fallback"), obs("True", "static"))
    assert (f.symptom, f.severity) == ("lost-precision", "medium") and "fallback" in f.key
    (g,) = ab(obs(status="dde", expr="u0 >= 2"), obs())
    assert g.symptom == "lost-precision" and "dde" in g.key


def test_improvement_is_not_a_finding():
    cand, base = obs("True", "static"), obs("False", "fallback", u="u9")
    assert ab(cand, base) == []
    assert improvements(P, None, cand, base) == ["decides a question the baseline fell back on"]
    # an "improvement" that contradicts the truth is no improvement
    assert improvements(P, None, obs("False", "static"), base) == []


def test_weaker_guards_by_z3_and_extra_specialization():
    weak = ab(obs(guards=()), obs(u="u4", guards=("Eq(s0, 6)",)))
    assert [(f.symptom, f.severity) for f in weak] == [("weaker-guards", "high")]
    assert "s0=" in weak[0].detail
    # the candidate claimed s0 == 6 without the guard that made it true: critical at the model
    claim = Observation("torch-env", "default", Outcome("ok"), (Decision("Eq(s0, 6)", "True", "static"),),
                        binding=(("s0", 6),))
    guarded = dataclasses.replace(claim, decisions=(Decision("Eq(s0, 6)", "True", "guard"),), guards=("Eq(s0, 6)",))
    (f,) = [f for f in check_all(P, None, [claim, mark(guarded, SPEC)]) if f.symptom == "weaker-guards"]
    assert f.severity == "critical" and "is false" in f.summary
    assert ab(obs(guards=("Eq(s0, 6)",)), obs(guards=("Eq(6, s0)",))) == []  # equivalent guards
    # a range that implies the baseline's guard is as strong as the guard
    assert ab(obs(ranges=(("s0", "VR[2, int_oo]"),)), obs(u="u2", guards=("s0 >= 2",))) == []
    assert [f.symptom for f in ab(obs(ranges=(("s0", "VR[0, int_oo]"),)), obs(guards=("s0 >= 2",)))] == ["weaker-guards"]


def test_slowdown_needs_a_ratio_and_an_absolute_difference():
    (f,) = ab(obs(elapsed=1.5), obs(elapsed=0.5))
    assert (f.symptom, f.severity) == ("slowdown", "low")
    assert ab(obs(elapsed=0.03), obs(elapsed=0.01)) == []  # 3x, but 20 ms: noise


def test_speed_and_improvement_summaries():
    samples = [{"hash": f"h{i}", "times": [["make_fx", "default", 0.1 * (1 + (i == 0) * 4), 0.1]],
                "improvements": [["make_fx", "default", "x"]] if i < 2 else []} for i in range(5)]
    s = speed_summary(samples)["make_fx"]
    assert s["n"] == 5 and abs(s["median_ratio"] - 1.0) < 1e-9 and s["slower_2x"][0]["program"] == "h0"
    assert sum(s["histogram"]["counts"]) == 5
    assert improvement_summary(samples) == {"make_fx:default": {"x": 2}}


def test_baseline_environment():
    b = Baseline("/x/python", (("PYTHONPATH", ""), ("FOO", "1")))
    assert b.environ({"PYTHONPATH": "/p", "HOME": "/h"}) == {"HOME": "/h", "FOO": "1"}
    assert Baseline.from_json(b.to_json()) == b
    assert "-u PYTHONPATH" in b.command("repro.py")


def test_the_pair_of_pools_starts_as_slowly_as_its_slower_side():
    """The confirmation estimate before any was measured (Note [background confirmation]): an A/B
    repro.py starts both interpreters, so the slower pool's first start-up, not the candidate's."""
    from types import SimpleNamespace

    from shapefuzz.campaign.ab_pool import ABPool

    pool = ABPool(SimpleNamespace(first_ready_s=3.0, times="cand"), SimpleNamespace(first_ready_s=7.5),
                  Baseline("/x/python", (("PYTHONPATH", ""),)))
    assert pool.first_ready_s == 7.5 and pool.times == "cand"


def test_an_ab_confirmation_is_not_cut_to_the_reducer_s_share(tmp_path):
    """An A/B repro.py is never reduced (repro/ab.py has no reduction), so a short deadline does
    not cap it at REDUCE_MIN_S as it caps a case that might be (Note [background confirmation])."""
    import time

    from shapefuzz.campaign.confirming import Confirmer
    from shapefuzz.cases.corpus import Case, save_case

    (f,) = ab(obs("False", "fallback"), obs("True", "static"))
    d = save_case(tmp_path, Case(f, P, None), "print(1)\n", "")
    seen: list[float] = []
    c = Confirmer(lambda d, t: seen.append(t) or True, time.monotonic() + 40.0)
    c.hint = lambda: 12.0  # 40 s left < 3.5 x 12 s: a reducible case would get < REDUCE_MIN_S
    c.results({"sig": d})
    c.close()
    assert seen and seen[0] > Confirmer.REDUCE_MIN_S


def test_a_job_sent_to_a_worker_that_just_exited_is_not_an_error():
    """workers._send: a worker exits after a shapefuzz-bug answer; a pipelined job sent to it
    before that answer is read must not raise (BrokenPipeError ended A/B campaigns silently),
    reading the answer replaces the worker and requeues the job."""
    import multiprocessing as mp

    from shapefuzz.campaign.workers import _send

    parent, child = mp.Pipe()
    child.close()
    _send(parent, "job")  # no BrokenPipeError
    parent.close()
