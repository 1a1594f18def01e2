"""The campaign loop's phases as a state machine, and the steps of its Hypothesis test body.

Note [budget phases]: a campaign moves between five phases, and only `next_phase` says which
comes next (Note [wall budget] in budget.py for the times that decide it):
- GENERATE: a round (Note [rounds] in engine.py) from the position reached, until it ends on a
  finding that needs shrinking, Hypothesis exhausts it, or generation stops (its programs still
  in flight are drained, or abandoned at the end of the budget).
- SHRINK: the finding that ended the round, and its siblings, shrunk now; or queued for the
  end of the campaign when it is a known one (Note [deferred known shrink]). The next round follows.
- WAIT: generation stopped for the reserve while confirmations still run; wait for them, and
  generate again if they free the time.
- DEFERRED: the queued shrinks, while the budget lasts.
- DONE.
After START, GENERATE and SHRINK the loop asks whether generation is over (`done`, which marks
when it stopped, so it is asked exactly there and first), then: a pending finding is shrunk
whether or not generation is over; otherwise the next round is generated, or, once generation
is over, the reserve is waited for."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

__all__ = ["BudgetPhase", "Signal", "Step", "Stop", "next_phase"]


class BudgetPhase(Enum):
    START = "start"
    GENERATE = "generate"
    SHRINK = "shrink"
    WAIT = "wait"
    DEFERRED = "deferred"
    DONE = "done"


def next_phase(now: BudgetPhase, pending: bool, done: Callable[[], bool], freed: bool = False) -> BudgetPhase:
    """The phase after `now` (Note [budget phases]): `pending`, a finding waits to be shrunk;
    `done()`, generation is over (asked only where the loop asks it); `freed`, the wait ended
    with time to generate again."""
    if now is BudgetPhase.WAIT:
        return BudgetPhase.GENERATE if freed else BudgetPhase.DEFERRED
    if now in (BudgetPhase.DEFERRED, BudgetPhase.DONE):
        return BudgetPhase.DONE
    over = done()
    if pending:
        return BudgetPhase.SHRINK
    return BudgetPhase.WAIT if over else BudgetPhase.GENERATE


class Step(Enum):
    """What the Hypothesis test body does with the program it is given (engine.Campaign._body)."""

    GENERATE = "generate"  # submit its jobs (Note [parallel rounds])
    REPLAY = "replay"  # pass until the program that showed the finding, then raise on it
    SHRINK = "shrink"  # evaluate it; raise when it still shows the finding


class Signal(Exception):
    """Raised inside the Hypothesis test to mark an interesting example."""


class Stop(BaseException):
    """Budget exhausted: escapes Hypothesis without being taken for a failure."""
