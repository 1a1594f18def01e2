"""The wall-time budget of a campaign.

Note [wall budget]: `--budget` is wall time, shrinking and what follows the campaign loop
included. The loop's clock starts where the caller says (`Campaign.run(t0=...)`: run.py passes
the process start, so imports and worker start-up count), and it keeps `reserve()` seconds free
at the end for the caller's own end phase (run.py: confirming findings and writing reports,
estimated from what it measured so far). Generation stops at `budget - reserve - drain` (Note
[window on demand]); a shrink stops at --shrink-budget or at `budget - reserve`, whichever comes
first, keeping the smallest failing program so far; programs still in flight at `budget -
reserve` are abandoned (not counted). The reserve is an estimate, and confirmations run in the background:
when generation stopped for it while confirmations still run, the campaign waits for them and
generates again if they end early enough (an A/B campaign stopped at 52 s of 90 for confirmations
that were done at 61 s).

Note [window on demand]: generation used to stop a shrink window (a tenth of the budget, at most
--shrink-budget) before `budget - reserve`, so that a finding met last could shrink. Most
campaigns meet no new finding in their last tenth, and the window went to the deferred shrinks
of known findings (Note [deferred known shrink]) or to nothing: a 60 s torch-env campaign
stopped generating at 51 s and shrank known findings until 57 s. Now generation goes on until
`budget - reserve - drain`, the drain (two programs' time at the campaign's rate so far, at least
a second, at most the old window) letting the programs in flight finish; a new finding met in
the last tenth ends generation as any new finding does and is shrunk in what is left (anytime:
the smallest failing program so far is kept). The known findings' deferred shrinks get the time
that remains, usually none: they are reported as found.

Note [known shrink]: a finding of a known upstream issue (known_issues.json, which names its
case) is shrunk for `known_shrink_budget_s` at most, enough for the first, large deletions; a new
finding gets the full --shrink-budget. On unmodified torch a campaign meets known bugs in its
first seconds (x[u] in make_fx, the squeeze of an unbacked dim), and shrinking one for the full
budget took 71% of a 30 s make_fx campaign and a third of a 90 s A/B one. So is a finding an A/B
campaign marks pre-existing: the baseline shows it too (Note [pre-existing findings], oracles/ab.py).

Note [deferred known shrink]: such a finding ends its round as any new signature does, but is not
shrunk then: its round and index are queued and the next round starts (Shrinker.defer_pending).
Generation goes on; the queue is shrunk after generation stops, in the time left (Note [window
on demand]: usually little), each for the short budget while the budget lasts, by replaying its
round as any shrink does (Note [rounds]);
its siblings (other unshrunk findings of the same program) are queued with it, as a shrink
would have taken them at once. One never reached is reported as found (it was saved, and
confirmed warm, when met: Note [warm confirmation]; a shrink that changes its repro.py confirms
it again). On unmodified torch a campaign meets its known issues in its first seconds, one after
another: a 30 s torch-env campaign met eight and spent 58% of its wall time shrinking them before
generating again. A new finding met
beside a known one is shrunk at once. With coverage feedback a round's replay needs its scores
(Note [coverage feedback]), so there every finding is shrunk at once as before."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["WallBudget"]


class WallBudget:
    #: the most generation leaves for draining the programs in flight (Note [window on demand])
    SHRINK_SHARE = 0.1
    #: the drain, in programs at the campaign's rate so far, and its floor in seconds
    DRAIN_PROGRAMS = 2
    MIN_DRAIN_S = 1.0

    def __init__(self, budget_s: float, shrink_budget_s: float, reserve: Callable[[], float] | None = None,
                 known_shrink_budget_s: float | None = None):
        self.budget_s = budget_s
        self.shrink_budget_s = shrink_budget_s
        self.known_shrink_budget_s = shrink_budget_s if known_shrink_budget_s is None else known_shrink_budget_s
        self.reserve = reserve or (lambda: 0.0)

    def shrink_s(self, known: bool) -> float:
        """How long one finding is shrunk (Note [known shrink])."""
        return min(self.shrink_budget_s, self.known_shrink_budget_s) if known else self.shrink_budget_s

    def end_s(self) -> float:
        """Campaign time by which the campaign loop must be over."""
        return self.budget_s - self.reserve()

    def generate_until_s(self, per_program_s: float = 0.0, no_reserve: bool = False) -> float:
        """When generation stops (Note [window on demand]); `per_program_s`: the campaign's wall
        seconds per program so far; `no_reserve`: if the end phase took no time at all (the
        latest a campaign waiting for its reserve to free can still resume, Campaign._reserve_frees)."""
        end = self.budget_s if no_reserve else self.end_s()
        drain = max(self.MIN_DRAIN_S, self.DRAIN_PROGRAMS * per_program_s)
        return end - min(drain, self.shrink_budget_s, self.SHRINK_SHARE * self.budget_s)
