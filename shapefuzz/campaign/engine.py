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

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis.errors import HypothesisException

from shapefuzz.campaign.budget import WallBudget
from shapefuzz.campaign.bugs import FoundBug
from shapefuzz.campaign.checkpoint import STATE_SCHEMA, ResumeError, fingerprint, restore, state_of
from shapefuzz.campaign.database import import_shared
from shapefuzz.campaign.evaluate import Evaluation, evaluate, is_valid, jobs_for
from shapefuzz.campaign.executor import as_executor
from shapefuzz.campaign.failures import shrink_guarded
from shapefuzz.campaign.space import strategy
from shapefuzz.campaign.stats import CampaignStats, program_hash
from shapefuzz.campaign.timing import PhaseClock
from shapefuzz.campaign.torchcov import Feedback
from shapefuzz.oracles import targets_for_finding
from shapefuzz.oracles.findings import Finding
from shapefuzz.program import Program
from shapefuzz.program.prune import candidates
from shapefuzz.strategies.settings import GenSettings

__all__ = ["STATE_SCHEMA", "Campaign", "CampaignSettings", "CampaignStats", "FoundBug", "ResumeError",
           "program_hash"]

#: the example-database key under which campaigns share their shrunk programs (as JSON)
SHARED_KEY = b"shapefuzz-shrunk-programs"


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


def _n_instrs(program) -> int:
    return len(getattr(program, "instrs", ()))


class _Signal(Exception):
    """Raised inside the Hypothesis test to mark an interesting example."""


class _Stop(BaseException):
    """Budget exhausted: escapes Hypothesis without being taken for a failure."""


