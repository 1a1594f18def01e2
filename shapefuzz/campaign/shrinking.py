"""Shrinking a campaign's findings (Note [rounds] in engine.py): the pending finding's round is
replayed to reach its program, Hypothesis shrinks it, the result is pruned, and its siblings
follow; a known finding's shrink is queued for the end of the campaign (Note [deferred known shrink]
in budget.py)."""

from __future__ import annotations

import time
from typing import Any

from hypothesis import Phase

from shapefuzz.campaign.bugs import FoundBug
from shapefuzz.campaign.failures import shrink_guarded
from shapefuzz.campaign.phases import Signal, Step, Stop
from shapefuzz.oracles import targets_for_finding
from shapefuzz.program import Program
from shapefuzz.program.prune import candidates

__all__ = ["SHARED_KEY", "Shrinker"]

#: the example-database key under which campaigns share their shrunk programs (as JSON)
SHARED_KEY = b"shapefuzz-shrunk-programs"
#: the share of a finding's shrink budget its pruning may take after the shrink (Note [prune budget])
PRUNE_SHARE = 0.5


def _n_instrs(program) -> int:
    return len(getattr(program, "instrs", ()))


class Shrinker:
    """The shrinking half of a Campaign: it reads and updates the campaign's findings, pending
    shrink and queue (which its checkpoint holds), and runs its Hypothesis rounds."""

    def __init__(self, camp: Any):
        self.camp = camp
        self.target: str | None = None  # the signature being shrunk
        self.deadline = 0.0  # time.monotonic() at which this finding's shrink stops
        self.start_size = 0  # its instructions when the shrink began (the progress line)

    def short(self, sig: str) -> bool:
        """A known upstream issue's finding, or one the A/B baseline shows too (Notes [known
        shrink], [pre-existing findings])."""
        return self.camp.is_known(sig) or self.camp.bugs[sig].finding.pre_existing

    def defer_pending(self) -> bool:
        """Queue the pending shrink instead of running it (Note [deferred known shrink] in
        budget.py); False when it is to run now."""
        camp = self.camp
        ps = camp.pending_shrink
        if camp.feedback.on or not self.short(ps["signature"]):
            return False
        queued = {d["signature"] for d in camp.deferred}
        for sig, bug in camp.bugs.items():  # its siblings too, as siblings() would take them
            mine = sig == ps["signature"] or bug.program.dumps() == ps["program"]
            if mine and sig not in queued and not bug.shrunk:
                camp.deferred.append({**ps, "signature": sig, "round": camp.round})
        return True

    def deferred(self) -> None:
        """The queue, each by replaying its round, while the budget lasts."""
        camp = self.camp
        where = camp.round, camp.pos
        while camp.deferred and camp.elapsed() + 0.25 < camp.budget.end_s():
            d = camp.deferred.pop(0)
            if camp.bugs[d["signature"]].shrunk:
                continue  # a sibling of an earlier one
            camp.round = d["round"]  # its round is replayed to reach it (Note [rounds])
            camp.pending_shrink = {k: d[k] for k in ("index", "signature", "program")}
            self.pending()
            self.siblings()
        camp.round, camp.pos = where  # one not reached is saved as found (Campaign.run's end)
        camp.pending_shrink = None

    def pending(self) -> None:
        shrink_guarded(self.camp, self.shrink_one)  # Note [step failures] (confirming.py)

    def shrink_one(self) -> None:
        camp = self.camp
        self.target = camp.pending_shrink["signature"]
        camp.step = Step.REPLAY
        bug = camp.bugs[self.target]
        self.start_size = _n_instrs(bug.program)
        self._label(bug)
        start = camp.elapsed()
        with camp.clock.phase("shrink"):
            camp.hypothesis_run((Phase.generate, Phase.shrink))
        camp.shrink_spans.append((round(start, 2), round(camp.elapsed(), 2)))
        self._finish(self.target)
        camp.phase = "generating"

    def siblings(self) -> None:
        """Every finding met beside the one just shrunk (the same program) is shrunk too, each
        from that program, while the wall budget lasts: a report never lists a dozen unshrunk
        variants of one bug (the configs of one failing program, say).

        Note [bucket siblings]: a sibling in the shrunk one's bucket (the same signature up to
        its config, Signature.bucket) is first tried on the shrunk program: one evaluation, and
        when it shows the sibling there, that program is the sibling's, shrunk. Since torch-env
        runs every config in a default campaign (Note [default systems]), a bug of ShapeEnv's
        core is met under 16 configs at once; shrinking each from scratch (up to
        shrink_budget_s apiece) spent a 40 s campaign's budget on one root cause (a mutant of
        constrain_range: generation stopped at 16 s)."""
        camp = self.camp
        ps = camp.pending_shrink
        done = camp.bugs.get(ps["signature"])
        for sig in [k for k, b in camp.bugs.items() if not b.shrunk and b.program.dumps() == ps["program"]]:
            if camp.elapsed() + 1.0 > camp.budget.end_s():
                return  # Note [wall budget]: the rest are saved as found
            if done is not None and self._adopt(done, sig):
                continue
            camp.pending_shrink = {**ps, "signature": sig}
            self.pending()

    def _adopt(self, done: FoundBug, sig: str) -> bool:
        """Note [bucket siblings]: is `sig` shown by `done`'s shrunk program (then it is its)?"""
        bug = self.camp.bugs[sig]
        if not done.shrunk or done.finding.signature.bucket() != bug.finding.signature.bucket():
            return False
        with self.camp.clock.phase("shrink"):
            ev = self.camp.evaluate(done.program, self.involved(bug))
        self.camp.stats.shrink_runs += 1
        hit = next((f for f in ev.findings if f.key == sig), None)
        if hit is None:
            return False
        bug.program, bug.evaluation, bug.finding = done.program, ev, hit
        self._finish(sig, prune=False)  # the program is done's, pruned already
        return True

    def _label(self, bug: FoundBug) -> None:
        k = 1 + list(self.camp.bugs).index(self.target)
        self.camp.phase = f"shrinking finding {k}: {self.start_size} -> {_n_instrs(bug.program)} instructions"

    def replay_step(self, i: int, program) -> None:
        camp = self.camp
        ps = camp.pending_shrink
        if i < ps["index"]:
            return camp.feedback.tell(i)  # the score it had (Note [coverage feedback])
        if i > ps["index"] or program.dumps() != ps["program"]:
            raise Stop  # generation was not reproducible: keep the finding unshrunk
        camp.step = Step.SHRINK
        self.deadline = time.monotonic() + camp.budget.shrink_s(self.short(self.target))
        self._signal(self.target)

    def shrink_step(self, program: Program) -> None:
        camp = self.camp
        if time.monotonic() > self.deadline or camp.elapsed() > camp.budget.end_s():
            raise Stop  # Note [wall budget]: the smallest failing program so far is kept
        bug = camp.bugs[self.target]
        ev = camp.evaluate(program, self.involved(bug))
        camp.stats.shrink_runs += 1
        hit = next((f for f in ev.findings if f.key == self.target), None)
        if hit is None:
            return
        if bug.evaluation is None or program.size() < bug.program.size():
            bug.program, bug.evaluation, bug.finding = program, ev, hit
            self._label(bug)
        self._signal(self.target)

    @staticmethod
    def _signal(sig: str) -> None:
        # One raise site: Hypothesis tells failures apart by where they are raised, and
        # shrinking only keeps candidates that fail the same way as the original.
        raise Signal(sig)

    def involved(self, bug: FoundBug) -> tuple[tuple[str, str], ...]:
        """The targets a finding needs to reproduce (its oracle's `targets`, Note [oracle
        registry])."""
        return targets_for_finding(bug.finding, self.camp.cfg.targets)

    def _finish(self, sig: str, prune: bool = True) -> None:
        camp = self.camp
        bug = camp.bugs[sig]
        if prune:
            self._prune(bug)
        bug.shrunk = True
        if bug.evaluation is not None:
            camp.on_bug(bug)
        if camp.cfg.database is not None:
            camp.cfg.database.save(SHARED_KEY, bug.program.dumps().encode())

    def _prune(self, bug: FoundBug, tries: int = 8) -> None:
        """Note [pruning] (program/prune.py): the shrunk program without its unused inputs, dead
        instructions and outputs the finding does not need, each step kept when the program
        still shows the finding (at most `tries` evaluations, within the wall budget).

        Note [prune budget]: pruning is part of the finding's shrink, so it is charged to the
        `shrink` phase and stops after PRUNE_SHARE of the finding's shrink budget. Unbounded,
        its 8 evaluations of programs that a planted slowdown made slow took 24 s and 45 s
        after a 10 s shrink in one A/B campaign (time reported as bookkeeping), and generation
        never reached the program that showed the slowdown."""
        camp = self.camp
        until = time.monotonic() + PRUNE_SHARE * camp.budget.shrink_s(self.short(bug.finding.key))
        improved = bug.evaluation is not None
        with camp.clock.phase("shrink"):
            while improved and tries > 0 and self._prune_time(until):
                improved = False
                for cand in candidates(bug.program):
                    tries -= 1
                    ev = camp.evaluate(cand, self.involved(bug))
                    hit = next((f for f in ev.findings if f.key == bug.finding.key), None)
                    if hit is not None:
                        bug.program, bug.evaluation, bug.finding, improved = cand, ev, hit, True
                        break
                    if tries <= 0 or not self._prune_time(until):
                        break

    def _prune_time(self, until: float) -> bool:
        return time.monotonic() < until and self.camp.elapsed() < self.camp.budget.end_s()
