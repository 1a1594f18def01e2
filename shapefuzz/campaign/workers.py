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
fresh worker, so no later job runs on a torch that a patch left changed.

Note [shapefuzz bugs]: an exception of shapefuzz's own code in a worker (STYLE 4's third kind
of failure) is loud but does not end the campaign: the worker answers "bug" with the traceback
and exits; the parent records it with the job attached (`WorkerPool.bugs`, report.json's
`shapefuzz_bugs`, exit code 1), starts a fresh worker and gives the job an outcome of kind
`bug`, which no oracle judges (check_all drops such observations, and a program whose eager run
is one). The campaign goes on with the next program.

Jobs are submitted in groups (one program's jobs); `poll` returns whole groups as they finish, so
a campaign can keep several programs in flight (Note [parallel rounds] in campaign.py).

Note [pipelined jobs]: a torch-env job takes ~4 ms in a worker, and its round trip (the answer
pickled, the campaign process woken, the next job sent) took as long again under load: 1168 jobs
spent 9.8 s in transit against 5.8 s of work. So a ready worker gets its next job while it runs
the current one; the job waits in the pipe and starts the moment the answer is sent. Its
timeout starts when its turn comes; a worker that dies or is killed gives the job sent ahead
back to the queue, unread."""

from __future__ import annotations

import dataclasses
import gc
import importlib
import multiprocessing as mp
import os
import signal
import sys
import time
import traceback
from collections import deque
from collections.abc import Hashable
from multiprocessing.connection import wait
from typing import Any

from shapefuzz.campaign.local import LocalTimeout, deadline
from shapefuzz.campaign.memory import limit_memory, oom, out_of_memory, process_cpu_s
from shapefuzz.campaign.timing import SystemTimes, install_job_timer
from shapefuzz.campaign.torchcov import CovSampler, TorchCoverage
from shapefuzz.systems.jobs import Job, run_job
from shapefuzz.systems.observation import BUG, Observation, Outcome
from shapefuzz.systems.patching import torch_owned

__all__ = ["ShapefuzzBug", "WorkerPool", "import_plugins"]


class ShapefuzzBug(RuntimeError):
    """A bug in shapefuzz itself, raised loudly with the input attached (STYLE 4)."""


def apply_torch_config(torch_config: tuple[tuple[str, Any], ...]) -> None:
    import torch.fx.experimental._config as fxx

    for key, value in torch_config:
        setattr(fxx, key, value)


def import_plugins(plugins: tuple[str, ...]) -> None:
    for name in plugins:
        importlib.import_module(name)


# ---- inside a worker ---------------------------------------------------------------------------
def _die_with_parent() -> None:
    """A worker stuck in a hang must not outlive a campaign killed with SIGKILL (Linux only)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


#: a trivial program traced once before a worker says it is ready
_WARM_UP = ('{"schema": 1, "inputs": [{"name": "x0", "dtype": "float", "shape": [3], "dims": '
            '["dynamic"], "data": [1.0, 2.0, 3.0]}], "instrs": [{"op": "add", "args": [{"v": 0}, '
            '{"v": 0}]}], "outputs": [1]}')


def _torch_state() -> dict:
    from shapefuzz.systems.patching import torch_state
    from shapefuzz.systems.torch_toggles import PATCH_TARGETS

    return torch_state(PATCH_TARGETS)


def _warm_up() -> None:
    """The first make_fx trace in a process pays for lazy imports and caches (seconds under
    load). Paying it here keeps the per-program timeout about the program, not the worker."""
    import shapefuzz.systems.export
    import shapefuzz.systems.make_fx  # noqa: F401

    run_job(Job(_WARM_UP, "eager", "default", "[]"))
    run_job(Job(_WARM_UP, "make_fx", "default", "[]"))


def _worker_main(conn, torch_config, log_path, memory_mb=0, plugins=(), cov_feedback=False) -> None:
    import warnings

    from shapefuzz.systems.patching import state_drift

    _die_with_parent()
    if log_path:  # torch prints failing graphs to stderr; keep the campaign's terminal clean
        fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)

    warnings.filterwarnings("ignore")
    apply_torch_config(torch_config)
    import_plugins(plugins)
    if not getattr(sys.modules.get("shapefuzz.campaign.zygote"), "WARM", False):
        _warm_up()  # spawned, or the template's warm-up failed (Note [zygote])
    timer = install_job_timer()  # Note [time split]
    cov = CovSampler(feedback=cov_feedback)  # Notes [torch coverage], [coverage feedback]
    gc.freeze()  # Note [frozen heap] (run.py): torch's objects are never garbage
    limit_memory(memory_mb)
    start = _torch_state()
    conn.send(("ready", None))
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        split: dict = {}
        try:
            obs, split = _measured(job, timer, cov)
        except MemoryError:
            obs = oom(job, memory_mb)
        except Exception:
            conn.send(("bug", traceback.format_exc()))
            return  # Note [shapefuzz bugs]: its state is unknown, a fresh worker takes over
        if memory_mb > 0 and out_of_memory(obs):
            conn.send(("last", oom(job, memory_mb)))
            return  # the heap may be fragmented or half-initialised: start afresh
        drift = state_drift(start, _torch_state())
        if drift:
            conn.send(("drift", (obs, drift)))
            return  # Note [state guard]: every later job here would run on the wrong torch
        conn.send(("ok", obs, split))


