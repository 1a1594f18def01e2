"""Long-lived worker processes that hold torch (imported once per worker, ~2.5 s) and run
systems on programs.

Note [isolation]: a program under test may segfault, abort, eat memory or hang. None of that may
stop a campaign. Each job runs in a worker; a worker that dies (segfault, abort, kernel OOM kill)
gives the job a `crash` observation, one that does not answer within the per-job timeout is
killed and gives `timeout`, and either way a fresh worker replaces it. Memory: once warm (torch
imported, ~0.8 GB of address space, ~0.35 GB resident on torch 2.13 CPU), a worker caps its
address space (RLIMIT_AS) at its warm size plus `memory_mb`. The cap is relative because torch's
own mappings differ between builds; a fixed RLIMIT_AS would either starve torch at import or be
meaningless. An allocation past the cap fails at once (MemoryError / "can't allocate memory")
instead of swapping the machine; that job's observation becomes `crash` ("out of memory") and
the worker restarts, as its heap may be in a bad state.

Workers run the parent's interpreter and environment (forked from a warm template, Note
[zygote]), so a locally patched or self-built torch on PYTHONPATH is what gets fuzzed (DESIGN.md
contracts). `plugins` are modules every worker imports at start-up (extra ops or systems; the
tests plant crashing ops this way).

Note [state guard]: a job must leave torch as it found it (Note [exact restore] in
systems/patching.py). After each job a worker compares every torch config entry and every
attribute a slow path replaces with what it read at start-up; on a difference it answers with
the job's observation and the drift, and exits. The parent keeps the observation, records a
shapefuzz bug with the job attached (`WorkerPool.bugs`, written to report.json) and starts a
fresh worker, so no later job runs on a torch that a patch left changed. A job of a system that
never enters Dynamo (worker_loop.DYNAMO_FREE: eager, ref, torch-env) is checked without Dynamo's
config, 0.6 of the check's 0.8 ms (as much as a ref job itself): no code such a job runs writes
it, and a change there would still be caught after the next job that reads it, blamed on that.

Note [shapefuzz bugs]: an exception of shapefuzz's own code in a worker (STYLE 4's third kind
of failure) is loud but does not end the campaign: the worker answers "bug" with the traceback
and exits; the parent records it with the job attached (`WorkerPool.bugs`, report.json's
`shapefuzz_bugs`, exit code 1), starts a fresh worker and gives the job an outcome of status
`bug`, which no oracle judges (check_all drops such observations, and a program whose eager run
is one). The campaign goes on with the next program.

Jobs are submitted in groups (one program's jobs); `poll` returns whole groups as they finish, so
a campaign can keep several programs in flight (Note [parallel rounds] in campaign.py).

Note [pipelined jobs]: a torch-env job takes ~4 ms in a worker, and its round trip (the answer
pickled, the campaign process woken, the next job sent) took as long again under load: 1168 jobs
spent 9.8 s in transit against 5.8 s of work. So a ready worker gets its next job while it runs
the current one; the job waits in the pipe and starts the moment the answer is sent. Its
timeout starts when its turn comes; a worker that dies or is killed gives the jobs sent ahead
back to the queue, unread. With one worker, every queued job up to PIPELINE_DEPTH is sent ahead:
a campaign process busy with its own work (generating, judging, running ref jobs, Note [shared
groups] in local.py) reads answers late, and a worker one job ahead then waits for it; with several
workers, one job ahead each, so none holds back jobs another could run at once."""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Hashable
from multiprocessing.connection import wait

from shapefuzz.campaign.executor import ExecutorBase
from shapefuzz.campaign.local import LocalJobs, Share
from shapefuzz.campaign.memory import process_cpu_s
from shapefuzz.campaign.template import context, start_template
from shapefuzz.campaign.timing import SystemTimes
from shapefuzz.campaign.torchcov import TorchCoverage
from shapefuzz.campaign.worker_loop import _worker_main, import_plugins
from shapefuzz.systems.jobs import Job
from shapefuzz.systems.observation import BUG, Observation, Outcome
from shapefuzz.systems.patching import torch_owned

