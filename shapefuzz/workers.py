"""Long-lived worker processes that hold torch (imported once per worker, ~2.5 s) and run
systems on programs. A worker that crashes (segfault, abort, OOM kill) or hangs past the
per-job timeout is replaced, and the job's observation says `crash` / `timeout`.

Workers are spawned with the parent's interpreter and environment, so a locally patched or
self-built torch on PYTHONPATH is what gets fuzzed (DESIGN.md contracts)."""

from __future__ import annotations

import multiprocessing as mp
import traceback
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any

from shapefuzz.observation import Observation, Outcome

__all__ = ["Job", "WorkerPool", "ShapefuzzBug", "run_job", "load_program"]


class ShapefuzzBug(RuntimeError):
    """A bug in shapefuzz itself, raised loudly with the input attached (STYLE 4)."""


@dataclass(frozen=True, slots=True)
class Job:
    program_json: str
    system: str
    config: str
    variants_json: str  # JSON list of lists of input specs


def run_job(job: Job) -> Observation:
    """Run one job in this process (workers call this; so do in-process replays and tests)."""
    import json

    from shapefuzz.program import _input_from_json
    from shapefuzz.systems import get_system

    program = load_program(json.loads(job.program_json))
    variants = [tuple(_input_from_json(k, s) for k, s in enumerate(v))
                for v in json.loads(job.variants_json)]
    system = get_system(job.system)
    obs = system.observe(program, job.config, variants)
    if program.kind == "questions" and job.config == "default":
        obs = _with_echoes(system, program, obs)
    return obs


def _with_echoes(system, program, obs):
    """Metamorphic runs (shapefuzz.metamorphic): the same program again in a fresh env (with
    this process's global caches now warm), and with a redundant question before each one."""
    from dataclasses import replace

    from shapefuzz.metamorphic import echo_of, redundant

    fresh = system.observe(program, "default", [])
    again = system.observe(redundant(program), "default", [])
    return replace(obs, echoes=(echo_of("fresh", fresh), echo_of("redundant", again)))


def load_program(obj):
    """A tensor program or a question program, by its "kind"."""
    from shapefuzz.program import Program
    from shapefuzz.questions import QProgram

    if isinstance(obj, dict) and obj.get("kind") == "questions":
        return QProgram.from_json(obj)
    return Program.from_json(obj)


def apply_torch_config(torch_config: tuple[tuple[str, Any], ...]) -> None:
    import torch.fx.experimental._config as fxx

    for key, value in torch_config:
        setattr(fxx, key, value)


def _worker_main(conn, torch_config, log_path) -> None:
    import os
    import warnings

    if log_path:  # torch prints failing graphs to stderr; keep the campaign's terminal clean
        fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)

    warnings.filterwarnings("ignore")
    apply_torch_config(torch_config)
    import shapefuzz.systems.export  # noqa: F401  (warm imports before the first job)
    import shapefuzz.systems.make_fx  # noqa: F401

    conn.send(("ready", None))
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        try:
            conn.send(("ok", run_job(job)))
        except Exception:
            conn.send(("bug", traceback.format_exc()))


class _Worker:
    def __init__(self, ctx, torch_config, log_path):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, torch_config, log_path), daemon=True)
        self.proc.start()
        child.close()
        self.ready = False
        self.job: Job | None = None
        self.deadline = 0.0

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()


class WorkerPool:
    def __init__(self, n: int = 1, timeout_s: float = 60.0, torch_config=(), startup_s: float = 120.0,
                 log_path: str | None = None):
        self.log_path = log_path
        self._ctx = mp.get_context("spawn")
        self.timeout_s = timeout_s
        self.startup_s = startup_s
        self.torch_config = tuple(torch_config)
        self.workers = [_Worker(self._ctx, self.torch_config, self.log_path) for _ in range(max(1, n))]
        self.restarts = 0

    def close(self) -> None:
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

    def run_many(self, jobs: list[Job]) -> list[Observation]:
        """Run jobs across the workers; results in job order."""
        import time

        results: list[Observation | None] = [None] * len(jobs)
        pending = list(enumerate(jobs))
        busy: dict[int, int] = {}  # worker index -> job index
        while pending or busy:
            for wi, w in enumerate(self.workers):
                if wi not in busy and pending and w.proc.is_alive():
                    ji, job = pending.pop(0)
                    w.conn.send(job)
                    w.job = job
                    w.deadline = time.monotonic() + self.timeout_s + (0 if w.ready else self.startup_s)
                    busy[wi] = ji
            conns = {self.workers[wi].conn: wi for wi in busy}
            ready = wait(list(conns), timeout=0.25)
            for c in ready:
                wi = conns[c]
                results[busy.pop(wi)] = self._receive(wi)
            now = time.monotonic()
            for wi in list(busy):
                if now > self.workers[wi].deadline:
                    results[busy.pop(wi)] = self._fail(wi, "timeout", f"no answer in {self.timeout_s:.0f} s")
        return results  # type: ignore[return-value]

    def _receive(self, wi: int) -> Observation:
        w = self.workers[wi]
        try:
            while True:
                tag, payload = w.conn.recv()
                if tag != "ready":
                    break
                w.ready = True
        except (EOFError, OSError):
            w.proc.join(5)
            return self._fail(wi, "crash", f"worker died (exit code {w.proc.exitcode})")
        w.ready = True
        if tag == "bug":
            raise ShapefuzzBug(f"shapefuzz failed on {w.job.system} for program {w.job.program_json}\n{payload}")
        return payload

    def _fail(self, wi: int, kind: str, message: str) -> Observation:
        w = self.workers[wi]
        job = w.job
        w.kill()
        self.restarts += 1
        self.workers[wi] = _Worker(self._ctx, self.torch_config, self.log_path)
        return Observation(job.system, job.config, Outcome(kind, kind.capitalize(), message))