def _measured(job: Job, timer, cov: CovSampler) -> tuple[Observation, dict]:
    """run_job, timed (Note [time split]) and on a sample of jobs traced for the torch lines
    it reaches (Note [torch coverage])."""
    timer.reset()
    traced = cov.wants(job.system, job.program_json)
    t = time.perf_counter()
    if traced:
        cov.start()
    try:
        obs = run_job(job)
    finally:
        if traced:
            cov.stop()
    dt = time.perf_counter() - t
    split, before = timer.split(dt), cov.cost_s
    cov.done(job.system, dt, traced)
    if traced:
        split.update(cov_reached=cov.reached())  # before take() (Note [coverage feedback])
        split.update(cov=cov.take(), cov_cost_s=cov.cost_s - before)
    return obs, split


# ---- the parent side ---------------------------------------------------------------------------
def _context(start: str):
    """Workers fork from a warm template where the platform has a fork server (Note [zygote]);
    elsewhere, or with start="spawn" (benchmarks/workers_bench.py compares), each worker is
    spawned and warms up itself."""
    if start == "spawn" or "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["shapefuzz.campaign.zygote"])
    return ctx


class _Worker:
    def __init__(self, ctx, args, launch=None):
        if launch is not None:  # another interpreter or environment (Note [A/B workers], ab.py)
            self.conn, self.proc = launch(args)
        else:
            self.conn, child = ctx.Pipe()
            self.proc = ctx.Process(target=_worker_main, args=(child, *args), daemon=True)
            self.proc.start()
            child.close()
        self.ready = False
        self.task: tuple[Hashable, int, Job] | None = None  # (group tag, index in group, job)
        self.ahead: tuple[Hashable, int, Job] | None = None  # sent behind it (Note [pipelined jobs])
        self.deadline = 0.0
        self.sent = 0.0  # when its task was sent, or when it became ready (Note [time split])
        self.started = time.monotonic()

    def cpu_s(self) -> float:
        """The worker process's CPU seconds so far (user + system, from /proc) when this
        process's rusage will not count them: a worker forked from the warm template (Note
        [zygote]) is the template's child, not ours (Note [campaign CPU]). 0.0 for a worker
        this process reaps itself (spawned), or where /proc cannot be read."""
        return process_cpu_s(getattr(self.proc, "pid", None), unless_child_of=os.getpid())

    def kill(self) -> None:
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


