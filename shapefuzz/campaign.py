"""A budgeted campaign on Hypothesis's engine.

Note [rounds]: Hypothesis stops a test at its first failure, but a campaign must go on. So a
campaign is a series of rounds, each one @given run with its own derived seed. In a round, every
program runs through every system and oracle; the first finding with a *new* signature makes the
test fail, Hypothesis shrinks it (only the systems that finding involves are run while
shrinking, and shrinking has its own time budget), the smallest failing program is kept, and the
next round starts. Signatures already seen are counted, never raised again, so rounds move on to
new bugs. The same seed gives the same sequence of programs."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis.errors import HypothesisException

from shapefuzz.evaluate import Evaluation, evaluate, is_valid
from shapefuzz.findings import Finding
from shapefuzz.program import Program
from shapefuzz.strategies import programs_from, qprograms
from shapefuzz.strategies.settings import GenSettings

__all__ = ["CampaignSettings", "Campaign", "FoundBug", "CampaignStats"]


@dataclass(frozen=True, slots=True)
class CampaignSettings:
    targets: tuple[tuple[str, str], ...]  # (system, config)
    budget_s: float = 60.0
    max_examples: int | None = None
    seed: int = 0
    gen: GenSettings = GenSettings()
    n_variants: int = 6
    shrink_budget_s: float = 30.0
    database: object | None = None  # a Hypothesis ExampleDatabase, or None


@dataclass
class FoundBug:
    finding: Finding
    program: Program
    evaluation: Evaluation
    count: int = 1
    first_s: float = 0.0
    first_program: int = 0
    shrunk: bool = False


@dataclass
class CampaignStats:
    programs: int = 0
    valid: int = 0
    outcomes: Counter = field(default_factory=Counter)  # (system, config, kind) -> n
    ops: Counter = field(default_factory=Counter)
    decisions: Counter = field(default_factory=Counter)
    timeline: list = field(default_factory=list)  # (elapsed_s, programs, findings)
    shrink_runs: int = 0
    trace_s: float = 0.0  # time spent inside systems (for the overhead figure)


class _Signal(Exception):
    """Raised inside the Hypothesis test to mark an interesting example."""


class _Stop(BaseException):
    """Budget exhausted: escapes Hypothesis without being taken for a failure."""


class Campaign:
    def __init__(self, cfg: CampaignSettings, run_many: Callable, on_progress: Callable | None = None,
                 on_bug: Callable[[FoundBug], None] | None = None):
        self.cfg = cfg
        self.run_many = run_many
        self.on_progress = on_progress or (lambda c: None)
        self.on_bug = on_bug or (lambda b: None)
        self.stats = CampaignStats()
        self.bugs: dict[str, FoundBug] = {}
        self.t0 = 0.0
        self._target: str | None = None
        self._shrink_deadline = 0.0

    # ---- driving ---------------------------------------------------------------------------
    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def _done(self) -> bool:
        over = self.cfg.max_examples is not None and self.stats.programs >= self.cfg.max_examples
        return over or self.elapsed() >= self.cfg.budget_s

    def run(self) -> Campaign:
        self.t0 = time.monotonic()
        rnd = 0
        while not self._done():
            self._target = None
            try:
                self._round_test(rnd)()
            except _Signal:
                pass  # the shrunk example: already recorded by _shrink_step
            except _Stop:
                pass
            except HypothesisException:
                pass  # e.g. flaky while shrinking: keep the best example we saw
            if self._target is not None:
                self._finish_bug(self._target)
            rnd += 1
        for bug in self.bugs.values():
            if not bug.shrunk:
                self.on_bug(bug)  # found beside another one and never met again: saved as found
        self.on_progress(self)
        return self

    def _round_test(self, rnd: int):
        s = settings(database=self.cfg.database, max_examples=10**9, deadline=None,
                     suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
                     report_multiple_bugs=False,
                     phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink))

        @seed(self.cfg.seed * 100_003 + rnd)
        @s
        @given(self._strategy())
        def shapefuzz_campaign(program):
            if self._target is None:
                self._generate_step(program)
            else:
                self._shrink_step(program)

        return shapefuzz_campaign

    def _strategy(self):
        """Tensor programs, question programs, or both, as the targets accept them."""
        from hypothesis import strategies as st

        from shapefuzz.systems import accepts

        kinds = {k for s, _ in self.cfg.targets for k in ("tensors", "questions") if accepts(s, k)}
        strats = ([programs_from(self.cfg.gen)] if "tensors" in kinds else []) + (
            [qprograms(max_ops=2 * self.cfg.gen.max_ops)] if "questions" in kinds else [])
        return strats[0] if len(strats) == 1 else st.one_of(*strats)

    # ---- steps -----------------------------------------------------------------------------
    def _generate_step(self, program: Program) -> None:
        if self._done():
            raise _Stop
        ev = self._evaluate(program, self.cfg.targets)
        self._count(ev)
        new = None
        for f in ev.findings:
            bug = self.bugs.get(f.signature)
            if bug is not None:
                bug.count += 1
                if not bug.shrunk and new is None:  # seen before, never shrunk: shrink it now
                    new = f
                continue
            self.bugs[f.signature] = FoundBug(f, program, ev, first_s=self.elapsed(),
                                              first_program=self.stats.programs)
            new = new or f
        self.on_progress(self)
        if new is not None:
            self._target = new.signature
            self._shrink_deadline = time.monotonic() + self.cfg.shrink_budget_s
            self._signal(new.signature)

    def _shrink_step(self, program: Program) -> None:
        if time.monotonic() > self._shrink_deadline or self.elapsed() > self.cfg.budget_s * 1.5:
            raise _Stop
        bug = self.bugs[self._target]
        targets = self._involved(bug)
        ev = self._evaluate(program, targets)
        self.stats.shrink_runs += 1
        hit = next((f for f in ev.findings if f.signature == self._target), None)
        if hit is None:
            return
        if program.size() < bug.program.size():
            bug.program, bug.evaluation, bug.finding = program, ev, hit
        self._signal(self._target)

    @staticmethod
    def _signal(sig: str) -> None:
        # One raise site: Hypothesis tells failures apart by where they are raised, and
        # shrinking only keeps candidates that fail the same way as the original.
        raise _Signal(sig)

    def _involved(self, bug: FoundBug) -> tuple[tuple[str, str], ...]:
        """The targets a finding needs to reproduce: its own, or its whole system (differential
        oracles compare configs) or both question systems (system differential)."""
        f = bug.finding
        if f.oracle == "config-differential":
            return tuple(t for t in self.cfg.targets if t[0] == f.system)
        if f.oracle == "system-differential":
            return tuple(t for t in self.cfg.targets if t[0] in ("ref", "torch-env"))
        return tuple(t for t in self.cfg.targets if t == (f.system, f.config))

    def _finish_bug(self, sig: str) -> None:
        bug = self.bugs[sig]
        bug.shrunk = True
        self.on_bug(bug)

    def _evaluate(self, program: Program, targets) -> Evaluation:
        t = time.perf_counter()
        ev = evaluate(program, targets, self.run_many, self.cfg.n_variants, self.cfg.seed)
        self.stats.trace_s += time.perf_counter() - t
        return ev

    def _count(self, ev: Evaluation) -> None:
        st = self.stats
        st.programs += 1
        st.valid += is_valid(ev)
        st.ops.update(ev.program.op_names())
        for o in ((ev.eager,) if ev.eager is not None else ()) + ev.observations:
            st.outcomes[(o.system, o.config, o.outcome.kind)] += 1
            st.decisions.update(d.how for d in o.decisions)
        st.timeline.append((round(self.elapsed(), 3), st.programs, len(self.bugs)))
