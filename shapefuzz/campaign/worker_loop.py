"""What runs inside a worker process (Note [isolation] in campaign/workers.py, which starts
them): its start-up (torch config, plugins, warm-up), and its loop: read a job, run it timed
and on a sample traced for torch coverage, check torch's state, answer."""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import time
import traceback
from typing import Any

from shapefuzz.campaign.memory import limit_memory, oom, out_of_memory
from shapefuzz.campaign.timing import install_job_timer
from shapefuzz.campaign.torchcov import CovSampler
from shapefuzz.systems.jobs import Job, run_job
from shapefuzz.systems.observation import Observation
from shapefuzz.systems.patching import state_drift, torch_state

__all__ = ["apply_torch_config", "import_plugins"]

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


#: systems whose jobs never enter Dynamo (eager kernels, our reference, the ShapeEnv driven
#: directly): their state check leaves out Dynamo's config (Note [state guard])
DYNAMO_FREE = frozenset({"eager", "ref", "torch-env"})


def _torch_state(dynamo: bool = True) -> dict:
    from shapefuzz.systems.torch_toggles import PATCH_TARGETS  # lazy: torch after the log redirect

    return torch_state(PATCH_TARGETS, dynamo)


def _drift(start: dict, job: Job) -> list[str]:
    dynamo = job.system not in DYNAMO_FREE
    return state_drift(start, _torch_state(dynamo), partial=not dynamo)


def _warm_up() -> None:
    """The first make_fx trace in a process pays for lazy imports and caches (seconds under
    load). Paying it here keeps the per-program timeout about the program, not the worker."""
    import shapefuzz.systems.export  # lazy: the warm-up's torch, in workers only
    import shapefuzz.systems.make_fx  # noqa: F401  # lazy: the warm-up's torch, in workers only

    run_job(Job(_WARM_UP, "eager", "default", "[]"))
    run_job(Job(_WARM_UP, "make_fx", "default", "[]"))


def _worker_main(conn, torch_config, log_path, memory_mb=0, plugins=(), cov_feedback=False) -> None:
    import warnings

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
    parsed: dict = {}  # run_job's parse memo: a program's jobs come one after another
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
            obs, split = _measured(job, timer, cov, parsed)
        except MemoryError:
            obs = oom(job, memory_mb)
        except Exception:
            conn.send(("bug", traceback.format_exc()))
            return  # Note [shapefuzz bugs]: its state is unknown, a fresh worker takes over
        if memory_mb > 0 and out_of_memory(obs):
            conn.send(("last", oom(job, memory_mb)))
            return  # the heap may be fragmented or half-initialised: start afresh
        drift = _drift(start, job)
        if drift:
            conn.send(("drift", (obs, drift)))
            return  # Note [state guard]: every later job here would run on the wrong torch
        conn.send(("ok", obs, split))


def _measured(job: Job, timer, cov: CovSampler, parsed: dict | None = None) -> tuple[Observation, dict]:
    """run_job, timed (Note [time split]) and on a sample of jobs traced for the torch lines
    it reaches (Note [torch coverage])."""
    timer.reset()
    traced = cov.wants(job.system, job.program_json)
    t = time.perf_counter()
    if traced:
        cov.start()
    try:
        obs = run_job(job, parsed)
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