__all__ = ["ShapefuzzBug", "WorkerPool", "import_plugins"]

PIPELINE_DEPTH = 64  # jobs sent ahead to a lone worker: a few groups (Note [pipelined jobs])


class ShapefuzzBug(RuntimeError):
    """A bug in shapefuzz itself, raised loudly with the input attached (STYLE 4)."""


# ---- the parent side ---------------------------------------------------------------------------
class _Worker:
    def __init__(self, ctx, args, launch=None):
        self._starting: threading.Thread | None = None
        if launch is not None:  # another interpreter or environment (Note [A/B workers], ab_pool.py)
            self.conn, self.proc = launch(args)
        else:
            self.conn, child = ctx.Pipe()
            self.proc = ctx.Process(target=_worker_main, args=(child, *args), daemon=True)
            # Note [background start]: a fork server's start returns once the template is warm
            # (Note [zygote], 2 s): the campaign generates (and runs its local jobs) meanwhile.
            # Jobs sent before then wait in the pipe; the child end is ours until the start ends,
            # so no end-of-file is seen before. The fork server itself is started by the pool's
            # thread (start_template): the template asks to die with the thread that started it
            # (_die_with_parent), and this thread ends as soon as the worker is forked.
            self._starting = threading.Thread(target=self._start, args=(child,), daemon=True,
                                              name="worker-start")
            self._starting.start()
        self.ready = False
        self.task: tuple[Hashable, int, Job] | None = None  # (group tag, index in group, job)
        self.ahead: deque[tuple[Hashable, int, Job]] = deque()  # sent behind it (Note [pipelined jobs])
        self.deadline = 0.0
        self.sent = 0.0  # when its task was sent, or when it became ready (Note [time split])
        self.started = time.monotonic()

    def cpu_s(self) -> float:
        """The worker process's CPU seconds so far (user + system, from /proc) when this
        process's rusage will not count them: a worker forked from the warm template (Note
        [zygote]) is the template's child, not ours (Note [campaign CPU]). 0.0 for a worker
        this process reaps itself (spawned), or where /proc cannot be read."""
        return process_cpu_s(getattr(self.proc, "pid", None), unless_child_of=os.getpid())

    def _start(self, child) -> None:
        try:
            self.proc.start()
        finally:
            child.close()

    def kill(self) -> None:
        if self._starting is not None:
            self._starting.join()  # a process half started cannot be killed
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()