class WorkerPool:
    """`n` workers. `submit(tag, jobs)` queues a group, `poll()` returns finished groups;
    `run_many(jobs)` does both for one group. Observations come back in job order."""

    MAX_STARTUP_FAILURES = 3

    def __init__(self, n: int = 1, timeout_s: float = 60.0, torch_config=(), startup_s: float = 180.0,
                 log_path: str | None = None, memory_mb: int = 0, plugins: tuple[str, ...] = (),
                 launch=None, cov_feedback: bool = False, start: str = "forkserver"):
        self.log_path = log_path
        self._ctx = _context(start)
        self.timeout_s = timeout_s
        self.startup_s = startup_s
        self._args = (tuple(torch_config), log_path, memory_mb, tuple(plugins), cov_feedback)
        self._launch = launch  # starts a worker elsewhere (campaign/ab.py's Launcher), or None
        self.workers = [_Worker(self._ctx, self._args, launch) for _ in range(max(1, n))]
        self.restarts = 0
        #: Notes [shapefuzz bugs], [state guard]: {"message", "job", "traceback"} per failed job
        self.bugs: list[dict] = []
        self._startup_failures = 0
        self._queue: deque[tuple[Hashable, int, Job]] = deque()
        self._groups: dict[Hashable, list[Observation | None]] = {}
        self._left: dict[Hashable, int] = {}
        self._finished: dict[Hashable, list[Observation]] = {}
        self.times = SystemTimes()  # Note [time split]
        #: seconds the first worker took to import torch and warm up (0.0: none ready yet); a
        #: fresh interpreter running a repro.py pays about as much (Note [background confirmation])
        self.first_ready_s = 0.0
        self.retired_cpu_s = 0.0  # CPU seconds of the workers already gone (cpu_s)
        self.coverage = TorchCoverage()  # Note [torch coverage]
        #: systems whose jobs run in this process, not in a worker (Note [ref in process])
        self.local_systems: tuple[str, ...] = ("ref",)
        self._parsed: dict = {}  # run_job's parse memo for the local jobs

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

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- groups -------------------------------------------------------------------------------
    def submit(self, tag: Hashable, jobs: list[Job]) -> None:
        if tag in self._groups or tag in self._finished:
            raise ShapefuzzBug(f"job group {tag!r} submitted twice")
        self._groups[tag] = [None] * len(jobs)
        self._left[tag] = len(jobs)
        here = self._local(jobs)
        local = [(tag, i, j) for i, j in enumerate(jobs) if here(j)]
        self._queue.extend((tag, i, j) for i, j in enumerate(jobs) if not here(j))
        self._dispatch()  # the workers start on theirs first
        for task in local:
            self._store(task, self._run_here(task[2]))
        if not jobs:
            self._complete(tag)

    def _local(self, jobs: list[Job]):
        """Which jobs of a group run here: the local systems' jobs, and the eager job too when
        every other job is local (ref's lockstep runs the same eager ops here anyway; a worker
        round trip for it alone would be the group's whole wait)."""
        alone = all(j.system in self.local_systems or j.system == "eager" for j in jobs)
        return lambda j: j.system in self.local_systems or (alone and j.system == "eager"
                                                            and bool(self.local_systems))

    def _run_here(self, job: Job) -> Observation:
        """Run one job here, timed.

        Note [ref in process]: a ref job costs about a millisecond, a worker round trip
        (pickling the job and its observation both ways, two context switches) several times
        that, and ref needs none of torch's tracing state a worker isolates. A ref exception is
        a shapefuzz bug as in a worker (Note [shapefuzz bugs]); a hang, a timeout (Note [local
        timeout])."""
        t = time.perf_counter()
        try:
            with deadline(self.timeout_s):
                obs = run_job(job, self._parsed)
        except LocalTimeout as e:
            return Observation(job.system, job.config, Outcome("timeout", "Timeout", str(e)))
        except Exception as e:
            self._report_bug(f"{job.system}:{job.config} raised inside shapefuzz: {e!r}"[:300], job,
                             traceback.format_exc())
            return Observation(job.system, job.config, Outcome(BUG, "ShapefuzzBug", repr(e)[:300]))
        dt = time.perf_counter() - t
        self.times.add(job.system, {"job_s": dt}, dt)
        return obs

    def in_flight(self) -> int:
        """Groups submitted and not yet returned by poll."""
        return len(self._groups) + len(self._finished)

    def cancel(self, tag: Hashable) -> None:
        """Forget a group: queued jobs are dropped, running ones finish and are ignored."""
        self._queue = deque(t for t in self._queue if t[0] != tag)
        self._groups.pop(tag, None)
        self._left.pop(tag, None)
        self._finished.pop(tag, None)

    def poll(self, timeout: float = 0.25) -> list[tuple[Hashable, list[Observation]]]:
        """Wait up to `timeout` for progress; return every group finished so far."""
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

    # ---- machinery ----------------------------------------------------------------------------
    def _dispatch(self) -> None:
        for w in self.workers:
            if w.task is None and self._queue:
                w.task = self._queue.popleft()
                _send(w.conn, w.task[2])
                w.sent = time.monotonic()
                w.deadline = time.monotonic() + self.timeout_s + (0 if w.ready else self.startup_s)
            if w.ready and w.task is not None and w.ahead is None and self._queue:
                w.ahead = self._queue.popleft()  # Note [pipelined jobs]
                _send(w.conn, w.ahead[2])

    def _step(self, timeout: float) -> None:
        self._dispatch()
        busy = {w.conn: wi for wi, w in enumerate(self.workers) if w.task is not None}
        if not busy:
            return
        for c in wait(list(busy), timeout=timeout):
            self._receive(busy[c])
        now = time.monotonic()
        for wi, w in enumerate(self.workers):
            if w.task is not None and now > w.deadline:
                self._fail(wi, "timeout", f"no answer in {self.timeout_s:g} s; worker killed")
        self._dispatch()

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
                self.coverage.add(split[0]["cov"], split[0]["cov_cost_s"], task[0],
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
        if self.workers[wi] is w and w.ahead is not None:  # Note [pipelined jobs]: its turn
            w.task, w.ahead = w.ahead, None
            w.sent = time.monotonic()
            w.deadline = w.sent + self.timeout_s

    def _report_bug(self, message: str, job: Job, trace: str = "", torch_owned: bool = False) -> None:
        self.bugs.append({"message": message, "job": dataclasses.asdict(job), "traceback": trace,
                          "torch_owned": torch_owned})

    def _store(self, task, obs: Observation) -> None:
        tag, i, _ = task
        if tag not in self._groups:
            return  # cancelled
        self._groups[tag][i] = obs
        self._left[tag] -= 1
        if self._left[tag] == 0:
            self._complete(tag)

    def _complete(self, tag) -> None:
        self._finished[tag] = self._groups.pop(tag)  # type: ignore[assignment]
        del self._left[tag]

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

    def _fail(self, wi: int, kind: str, message: str) -> None:
        task = self.workers[wi].task
        self.workers[wi].task = None
        self._replace(wi)
        job = task[2]
        self._store(task, Observation(job.system, job.config, Outcome(kind, kind.capitalize(), message)))

    def _replace(self, wi: int) -> None:
        if self.workers[wi].ahead is not None:  # sent, never read by the worker going away
            self._queue.appendleft(self.workers[wi].ahead)
        self.retired_cpu_s += self.workers[wi].cpu_s()
        self.workers[wi].kill()
        self.restarts += 1
        self.workers[wi] = _Worker(self._ctx, self._args, self._launch)
