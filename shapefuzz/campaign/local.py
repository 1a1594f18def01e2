"""Jobs that run in the campaign process (Note [ref in process], LocalJobs below), with the
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
import time
import traceback
from collections.abc import Callable, Hashable
from contextlib import contextmanager

from shapefuzz.campaign.timing import SystemTimes
from shapefuzz.campaign.torchcov import CovSampler, TorchCoverage, tracing
from shapefuzz.campaign.worker_loop import _drift, _torch_state
from shapefuzz.systems.jobs import Job, run_job
from shapefuzz.systems.observation import BUG, Observation, Outcome
from shapefuzz.systems.patching import torch_owned

__all__ = ["TORCH_LOCAL", "LocalJobs", "LocalTimeout", "Share", "deadline"]


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


#: systems a worker could run that may run in the campaign process under its state guard
#: (Note [torch-env in process])
TORCH_LOCAL = frozenset({"torch-env"})


class LocalJobs:
    """The jobs of a WorkerPool's groups that run in the campaign process: `systems`' jobs,
    timed into the pool's `times` and `coverage` as a worker's are, a shapefuzz bug or a state
    drift reported through `report_bug` as a worker's is."""

    def __init__(self, systems: tuple[str, ...], timeout_s: float, times: SystemTimes,
                 coverage: TorchCoverage, report_bug: Callable[..., None]):
        self.systems = systems
        self.timeout_s = timeout_s
        self.times, self.coverage, self._report_bug = times, coverage, report_bug
        self._state: dict | None = None  # torch's state before the first local torch job
        self._cov: CovSampler | None = None  # for the local torch jobs (_sampler)
        self._parsed: dict = {}  # run_job's parse memo

    def runs_here(self, jobs: list[Job]):
        """Which jobs of a group run here: the local systems' jobs, and the eager job too when
        every other job is local (ref's lockstep runs the same eager ops here anyway; a worker
        round trip for it alone would be the group's whole wait)."""
        alone = all(j.system in self.systems or j.system == "eager" for j in jobs)
        return lambda j: j.system in self.systems or (alone and j.system == "eager"
                                                            and bool(self.systems))

    def run(self, job: Job, tag: Hashable = None) -> Observation:
        """Run one job here, timed.

        Note [ref in process]: a ref job costs about a millisecond, a worker round trip
        (pickling the job and its observation both ways, two context switches) several times
        that, and ref needs none of torch's tracing state a worker isolates. A ref exception is
        a shapefuzz bug as in a worker (Note [shapefuzz bugs] in workers.py); a hang, a timeout (Note [local
        timeout])."""
        cov = self._sampler(job)
        traced = cov is not None and cov.wants(job.system, job.program_json)
        cost_before = cov.cost_s if cov is not None else 0.0
        t = time.perf_counter()
        try:
            with deadline(self.timeout_s), tracing(cov, traced):
                obs = run_job(job, self._parsed)
        except LocalTimeout as e:
            obs = Observation(job.system, job.config, Outcome("timeout", "Timeout", str(e)))
        except Exception as e:
            self._report_bug(f"{job.system}:{job.config} raised inside shapefuzz: {e!r}"[:300], job,
                             traceback.format_exc())
            obs = Observation(job.system, job.config, Outcome(BUG, "ShapefuzzBug", repr(e)[:300]))
        else:
            dt = time.perf_counter() - t
            self.times.add(job.system, {"job_s": dt}, dt)
            if cov is not None:
                cov.done(job.system, dt, traced)
            if traced:
                self.coverage.add(cov.take(), cov.cost_s - cost_before, tag)
        if cov is not None:  # whatever the job did, torch's state is checked after it
            self._guard(job)
        return obs

    def _sampler(self, job: Job) -> CovSampler | None:
        """For a local torch job, this process's coverage sampler (Note [torch coverage]: local
        jobs are sampled as a worker's are), made with the first one, when this process's
        torch state is also read for the state guard; None for other jobs."""
        if job.system not in TORCH_LOCAL:
            return None
        if self._cov is None:
            self._state = _torch_state(dynamo=False)
            self._cov = CovSampler()
        return self._cov

    def _guard(self, job: Job) -> None:
        """A local torch job's state guard.

        Note [torch-env in process]: a torch-env job (torch's ShapeEnv driven directly, no Dynamo, no
        tracing state) costs about 1.4 ms; in a torch-env campaign with one worker, the campaign
        process waited for that worker 27-32% of the wall time while the worker ran every job.
        So torch-env jobs run here as ref's do, and groups are shared with the worker (Note
        [shared groups]): both cores run ShapeEnv. Not where the worker is another torch than
        this process (an A/B baseline, --torch-config) or must trace each program's coverage
        (--coverage-feedback). The job drives torch under a config's patches, here as in a
        worker, so this process keeps the worker's state guard (Note [state guard] in workers.py,
        the Dynamo-free check: 0.2 ms a job). A job that leaves torch's state changed is reported as
        a worker's would be, and its system's later jobs go to workers, whose state a restart
        makes fresh; this process cannot be restarted."""
        drift = _drift(self._state, job)
        if drift:
            self._report_bug(f"{job.system}:{job.config} left torch state changed in the campaign "
                             "process: " + "; ".join(drift[:10]), job, torch_owned=torch_owned(drift))
            self.systems = tuple(s for s in self.systems if s != job.system)
            self._state = _torch_state(dynamo=False)
