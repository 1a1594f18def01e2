"""A budgeted campaign on Hypothesis's engine.

Note [rounds]: Hypothesis stops a test at its first failure, but a campaign must go on. So a
campaign is a series of rounds, each one @given run with its own derived seed. In a round, every
program runs through every system and oracle; the first finding with a *new* signature ends the
round, Hypothesis shrinks it (only the systems that finding involves are run while shrinking,
and shrinking has its own time budget), the smallest failing program is kept, and the next round
starts. Signatures already seen are counted, never raised again, so rounds move on to new bugs.

Note [parallel rounds]: to keep N workers busy, the generating test body does not wait for a
program's observations: it submits the program's jobs and returns (Hypothesis sees a pass), with
up to N + 1 programs in flight. Results are processed strictly in generation order, so the
campaign's state after program i never depends on N. When program k of round r shows a new
signature, programs after k that are already in flight are cancelled and not counted, and round r
is replayed with the same seed to shrink it: the body passes on programs 0..k-1 (Hypothesis
generates the same ones: the seed is the same and every earlier body passed), raises on program
k and then shrinks as usual. Hence a seed gives the same set of programs whatever N is.

Note [resume]: `state()` is a JSON checkpoint (round, position in the round, pending shrink,
counters, bugs, program hashes). A campaign built with `resume=state` replays round r's first
`pos` programs without running them (cheap: generation only) and goes on, so a run killed with
SIGKILL and started again processes the same programs as one that never stopped.

Note [shared database]: campaigns share shrunk findings through a Hypothesis ExampleDatabase
(e.g. RedisExampleDatabase), but what they store under SHARED_KEY is the shrunk *program* as JSON,
not Hypothesis's choice sequence: a choice sequence saved by a shrinking run (seeded, generate +
shrink phases) did not replay to the same program in another campaign's Phase.reuse (seen with
hypothesis 6.155 in the Redis test; cause not found), while a program is self-describing and is
validated on load like any case file. Every finished shrink saves its program; at start-up a
campaign evaluates every saved program, records its findings, and deletes the ones that no longer
fail, as Hypothesis does. Generating rounds use no database, so they stay deterministic.
The budget is wall time (Note [wall budget] in budget.py)."""

from __future__ import annotations

import time
import unittest
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Verbosity, given, seed, settings
from hypothesis.errors import HypothesisException

from shapefuzz.campaign.budget import WallBudget
from shapefuzz.campaign.bugs import FoundBug
from shapefuzz.campaign.checkpoint import STATE_SCHEMA, ResumeError, fingerprint, restore, state_of
from shapefuzz.campaign.database import import_shared
from shapefuzz.campaign.evaluate import Evaluation, evaluate, is_valid
from shapefuzz.campaign.executor import as_executor
from shapefuzz.campaign.generating import Flight
from shapefuzz.campaign.phases import BudgetPhase, Signal, Step, Stop, next_phase
from shapefuzz.campaign.shrinking import SHARED_KEY, Shrinker
from shapefuzz.campaign.space import strategy
from shapefuzz.campaign.stats import CampaignStats, program_hash
from shapefuzz.campaign.timing import PhaseClock
from shapefuzz.campaign.torchcov import Feedback
from shapefuzz.oracles.findings import Finding
from shapefuzz.program import Program
from shapefuzz.strategies.settings import GenSettings

__all__ = ["STATE_SCHEMA", "Campaign", "CampaignSettings", "CampaignStats", "FoundBug", "ResumeError",
           "program_hash"]


@dataclass(frozen=True, slots=True)
class CampaignSettings:
    targets: tuple[tuple[str, str], ...]  # (system, config)
    budget_s: float = 60.0
    max_examples: int | None = None
    seed: int = 0
    gen: GenSettings = GenSettings()  # noqa: RUF009 (a frozen value: one shared default is fine)
    n_variants: int = 6
    shrink_budget_s: float = 30.0
    #: a finding of a known upstream issue is shrunk this long at most (Note [known shrink])
    known_shrink_budget_s: float = 5.0
    database: object | None = None  # a Hypothesis ExampleDatabase, or None
    parallel: int = 1  # programs evaluated at once (the number of workers)
    coverage_feedback: bool = False  # Hypothesis target() on ShapeEnv lines (Note [coverage feedback])
    rotate: int | None = None  # Note [config rotation] (rotation.py): None runs every config