class Campaign:
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
        self._mode = "generate"
        self._idx = 0
        self._target: str | None = None
        self._shrink_deadline = 0.0
        self._last_checkpoint = 0.0
        self.shrink_spans: list[tuple[float, float]] = []  # (start s, end s): the report shades them
        self.feedback = Feedback(cfg.coverage_feedback)  # Note [coverage feedback] (torchcov.py)
        if resume is not None:
            self._restore(resume)

    # ---- driving ---------------------------------------------------------------------------
    def elapsed(self) -> float:
        if not self.t0:  # not running yet (workers starting): the clock has not begun
            return self.offset_s
        return time.monotonic() - self.t0 + self.offset_s

    def _out_of_time(self) -> bool:
        if self.elapsed() < self.budget.generate_until_s():
            return False
        if self.stopped_s is None:
            self.stopped_s = self.elapsed()  # the summary says when and why generation stopped
        return True

    def _done(self) -> bool:
        over = self.cfg.max_examples is not None and self.stats.programs >= self.cfg.max_examples
        return over or self._out_of_time()

    def run(self, executor: Any = None, t0: float | None = None) -> Campaign:
        """`t0`: the time.monotonic() the budget counts from (default: now)."""
        if executor is not None:
            self.pool = as_executor(executor)
        self.t0 = time.monotonic() if t0 is None else t0
        self.clock.restart(startup_s=time.monotonic() - self.t0)
        for bug in self.bugs.values():  # restored from a checkpoint: observations for reports
            if bug.evaluation is None:
                bug.evaluation = self._evaluate(bug.program, self._involved(bug))
        if self.cfg.database is not None:
            import_shared(self, SHARED_KEY)
        while not self._done() or self.pending_shrink is not None or self._reserve_frees():
            if self.pending_shrink is None:
                if not self._generate_round() and not self._done():
                    self._next_round()  # Hypothesis exhausted this round's space
                continue
            if not self._defer_pending():
                self._shrink_pending()
                self._shrink_siblings()
            self._next_round()
        self._shrink_deferred()
        for bug in self.bugs.values():
            if not bug.shrunk and bug.evaluation is not None:
                self.on_bug(bug)  # found beside another one and never met again: saved as found
        self._save_checkpoint(force=True)  # the caller marks it finished once reported
        self.on_progress(self)
        return self

    def _reserve_frees(self) -> bool:
        """Note [wall budget]: generation stopped for the reserve while part of it is work still
        running (confirmations) that may end before its estimate; wait for it, and go on
        generating if it frees the time. False when nothing runs or no time is left to use."""
        if self.cfg.max_examples is not None and self.stats.programs >= self.cfg.max_examples:
            return False
        phase, self.phase = self.phase, "confirming"
        with self.clock.phase("confirm"):
            while self.reserve_pending() and self.elapsed() < self.budget.generate_until_s(no_reserve=True):
                time.sleep(0.25)
                self.on_progress(self)
                if self.elapsed() < self.budget.generate_until_s():
                    break
        self.phase = phase
        if self.elapsed() < self.budget.generate_until_s():
            self.stopped_s = None
            return True
        return False

    def _short(self, sig: str) -> bool:
        """A known upstream issue's finding, or one the A/B baseline shows too (Notes [known
        shrink], [pre-existing findings])."""
        return self.is_known(sig) or self.bugs[sig].finding.pre_existing

    def _defer_pending(self) -> bool:
        """Queue the pending shrink instead of running it (Note [deferred known shrink] in
        budget.py); False when it is to run now."""
        ps = self.pending_shrink
        if self.feedback.on or not self._short(ps["signature"]):
            return False
        queued = {d["signature"] for d in self.deferred}
        for sig, bug in self.bugs.items():  # its siblings too, as _shrink_siblings would take them
            mine = sig == ps["signature"] or bug.program.dumps() == ps["program"]
            if mine and sig not in queued and not bug.shrunk:
                self.deferred.append({**ps, "signature": sig, "round": self.round})
        return True

    def _shrink_deferred(self) -> None:
        where = self.round, self.pos
        while self.deferred and self.elapsed() + 0.25 < self.budget.end_s():
            d = self.deferred.pop(0)
            if self.bugs[d["signature"]].shrunk:
                continue  # a sibling of an earlier one
            self.round = d["round"]  # its round is replayed to reach it (Note [rounds])
            self.pending_shrink = {k: d[k] for k in ("index", "signature", "program")}
            self._shrink_pending()
            self._shrink_siblings()
        self.round, self.pos = where  # one not reached is saved as found (run's last loop)
        self.pending_shrink = None

    def _next_round(self) -> None:
        self.round, self.pos, self.pending_shrink = self.round + 1, 0, None
        self.feedback.next_round(self.pool)
        self._save_checkpoint(force=True)

    def _hypothesis_run(self, phases, database) -> None:
        """One Hypothesis run of round `self.round`; the body does what `self._mode` says. One
        test function for every mode, so the example database key is the same throughout."""
        s = settings(database=database, max_examples=self.feedback.round_size, deadline=None,
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
        except (_Signal, _Stop, HypothesisException, BaseExceptionGroup):
            pass  # _Signal: the shrunk example, already recorded; HypothesisException: e.g.
            # flaky while shrinking, keep the best example we saw

    def _body(self, program) -> None:
        i, self._idx = self._idx, self._idx + 1
        if self._mode == "generate":
            self._submit_step(i, program)
        elif self._mode == "replay":
            self._replay_step(i, program)
        else:
            self._shrink_step(program)

    # ---- generating (Note [parallel rounds]) -------------------------------------------------
    def _generate_round(self) -> bool:
        """Run round `self.round` from `self.pos`; True when it ended on a new finding."""
        self._mode, self.phase = "generate", "generating"
        self._flight: dict[int, Program] = {}
        self._results: dict[int, list] = {}
        with self.clock.phase("generate"):
            self._hypothesis_run((Phase.generate,), None)
            while self._flight:
                if self.elapsed() > self.budget.end_s():
                    self._abandon_flight()  # a worker still starting or hanging: no time left
                    break
                self._drain(0.25)
        self._save_checkpoint(force=True)
        return self.pending_shrink is not None

    def _abandon_flight(self) -> None:
        for j in list(self._flight):
            self.pool.cancel((self.round, j))
        self._flight.clear()
        self._results.clear()

    def _no_more(self) -> bool:
        if self.pending_shrink is not None or self._out_of_time():
            return True
        return (self.cfg.max_examples is not None
                and self.stats.programs + len(self._flight) >= self.cfg.max_examples)

    def _submit_step(self, i: int, program) -> None:
        if i < self.pos:  # processed before a resume (Note [resume]): its score told again
            return self.feedback.tell(i)
        if self._no_more():
            raise _Stop
        t = time.perf_counter()
        self.pool.submit((self.round, i), jobs_for(program, self.cfg.targets, self.cfg.n_variants,
                                                   self.cfg.seed, self.cfg.rotate))
        self._flight[i] = program
        while len(self._flight) > self.cfg.parallel:
            self._drain(0.25)
        while self.feedback.on and i in self._flight and self.pending_shrink is None:
            self._drain(0.25)  # Note [coverage feedback]: its own score, before the body returns
        self.feedback.tell(i, self.pool, (self.round, i))
        self.stats.trace_s += time.perf_counter() - t
        if self._no_more():
            raise _Stop

    def _drain(self, timeout: float) -> None:
        with self.clock.phase("wait"):
            done = self.pool.poll(timeout)
        for (rnd, i), obs in done:
            if rnd == self.round and i in self._flight:
                self._results[i] = obs
        while self.pos in self._results and self.pending_shrink is None:
            i = self.pos
            program = self._flight.pop(i)
            self._process(i, program, self._results.pop(i))
        with self.clock.phase("bookkeeping"):
            self.on_progress(self)
            self._save_checkpoint()

    def _process(self, i: int, program, obs: list) -> None:
        with self.clock.phase("oracles"):
            ev = evaluate(program, self.cfg.targets, lambda jobs: obs, self.cfg.n_variants, self.cfg.seed,
                          self.cfg.rotate)
        self.pos = i + 1
        self._count(ev)
        new = self._record(ev, program, shrunk=False)
        if new is None:
            return
        self.pending_shrink = {"index": i, "signature": new.key, "program": program.dumps()}
        for j in [j for j in self._flight if j > i]:  # speculative: not counted, not kept
            self.pool.cancel((self.round, j))
            del self._flight[j]
        self._results.clear()
        self._save_checkpoint(force=True)

    def _record(self, ev: Evaluation, program, shrunk: bool) -> Finding | None:
        """Count the findings of one program; the first one that needs shrinking, if any."""
        new = None
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
            if not shrunk and (new is None or (self._short(new.key) and not self._short(f.key))):
                new = f  # a new finding beside a known one is shrunk now (Note [deferred known shrink])
        return new

    # ---- shrinking ---------------------------------------------------------------------------
    def _shrink_pending(self) -> None:
        shrink_guarded(self, self._shrink_one)  # Note [step failures] (confirming.py)

    def _shrink_one(self) -> None:
        self._target = self.pending_shrink["signature"]
        self._mode = "replay"
        bug = self.bugs[self._target]
        self._shrink_from = _n_instrs(bug.program)
        self._shrink_label(bug)
        start = self.elapsed()
        with self.clock.phase("shrink"):
            self._hypothesis_run((Phase.generate, Phase.shrink), None)
        self.shrink_spans.append((round(start, 2), round(self.elapsed(), 2)))
        self._finish_bug(self._target)
        self.phase = "generating"

    def _shrink_siblings(self) -> None:
        """Every finding met beside the one just shrunk (the same program) is shrunk too, each
        from that program, while the wall budget lasts: a report never lists a dozen unshrunk
        variants of one bug (the configs of one failing program, say)."""
        ps = self.pending_shrink
        for sig in [k for k, b in self.bugs.items() if not b.shrunk and b.program.dumps() == ps["program"]]:
            if self.elapsed() + 1.0 > self.budget.end_s():
                return  # Note [wall budget]: the rest are saved as found
            self.pending_shrink = {**ps, "signature": sig}
            self._shrink_pending()

    def _shrink_label(self, bug: FoundBug) -> None:
        k = 1 + list(self.bugs).index(self._target)
        self.phase = f"shrinking finding {k}: {self._shrink_from} -> {_n_instrs(bug.program)} instructions"

    def _replay_step(self, i: int, program) -> None:
        ps = self.pending_shrink
        if i < ps["index"]:
            return self.feedback.tell(i)  # the score it had (Note [coverage feedback])
        if i > ps["index"] or program.dumps() != ps["program"]:
            raise _Stop  # generation was not reproducible: keep the finding unshrunk
        self._mode = "shrink"
        self._shrink_deadline = time.monotonic() + self.budget.shrink_s(self._short(self._target))
        self._signal(self._target)

    def _shrink_step(self, program: Program) -> None:
        if time.monotonic() > self._shrink_deadline or self.elapsed() > self.budget.end_s():
            raise _Stop  # Note [wall budget]: the smallest failing program so far is kept
        bug = self.bugs[self._target]
        ev = self._evaluate(program, self._involved(bug))
        self.stats.shrink_runs += 1
        hit = next((f for f in ev.findings if f.key == self._target), None)
        if hit is None:
            return
        if bug.evaluation is None or program.size() < bug.program.size():
            bug.program, bug.evaluation, bug.finding = program, ev, hit
            self._shrink_label(bug)
        self._signal(self._target)

    @staticmethod
    def _signal(sig: str) -> None:
        # One raise site: Hypothesis tells failures apart by where they are raised, and
        # shrinking only keeps candidates that fail the same way as the original.
        raise _Signal(sig)

    def _involved(self, bug: FoundBug) -> tuple[tuple[str, str], ...]:
        """The targets a finding needs to reproduce (its oracle's `targets`, Note [oracle
        registry])."""
        return targets_for_finding(bug.finding, self.cfg.targets)

    def _finish_bug(self, sig: str) -> None:
        bug = self.bugs[sig]
        self._prune(bug)
        bug.shrunk = True
        if bug.evaluation is not None:
            self.on_bug(bug)
        if self.cfg.database is not None:
            self.cfg.database.save(SHARED_KEY, bug.program.dumps().encode())

    def _prune(self, bug: FoundBug, tries: int = 8) -> None:
        """Note [pruning] (program/prune.py): the shrunk program without its unused inputs, dead
        instructions and outputs the finding does not need, each step kept when the program
        still shows the finding (at most `tries` evaluations, within the wall budget)."""
        improved = bug.evaluation is not None
        while improved and tries > 0 and self.elapsed() < self.budget.end_s():
            improved = False
            for cand in candidates(bug.program):
                tries -= 1
                ev = self._evaluate(cand, self._involved(bug))
                hit = next((f for f in ev.findings if f.key == bug.finding.key), None)
                if hit is not None:
                    bug.program, bug.evaluation, bug.finding, improved = cand, ev, hit, True
                    break
                if tries <= 0:
                    break

    def time_split(self) -> dict:
        """Note [time split]: the loop's wall phases and the workers' job time per system."""
        times = self.pool.times if self.pool is not None else None
        return {"phases_s": {k: round(v, 3) for k, v in self.clock.snapshot().items()},
                "systems": times.to_json() if times is not None else {}}

    def _evaluate(self, program: Program, targets) -> Evaluation:
        t = time.perf_counter()
        ev = evaluate(program, targets, self.pool.run_many, self.cfg.n_variants, self.cfg.seed)
        self.stats.trace_s += time.perf_counter() - t
        return ev

    # ---- counting ----------------------------------------------------------------------------
    def _count(self, ev: Evaluation) -> None:
        self.stats.count(ev, is_valid(ev), self.elapsed(), len(self.bugs))

    # ---- checkpoints (Note [resume]; checkpoint.py) -----------------------------------------
    def fingerprint(self) -> dict:
        return fingerprint(self.cfg)

    def _save_checkpoint(self, force: bool = False, finished: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last_checkpoint >= 1.0:
            self._last_checkpoint = now
            self.checkpoint(self.state(finished))

    def state(self, finished: bool = False) -> dict:
        return {**state_of(self, finished), "feedback": self.feedback.to_json()}

    def _restore(self, state: dict) -> None:
        restore(self, state)
        self.feedback.load(state.get("feedback", []))
