"""The one execution interface a campaign talks to (STYLE 14).

Note [executor]: a campaign hands its jobs to an executor one group at a time (a program's jobs
under every target) and never asks which kind it holds. The interface is
concurrent.futures.Executor's shape, in groups:
- `submit(tag, jobs)`: start a group. The caller names it: the tag is the group's handle. A
  generating round names a program `(round, index)`, and the coverage scores (Note [coverage
  feedback]) and the A/B samples (Note [A/B samples]) are kept by that name, so a handle the
  executor chose would only have to be mapped back to it.
- `poll(timeout)`: wait up to `timeout` for progress; every group finished since the last poll,
  as (tag, observations in job order).
- `cancel(tag)`: forget a group (queued jobs dropped, running ones ignored when they answer).
- `run_many(jobs)`: one group to completion, for shrinking, pruning and blame.
- `close()`: stop whatever runs the jobs.
What the reports and the progress line read off an executor (job time per system, torch
coverage, worker CPU seconds, the first worker's start-up time, shapefuzz bugs met in jobs) are
attributes too, with ExecutorBase's defaults for an executor that has no workers.

The implementations: InProcess (below: every job in this process, through a `run_many`
callable), WorkerPool (workers.py: worker processes, its ref and torch-env jobs run here by
local.LocalJobs, Note [ref in process]) and ABPool (ab_pool.py: a WorkerPool per torch). Background
confirmations (confirming.Confirmer) are not one: they run a case folder's repro.py against a
deadline, keyed by signature, and are judged by exit code, not by observations."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Protocol, runtime_checkable

from shapefuzz.systems.jobs import Job
from shapefuzz.systems.observation import Observation

__all__ = ["Executor", "ExecutorBase", "InProcess", "as_executor"]

Finished = list[tuple[Hashable, list[Observation]]]


@runtime_checkable
class Executor(Protocol):
    """Note [executor]."""

    def submit(self, tag: Hashable, jobs: list[Job]) -> None: ...

    def poll(self, timeout: float = 0.25) -> Finished: ...

    def cancel(self, tag: Hashable) -> None: ...

    def run_many(self, jobs: list[Job]) -> list[Observation]: ...

    def close(self) -> None: ...


class ExecutorBase:
    """The facts an executor without workers reports (Note [executor]), and `with` support."""

    times = None  # timing.SystemTimes of the jobs, where they are timed
    coverage = None  # torchcov.TorchCoverage of sampled jobs (Note [torch coverage])
    first_ready_s = 0.0  # the first worker's start-up (Note [background confirmation])
    bugs: tuple | list = ()  # shapefuzz bugs met running jobs (Note [shapefuzz bugs] in workers.py)

    def cpu_s(self) -> float:
        """CPU seconds of processes this process's rusage does not see (Note [campaign CPU])."""
        return 0.0

    def waitables(self) -> list:
        """Connections an answer will come on, to wait on beside another executor's (Note [one
        wait] in ab_pool.py); none where every job runs at submit."""
        return []

    def close(self) -> None:
        return None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class InProcess(ExecutorBase):
    """Every group run at submit, in this process, by a `run_many(jobs)` callable."""

    def __init__(self, run_many: Callable[[list[Job]], list[Observation]]):
        self.run_many = run_many
        self._done: dict = {}

    def submit(self, tag: Hashable, jobs: list[Job]) -> None:
        self._done[tag] = self.run_many(jobs)

    def poll(self, timeout: float = 0.0) -> Finished:
        done, self._done = list(self._done.items()), {}
        return done

    def cancel(self, tag: Hashable) -> None:
        self._done.pop(tag, None)


def as_executor(runner) -> Executor | None:
    """An executor as is; a plain `run_many(jobs)` callable run in process; None stays None (a
    campaign given its executor at run())."""
    if runner is None or hasattr(runner, "submit"):
        return runner
    return InProcess(runner)