class Campaign:
    """One campaign's state and its loop over the budget phases (Note [budget phases] in
    phases.py); generating is its Flight's (generating.py), shrinking its Shrinker's
    (shrinking.py), running jobs its executor's (Note [executor] in executor.py)."""

    def __init__(self, cfg: CampaignSettings, executor: Any, on_progress: Callable | None = None,
                 on_bug: Callable[[FoundBug], None] | None = None,
                 checkpoint: Callable[[dict], None] | None = None, resume: dict | None = None,
                 reserve: Callable[[], float] | None = None, is_known: Callable[[str], bool] | None = None,
                 reserve_pending: Callable[[], bool] | None = None):
        self.cfg = cfg
        #: whether part of reserve() is work still running that may end early (Note [wall budget])
        self.reserve_pending = reserve_pending or (lambda: False)
        self.is_known = is_known or (lambda sig: False)  # signature -> a known upstream issue?
        self.budget = WallBudget(cfg.budget_s, cfg.shrink_budget_s, reserve,  # Note [wall budget]
                                 cfg.known_shrink_budget_s)
        self.clock = PhaseClock()  # Note [time split] (timing.py)
        self.phase = "starting"  # what the progress display says the campaign is doing
        self.budget_phase = BudgetPhase.START  # Note [budget phases]
        self.step = Step.GENERATE  # what the Hypothesis test body does (_body)
        self.last_new_s: float | None = None  # when the last new signature was met
        self.stopped_s: float | None = None  # when generation stopped for time (Note [wall budget])
        self.pool = as_executor(executor)  # Note [executor]
        self.on_progress = on_progress or (lambda c: None)
        self.on_bug = on_bug or (lambda b: None)
        self.checkpoint = checkpoint or (lambda state: None)
        self.stats = CampaignStats()
        self.bugs: dict[str, FoundBug] = {}
        self.t0 = 0.0
        self.offset_s = 0.0  # campaign time spent before a resume
        self.round = 0
        self.pos = 0  # programs of the current round already processed
        self.pending_shrink: dict | None = None  # {"index", "signature", "program"}
        self.deferred: list[dict] = []  # pending_shrink + "round" (Note [deferred known shrink])
        self._idx = 0
        self._last_checkpoint = 0.0
        self.shrink_spans: list[tuple[float, float]] = []  # (start s, end s): the report shades them
        self.feedback = Feedback(cfg.coverage_feedback)  # Note [coverage feedback] (torchcov.py)
        self.flight = Flight(self)
        self.shrinker = Shrinker(self)
        if resume is not None:
            self._restore(resume)

    # ---- driving ---------------------------------------------------------------------------
    def elapsed(self) -> float:
        if not self.t0:  # not running yet (workers starting): the clock has not begun
            return self.offset_s
        return time.monotonic() - self.t0 + self.offset_s

    def generate_until_s(self, no_reserve: bool = False) -> float:
        """When generation stops, at this campaign's rate so far (Note [window on demand])."""
        per_program = self.elapsed() / self.stats.programs if self.stats.programs else 0.0
        return self.budget.generate_until_s(per_program, no_reserve)

    def out_of_time(self) -> bool:
        if self.elapsed() < self.generate_until_s():
            return False
        if self.stopped_s is None:
            self.stopped_s = self.elapsed()  # the summary says when and why generation stopped
        return True

    def _done(self) -> bool:
        over = self.cfg.max_examples is not None and self.stats.programs >= self.cfg.max_examples
        return over or self.out_of_time()

    def run(self, executor: Any = None, t0: float | None = None) -> Campaign:
        """`t0`: the time.monotonic() the budget counts from (default: now)."""
        if executor is not None:
            self.pool = as_executor(executor)
        self.t0 = time.monotonic() if t0 is None else t0
        self.clock.restart(startup_s=time.monotonic() - self.t0)
        for bug in self.bugs.values():  # restored from a checkpoint: observations for reports
            if bug.evaluation is None:
                bug.evaluation = self.evaluate(bug.program, self.shrinker.involved(bug))
        if self.cfg.database is not None:
            import_shared(self, SHARED_KEY)
        self.budget_phase = BudgetPhase.START
        while self.budget_phase is not BudgetPhase.DONE:
            self.budget_phase = self._advance(self.budget_phase)
        for bug in self.bugs.values():
            if not bug.shrunk and bug.evaluation is not None:
                self.on_bug(bug)  # found beside another one and never met again: saved as found
        self.save_checkpoint(force=True)  # the caller marks it finished once reported
        self.on_progress(self)
        return self

    def _advance(self, phase: BudgetPhase) -> BudgetPhase:
        """Do `phase`'s work; the phase after it (Note [budget phases])."""
        if phase is BudgetPhase.GENERATE:
            if not self.flight.round() and not self._done():
                self._next_round()  # Hypothesis exhausted this round's space
        elif phase is BudgetPhase.SHRINK:
            if not self.shrinker.defer_pending():
                self.shrinker.pending()
                self.shrinker.siblings()
            self._next_round()
        elif phase is BudgetPhase.WAIT:
            return next_phase(phase, False, self._done, freed=self._reserve_frees())
        elif phase is BudgetPhase.DEFERRED:
            self.shrinker.deferred()
        return next_phase(phase, self.pending_shrink is not None, self._done)

    def _reserve_frees(self) -> bool:
        """Note [wall budget]: generation stopped for the reserve while part of it is work still
        running (confirmations) that may end before its estimate; wait for it, and go on
        generating if it frees the time. False when nothing runs or no time is left to use."""
        if self.cfg.max_examples is not None and self.stats.programs >= self.cfg.max_examples:
            return False
        phase, self.phase = self.phase, "confirming"
        with self.clock.phase("confirm"):
            while self.reserve_pending() and self.elapsed() < self.generate_until_s(no_reserve=True):
                time.sleep(0.25)
                self.on_progress(self)
                if self.elapsed() < self.generate_until_s():
                    break
        self.phase = phase
        if self.elapsed() < self.generate_until_s():
            self.stopped_s = None
            return True
        return False

    def _next_round(self) -> None:
        self.round, self.pos, self.pending_shrink = self.round + 1, 0, None
        self.feedback.next_round(self.pool)
        self.save_checkpoint(force=True)

    def hypothesis_run(self, phases) -> None:
        """One Hypothesis run of round `self.round`; the body does what `self.step` says. One
        test function for every step, so the example database key is the same throughout.
        Generating rounds use no database, so they stay deterministic (Note [shared database])."""
        s = settings(database=None, max_examples=self.feedback.round_size, deadline=None,
                     suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
                     report_multiple_bugs=False, phases=self.feedback.phases(phases))

        @seed(self.cfg.seed * 100_003 + self.round)
        @s
        @given(strategy(self.cfg))
        def shapefuzz_campaign(program):
            self._body(program)

        self._idx = 0
        try:
            shapefuzz_campaign()
        except unittest.SkipTest:
            pass  # Hypothesis found no phase to run: nothing to do
        except (Signal, Stop, HypothesisException, BaseExceptionGroup):
            pass  # Signal: the shrunk example, already recorded; HypothesisException: e.g.
            # flaky while shrinking, keep the best example we saw

    def _body(self, program) -> None:
        i, self._idx = self._idx, self._idx + 1
        if self.step is Step.GENERATE:
            self.flight.submit_step(i, program)
        elif self.step is Step.REPLAY:
            self.shrinker.replay_step(i, program)
        else:
            self.shrinker.shrink_step(program)

    # ---- findings ----------------------------------------------------------------------------
    def record(self, ev: Evaluation, program, shrunk: bool) -> Finding | None:
        """Count the findings of one program; the first one that needs shrinking, if any."""
        new = None
        short = self.shrinker.short
        for f in ev.findings:
            bug = self.bugs.get(f.key)
            if bug is not None:
                bug.count += 1
                if not bug.shrunk and new is None and all(d["signature"] != f.key for d in self.deferred):
                    new = f  # seen before, never shrunk (and not queued): shrink it now
                continue
            bug = FoundBug(f, program, ev, first_s=self.elapsed(), first_program=self.stats.programs,
                           shrunk=shrunk)
            self.last_new_s = bug.first_s
            self.bugs[f.key] = bug
            self.on_bug(bug)  # saved at once, shrunk or not (Note [resume]: nothing is lost)
            if not shrunk and (new is None or (short(new.key) and not short(f.key))):
                new = f  # a new finding beside a known one is shrunk now (Note [deferred known shrink])
        return new

    def count(self, ev: Evaluation) -> None:
        self.stats.count(ev, is_valid(ev), self.elapsed(), len(self.bugs))

    def evaluate(self, program: Program, targets) -> Evaluation:
        """`program` under `targets`, run to completion by the executor (shrinking, replays)."""
        t = time.perf_counter()
        ev = evaluate(program, targets, self.pool.run_many, self.cfg.n_variants, self.cfg.seed)
        self.stats.trace_s += time.perf_counter() - t
        return ev

    def time_split(self) -> dict:
        """Note [time split]: the loop's wall phases and the workers' job time per system."""
        times = self.pool.times if self.pool is not None else None
        return {"phases_s": {k: round(v, 3) for k, v in self.clock.snapshot().items()},
                "systems": times.to_json() if times is not None else {}}

    # ---- checkpoints (Note [resume]; checkpoint.py) -----------------------------------------
    def fingerprint(self) -> dict:
        return fingerprint(self.cfg)

    def save_checkpoint(self, force: bool = False, finished: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last_checkpoint >= 1.0:
            self._last_checkpoint = now
            self.checkpoint(self.state(finished))

    def state(self, finished: bool = False) -> dict:
        return {**state_of(self, finished), "feedback": self.feedback.to_json()}

    def _restore(self, state: dict) -> None:
        restore(self, state)
        self.feedback.load(state.get("feedback", []))