def _death_message(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (the kernel's OOM killer, or a kill from outside)" if name == "SIGKILL" else ""
        return f"worker died from {name}{hint}"
    return f"worker died (exit code {code})"


def _send(conn, job) -> None:
    """A job to a worker that may have exited after its last answer (a shapefuzz bug, a state
    drift): the pipe is then broken, and reading that answer replaces the worker and requeues
    what it was sent (a BrokenPipeError here ended A/B campaigns silently: click takes EPIPE for
    a closed stdout and exits 1)."""
    try:
        conn.send(job)
    except OSError:  # BrokenPipeError, ConnectionResetError
        pass


class WorkerPool(ExecutorBase):
    """`n` workers behind the executor interface (Note [executor]): `submit(tag, jobs)` queues a
    group, `poll()` returns finished groups; `run_many(jobs)` does both for one group.
    Observations come back in job order."""

    MAX_STARTUP_FAILURES = 3

    def __init__(self, n: int = 1, timeout_s: float = 60.0, torch_config=(), startup_s: float = 180.0,
                 log_path: str | None = None, memory_mb: int = 0, plugins: tuple[str, ...] = (),
                 launch=None, cov_feedback: bool = False, start: str = "forkserver"):
        self.log_path = log_path
        self._ctx = context(start)
        self.timeout_s = timeout_s
        self.startup_s = startup_s
        self._args = (tuple(torch_config), log_path, memory_mb, tuple(plugins), cov_feedback)
        self._launch = launch  # starts a worker elsewhere (campaign/ab_pool.py's Launcher), or None
        if launch is None and start != "spawn":
            # here, not in a worker's start thread: the template dies with the thread that
            # started it (PR_SET_PDEATHSIG is per thread, Note [background start])
            start_template()
        self.workers = [_Worker(self._ctx, self._args, launch) for _ in range(max(1, n))]
        self.restarts = 0
        #: Notes [shapefuzz bugs], [state guard]: {"message", "job", "traceback"} per failed job
        self.bugs: list[dict] = []
        self._startup_failures = 0
        self._queue: deque[tuple[Hashable, int, Job]] = deque()
        self._live: dict[Hashable, tuple] = {}  # tag -> the key of its group (Note [group keys])
        self._serial = 0
        self._groups: dict[Hashable, list[Observation | None]] = {}
        self._left: dict[Hashable, int] = {}
        self._finished: dict[Hashable, list[Observation]] = {}
        self.times = SystemTimes()  # Note [time split]
        #: seconds the first worker took to import torch and warm up (0.0: none ready yet); a
        #: fresh interpreter running a repro.py pays about as much (Note [background confirmation])
        self.first_ready_s = 0.0
        self.retired_cpu_s = 0.0  # CPU seconds of the workers already gone (cpu_s)
        self.coverage = TorchCoverage()  # Note [torch coverage]
        #: the jobs run in this process, not in a worker (Notes [ref in process], [torch-env in
        #: process]): torch-env only where this process is the torch a worker would run (no
        #: other interpreter, no --torch-config) and no job needs a worker's coverage trace
        local_torch = launch is None and not torch_config and not cov_feedback
        self.local = LocalJobs(("ref", "torch-env") if local_torch else ("ref",), timeout_s, self.times,
                               self.coverage, self._report_bug)
        self.share_with_worker = True  # Note [shared groups] (campaign/local.py)
        self.share = Share()
        self._sharing = False  # some group was shared: a wait in poll is a wait for the worker
        #: jobs sent to a worker behind its running one (Note [pipelined jobs]): one when several
        #: workers share the queue, so none takes what another could start at once
        self._depth = 1 if len(self.workers) > 1 else PIPELINE_DEPTH

    @property
    def size(self) -> int:
        return len(self.workers)

    def cpu_s(self) -> float:
        """CPU seconds of every worker this pool ran, the replaced ones included (Note
        [campaign CPU])."""
        return self.retired_cpu_s + sum(w.cpu_s() for w in self.workers if w.proc.is_alive())

    def close(self) -> None:
        self.retired_cpu_s = self.cpu_s()
        for w in self.workers:
            try:
                w.conn.send(None)
            except (OSError, BrokenPipeError):
                pass
            w.kill()

    # ---- groups -------------------------------------------------------------------------------
    def submit(self, tag: Hashable, jobs: list[Job]) -> None:
        if tag in self._live or tag in self._finished:
            raise ShapefuzzBug(f"job group {tag!r} submitted twice")
        # Note [group keys]: a tag may come again after a cancel (a round resumed after its
        # in-flight programs were abandoned); answers to the cancelled group's jobs, still in a
        # worker's pipe, must not fill the new one. So each submission has a key of its own.
        self._serial += 1
        key = self._live[tag] = (tag, self._serial)
        self._groups[key] = [None] * len(jobs)
        self._left[key] = len(jobs)
        here = self._shared(jobs, self.local.runs_here(jobs))
        local = [(key, i, j) for i, j in enumerate(jobs) if here(j)]
        self._queue.extend((key, i, j) for i, j in enumerate(jobs) if not here(j))
        self._dispatch()  # the workers start on theirs first
        for task in local:
            self._store(task, self.local.run(task[2], task[0][0]))
        if not jobs:
            self._complete(key)

    def _shared(self, jobs: list[Job], here):
        """`here`, with the last jobs of a group that could run here whole given to the worker
        when one is ready (Note [shared groups] in campaign/local.py)."""
        if not (self.share_with_worker and all(here(j) for j in jobs)) or self._ready() is None:
            return here
        self._step(0)  # its answers already in the pipe: read, so that an idle worker looks idle
        idle = not self._queue and any(w.ready and w.task is None and not w.ahead for w in self.workers)
        k = self.share.jobs(len(jobs), idle)
        if k == 0:
            return here
        self._sharing = True
        there = {id(j) for j in jobs[len(jobs) - k:]}
        return lambda j: id(j) not in there

    def _ready(self) -> _Worker | None:
        """A worker that said it is ready (a worker never given a job is never polled: its
        "ready", or its death at start-up, is read here)."""
        for wi, w in enumerate(self.workers):
            if not w.ready and w.task is None and w.conn.poll(0):
                self._receive(wi)
        return next((w for w in self.workers if w.ready), None)

    def in_flight(self) -> int:
        """Groups submitted and not yet returned by poll."""
        return len(self._groups) + len(self._finished)

    def cancel(self, tag: Hashable) -> None:
        """Forget a group: queued jobs are dropped, running ones finish and are ignored."""
        key = self._live.pop(tag, None)
        self._queue = deque(t for t in self._queue if t[0] != key)
        self._groups.pop(key, None)
        self._left.pop(key, None)
        self._finished.pop(tag, None)

    def poll(self, timeout: float = 0.25) -> list[tuple[Hashable, list[Observation]]]:
        """Wait up to `timeout` for progress; return every group finished so far."""
        if not self._finished and self._sharing:
            self._step(0)  # answers already in the pipe are no wait
            if not self._finished:
                self.share.waited()
        if not self._finished:
            self._step(timeout)
        done, self._finished = list(self._finished.items()), {}
        return done

    def run_many(self, jobs: list[Job]) -> list[Observation]:
        """Run one group across the workers; results in job order."""
        tag = ("run_many", object())
        self.submit(tag, jobs)
        while tag not in self._finished:
            self._step(0.25)
        return self._finished.pop(tag)

    def waitables(self) -> list:
        """The connections of the workers that have a job, jobs queued since the last step sent
        first (Note [one wait] in ab_pool.py)."""
        self._dispatch()
        return [w.conn for w in self.workers if w.task is not None]

    # ---- machinery ----------------------------------------------------------------------------
    def _dispatch(self) -> None:
        for w in self.workers:
            if w.task is None and self._queue:
                w.task = self._queue.popleft()
                _send(w.conn, w.task[2])
                w.sent = time.monotonic()
                w.deadline = time.monotonic() + self.timeout_s + (0 if w.ready else self.startup_s)
            while w.ready and w.task is not None and len(w.ahead) < self._depth and self._queue:
                w.ahead.append(self._queue.popleft())  # Note [pipelined jobs]
                _send(w.conn, w.ahead[-1][2])

    def _step(self, timeout: float) -> None:
        self._dispatch()
        busy = {w.conn: wi for wi, w in enumerate(self.workers) if w.task is not None}
        if not busy:
            return
        for c in wait(list(busy), timeout=timeout):
            self._receive_all(busy[c], c)
        now = time.monotonic()
        for wi, w in enumerate(self.workers):
            if w.task is not None and now > w.deadline:
                self._fail(wi, "timeout", f"no answer in {self.timeout_s:g} s; worker killed")
        self._dispatch()

    def _receive_all(self, wi: int, conn) -> None:
        """Every answer already in a worker's pipe (several, when jobs were sent ahead and this
        process was busy), stopping when the worker is replaced or has nothing running."""
        while True:
            self._receive(wi)
            w = self.workers[wi]
            if w.conn is not conn or w.task is None or not conn.poll(0):
                return

    def _receive(self, wi: int) -> None:
        w = self.workers[wi]
        try:
            tag, payload, *split = w.conn.recv()
            if tag == "ready":  # the job's clock starts now; never block for its answer here
                w.ready = True
                w.deadline = w.sent = time.monotonic()
                self.first_ready_s = self.first_ready_s or w.sent - w.started
                w.deadline += self.timeout_s
                return None
        except (EOFError, OSError):
            w.proc.join(5)
            if not w.ready:
                return self._startup_failed(wi)
            return self._fail(wi, "crash", _death_message(w.proc.exitcode))
        self._startup_failures = 0
        w.ready = True
        task, w.task = w.task, None
        if split and split[0]:
            self.times.add(task[2].system, split[0], time.monotonic() - w.sent)
            if "cov" in split[0]:
                self.coverage.add(split[0]["cov"], split[0]["cov_cost_s"], task[0][0],
                                  split[0].get("cov_reached"))
        if tag == "bug":  # Note [shapefuzz bugs]
            job = task[2]
            last = payload.strip().splitlines()[-1][:300] if payload.strip() else "?"
            self._report_bug(f"{job.system}:{job.config} raised inside shapefuzz: {last}", job, payload)
            self._replace(wi)
            payload = Observation(job.system, job.config, Outcome(BUG, "ShapefuzzBug", last))
        if tag == "last":  # it exits after this answer (out of memory): replace it now
            self._replace(wi)
        if tag == "drift":  # Note [state guard]
            payload, drift = payload
            self._report_bug(f"{task[2].system}:{task[2].config} left torch state changed: "
                             + "; ".join(drift[:10]), task[2], torch_owned=torch_owned(drift))
            self._replace(wi)
        self._store(task, payload)
        if self.workers[wi] is w and w.ahead:  # Note [pipelined jobs]: its turn
            w.task = w.ahead.popleft()
            w.sent = time.monotonic()
            w.deadline = w.sent + self.timeout_s

    def _report_bug(self, message: str, job: Job, trace: str = "", torch_owned: bool = False) -> None:
        self.bugs.append({"message": message, "job": dataclasses.asdict(job), "traceback": trace,
                          "torch_owned": torch_owned})

    def _store(self, task, obs: Observation) -> None:
        key, i, _ = task
        if key not in self._groups:
            return  # cancelled (Note [group keys])
        self._groups[key][i] = obs
        self._left[key] -= 1
        if self._left[key] == 0:
            self._complete(key)

    def _complete(self, key) -> None:
        self._finished[key[0]] = self._groups.pop(key)  # type: ignore[assignment]
        del self._left[key]
        del self._live[key[0]]

    def _startup_failed(self, wi: int) -> None:
        """A worker that dies before it is ready is not the job's fault: retry the job."""
        task = self.workers[wi].task
        self._startup_failures += 1
        if self._startup_failures >= self.MAX_STARTUP_FAILURES:
            where = f"; see {self.log_path}" if self.log_path else ""
            raise ShapefuzzBug(f"workers die while starting ({_death_message(self.workers[wi].proc.exitcode)})"
                               f"{where}; check that `python -c 'import torch, shapefuzz'` works")
        self.workers[wi].task = None
        self._replace(wi)
        if task is not None:
            self._queue.appendleft(task)

    def _fail(self, wi: int, status: str, message: str) -> None:
        task = self.workers[wi].task
        self.workers[wi].task = None
        self._replace(wi)
        job = task[2]
        self._store(task, Observation(job.system, job.config, Outcome(status, status.capitalize(), message)))

    def _replace(self, wi: int) -> None:
        # sent, never read by the worker going away: back to the queue, in their order
        self._queue.extendleft(reversed(self.workers[wi].ahead))
        self.retired_cpu_s += self.workers[wi].cpu_s()
        self.workers[wi].kill()
        self.restarts += 1
        self.workers[wi] = _Worker(self._ctx, self._args, self._launch)
