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
from collections.abc import Callable
from contextlib import contextmanager

__all__ = ["LocalTimeout", "Serial", "deadline"]


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


class Serial:
    """A plain `run_many(jobs)` callable seen through the WorkerPool group interface."""

    def __init__(self, run_many: Callable):
        self.run_many = run_many
        self._done: dict = {}

    def submit(self, tag, jobs) -> None:
        self._done[tag] = self.run_many(jobs)

    def poll(self, timeout: float = 0.0) -> list:
        done, self._done = list(self._done.items()), {}
        return done

    def cancel(self, tag) -> None:
        self._done.pop(tag, None)
