"""Coverage feedback (Note [coverage feedback] in shapefuzz/campaign/torchcov.py): a program's
traced ShapeEnv lines become its Hypothesis target() score, replays re-tell recorded scores, and
with feedback off target() is never called. Fake coverage results stand in for traced workers."""

from __future__ import annotations

import json

import hypothesis
import pytest
from click.testing import CliRunner

from shapefuzz.campaign.engine import Campaign, CampaignSettings
from shapefuzz.campaign.torchcov import (
    FEEDBACK_ROUND,
    SHAPEENV_AREAS,
    CovSampler,
    Feedback,
    TorchCoverage,
)
from shapefuzz.systems.jobs import run_job

SYM = "fx/experimental/symbolic_shapes.py"


def _fake_score(program_json: str) -> int:
    """What the fake coverage says a program reached: a different count for most programs."""
    return 1 + len(json.loads(program_json)["instrs"]) * 7 + len(program_json) % 5


class FakePool:
    """The WorkerPool group interface, in process, with a coverage result per group as traced
    feedback jobs would give it."""

    def __init__(self, with_coverage: bool = True):
        self.coverage = TorchCoverage()
        self.with_coverage = with_coverage
        self.sent: list[float] = []  # the score of every generated group, in submission order
        self._done: dict = {}

    def submit(self, tag, jobs) -> None:
        self._done[tag] = [run_job(j) for j in jobs]
        if self.with_coverage:
            n = _fake_score(jobs[0].program_json)
            self.coverage.add({}, 0.0, tag, [(SYM, line) for line in range(n)])
            self.sent.append(float(n))

    def poll(self, timeout: float = 0.0) -> list:
        done, self._done = list(self._done.items()), {}
        return done

    def cancel(self, tag) -> None:
        self._done.pop(tag, None)

    def run_many(self, jobs) -> list:
        return [run_job(j) for j in jobs]


@pytest.fixture
def told(monkeypatch):
    """Every target() call, passed on to Hypothesis's own (so a misuse would still raise)."""
    calls: list[tuple[float, str]] = []
    real = hypothesis.target

    def recording(observation, *, label=""):
        calls.append((observation, label))
        return real(observation, label=label)

    monkeypatch.setattr(hypothesis, "target", recording)
    return calls


def _campaign(feedback: bool, pool: FakePool, n: int = 25) -> Campaign:
    cfg = CampaignSettings((("ref", "default"),), budget_s=600.0, max_examples=n, seed=3,
                           coverage_feedback=feedback)
    return Campaign(cfg, pool).run()


def test_each_program_s_coverage_score_is_its_target_and_off_never_calls_target(told):
    pool = FakePool()
    camp = _campaign(True, pool)
    assert not camp.bugs  # no replay: the calls are exactly one per generated program
    assert camp.stats.programs == 25
    assert [v for v, _ in told] == pool.sent
    assert {label for _, label in told} == {"ShapeEnv lines new to the round"}
    assert len(set(pool.sent)) > 3  # the scores differ: a constant would not show a mix-up

    told.clear()
    off = FakePool()
    _campaign(False, off)
    assert off.sent and not told  # coverage results arrive, yet nothing is told to Hypothesis


def test_feedback_rounds_run_hypothesis_s_target_phase_and_default_rounds_do_not():
    on, off = Feedback(True), Feedback(False)
    assert hypothesis.Phase.target in on.phases((hypothesis.Phase.generate,))
    assert off.phases((hypothesis.Phase.generate,)) == (hypothesis.Phase.generate,)
    assert on.round_size == FEEDBACK_ROUND < off.round_size


def test_a_replay_re_tells_the_recorded_score_and_a_checkpoint_keeps_it(told):
    pool = FakePool()
    pool.coverage.add({}, 0.0, (0, 4), [(SYM, 1), (SYM, 2), ("utils/_sympy/functions.py", 9)])
    fb = Feedback(True)

    @hypothesis.given(hypothesis.strategies.just(0))
    @hypothesis.settings(max_examples=1, database=None)
    def first_run(_):
        fb.tell(4, pool, (0, 4))

    @hypothesis.given(hypothesis.strategies.just(0))
    @hypothesis.settings(max_examples=1, database=None)
    def replay(_):
        fb.tell(4)  # no pool: the score recorded when program 4 ran

    first_run()
    again = Feedback(True)
    again.load(json.loads(json.dumps(fb.to_json())))
    fb = again
    replay()
    assert [v for v, _ in told] == [3.0, 3.0]
    assert (0, 4) not in pool.coverage.scores  # taken once


