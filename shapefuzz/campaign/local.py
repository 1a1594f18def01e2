"""Jobs that run in the campaign process (Note [ref in process] in campaign/workers.py), with the
per-job timeout a worker would enforce.

Note [local timeout]: a ref job has no worker to kill when it hangs (a rule that loops, a sympy
simplification that never ends), so the campaign itself would hang. In the main thread (where
Hypothesis runs the campaign), a real-time interval timer raises LocalTimeout out of the job at
the per-job timeout, and the job gets a `timeout` observation, as a worker's job would. The
timer is set and cleared around each job (two system calls, about a microsecond each); off the
main thread, where signals cannot be handled, the job runs without it."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

__all__ = ["LocalTimeout", "Share", "deadline"]


class LocalTimeout(Exception):
    """A job run in this process did not finish within the per-job timeout."""


@contextmanager
def deadline(seconds: float):
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum, frame):
        raise LocalTimeout(f"no answer in {seconds:g} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


class Share:
    """How much of a group whose jobs could all run here goes to an idle-enough worker.

    Note [shared groups]: in a campaign whose jobs all run here (ref, Note [ref in process]),
    the campaign process generates, judges and runs every job while the worker idles. So each
    such group is split: its last `k` jobs go to the worker (sent ahead all at once, Note
    [pipelined jobs]), the others run here, and the worker's share runs while this process runs
    its own and generates the next program (the engine keeps two in flight). `k` follows who
    waited for whom: a step up when a group arrives and the worker has nothing left to do, a step
    down each time this process polls for a group and finds none finished (a long wait, several
    polls, several steps). Sharing with a worker one job ahead gained nothing (0.95x,
    benchmarks/ref_campaign_results.md): this process, busy with its own jobs, read answers late
    and the worker waited for its next job."""

    def __init__(self, fraction: float = 0.5):
        self.fraction = fraction  # of a group's jobs, so groups of other sizes share alike
        self._step = 1 / 16

    def jobs(self, n: int, worker_idle: bool) -> int:
        """How many of a group's `n` jobs go to the worker; `worker_idle`: it has nothing to do."""
        if worker_idle:
            self.fraction = min(1.0, self.fraction + self._step)
        return round(self.fraction * n)

    def waited(self) -> None:
        """This process waited for the worker's share."""
        self.fraction = max(0.0, self.fraction - self._step)