def test_scores_count_only_shapeenv_lines_the_campaign_lacked_when_the_round_began():
    cov = TorchCoverage()
    cov.add({SYM: [1, 2, 3], "_refs/__init__.py": [5]})  # a sampled job, before the round
    cov.mark_round()
    reached = [(SYM, 1), (SYM, 2), (SYM, 3), (SYM, 4), ("utils/_sympy/value_ranges.py", 7)]
    cov.add({SYM: [4]}, 0.0, ("r", 1), reached)
    cov.add({}, 0.0, ("r", 2), [(SYM, 1)])
    assert cov.scores.pop(("r", 1)) == (2, True)  # lines 4 and value_ranges' 7; it added line 4
    assert cov.scores.pop(("r", 2)) == (0, False)
    cov.mark_round()
    cov.add({}, 0.0, ("r", 3), reached)
    assert cov.scores.pop(("r", 3)) == (1, False)  # line 4 is the campaign's now; 7 never arrived


def test_a_feedback_worker_traces_the_first_non_eager_job_of_each_program_and_sends_its_lines():
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    from shapefuzz.campaign.torchcov import area_of

    cov = CovSampler(feedback=True)
    assert not cov.wants("eager", "p1")  # eager reaches no ShapeEnv line worth a score
    counts = []
    for program in ("p1", "p2"):
        assert cov.wants("make_fx", program)
        cov.start()
        try:
            ShapeEnv().create_unbacked_symint()
        finally:
            cov.stop()
        lines = cov.reached()
        assert {area_of(rel) for rel, _ in lines} <= set(SHAPEENV_AREAS)
        counts.append((len(lines), len(cov.take().get(SYM, ()))))
        cov.done("make_fx", 0.1, traced=True)
        assert not cov.wants("export", program)  # one feedback job per program (no cost baseline yet)
    # the second time nothing is new, yet it still reached lines (fewer: torch's caches are warm)
    assert counts[0][0] > 20 and counts[1][1] == 0 and counts[1][0] > 20
    sampled = CovSampler()
    assert not sampled.wants("make_fx", "p1") and sampled.reached() is None


def test_the_cli_flag_reaches_the_campaign_settings(monkeypatch, tmp_path):
    from shapefuzz import cli
    from shapefuzz.campaign import run

    seen = []
    monkeypatch.setattr(run, "run_fuzz", lambda opts: seen.append(opts) or 0)
    for flag, want in (("--coverage-feedback", True), ("--no-coverage-feedback", False), (None, False)):
        args = ["fuzz", "--budget", "5", "--out", str(tmp_path / "o"), *([flag] if flag else [])]
        r = CliRunner().invoke(cli.cli, args)
        assert r.exit_code == 0, r.output
        assert seen[-1].coverage_feedback is want
        assert run._campaign_settings(seen[-1]).coverage_feedback is want


class PlantedPool(FakePool):
    """From its 61st program on (after the round's optimiser pass began, at 50), ref fails on
    every tensor program of 4 instructions or more: a finding that needs the round replayed."""

    def __init__(self):
        super().__init__()
        self.n = 0

    def _obs(self, job):
        from shapefuzz.systems.observation import Observation, Outcome

        if job.system == "ref" and self.n > 60 and len(json.loads(job.program_json)["instrs"]) >= 4:
            return Observation(job.system, job.config, Outcome("error", "IndexError", "planted"))
        return run_job(job)

    def submit(self, tag, jobs) -> None:
        self.n += 1
        super().submit(tag, jobs)
        self._done[tag] = [self._obs(j) for j in jobs]

    def run_many(self, jobs) -> list:
        return [self._obs(j) for j in jobs]


def _planted_campaign() -> Campaign:
    cfg = CampaignSettings((("ref", "default"),), budget_s=600.0, max_examples=70, seed=3,
                           coverage_feedback=True, shrink_budget_s=5.0)
    camp = Campaign(cfg, PlantedPool()).run()
    assert camp.bugs and min(b.first_program for b in camp.bugs.values()) > 50  # met after the
    # optimiser pass began: replaying its round needs the scores
    return camp


def test_shrinking_replays_the_round_with_its_scores_so_the_finding_shrinks(monkeypatch):
    # a shrink step runs only once the replay met the finding's program again (Note [rounds])
    assert _planted_campaign().stats.shrink_runs > 0
    told_only_fresh = Feedback.tell

    def forgetful(self, i, pool=None, tag=None):  # a replay that does not re-tell the scores
        return told_only_fresh(self, i, pool, tag) if pool is not None else None

    monkeypatch.setattr(Feedback, "tell", forgetful)
    assert _planted_campaign().stats.shrink_runs == 0  # generation diverged: nothing to shrink


def test_a_checkpoint_resumes_only_with_the_same_feedback_setting():
    """Feedback changes the rounds, so it is part of the checkpoint's fingerprint; a campaign
    without it keeps the fingerprint it always had."""
    from shapefuzz.campaign.checkpoint import fingerprint

    off = CampaignSettings((("make_fx", "default"),), budget_s=10, seed=1)
    on = CampaignSettings((("make_fx", "default"),), budget_s=10, seed=1, coverage_feedback=True)
    assert "coverage_feedback" not in fingerprint(off)
    assert fingerprint(on) != fingerprint(off) and fingerprint(on)["coverage_feedback"] is True
