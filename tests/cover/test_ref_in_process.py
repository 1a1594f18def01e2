"""Note [ref in process]: a WorkerPool runs ref jobs (and the eager job of an all-ref group) in
the campaign process; the observations are the ones a worker would return, in job order, and a
ref exception is a recorded shapefuzz bug, not a crash of the campaign."""

from __future__ import annotations

from dataclasses import replace

from shapefuzz.campaign.evaluate import jobs_for
from shapefuzz.campaign.workers import WorkerPool
from shapefuzz.program import InputSpec, Instr, Program, Ref
from shapefuzz.systems.jobs import run_job

P = Program((InputSpec("x0", "float", (4, 3), ("dynamic", "unbacked"), tuple(float(k) for k in range(12))),),
            (Instr("narrow", (Ref(0), 0, 1, 2)),), (1,))


def _same(a, b) -> bool:
    """Equal up to timing (the observation's and each z3 check's)."""
    def untimed(o):
        return replace(o, elapsed_s=0.0, smt=tuple(replace(c, elapsed_ms=0.0) for c in o.smt))
    return untimed(a) == untimed(b)


def test_ref_jobs_run_here_in_job_order_and_equal_a_workers(monkeypatch):
    jobs = jobs_for(P, (("ref", "default"), ("ref", "all-off"), ("ref", "agfs=2")), 0, 0)
    with WorkerPool(1, timeout_s=60) as pool:
        got = pool.run_many(jobs)
        assert [(o.system, o.config) for o in got] == [(j.system, j.config) for j in jobs]
        assert all(_same(o, run_job(j)) for o, j in zip(got, jobs))
        t = pool.times.per  # nothing went to the worker: no round trip
        assert t["ref"]["jobs"] == 3 and t["eager"]["jobs"] == 1
        assert t["ref"]["ipc_s"] == t["eager"]["ipc_s"] == 0.0
        pool.local_systems = ()  # the worker path gives the same observations
        assert all(_same(a, b) for a, b in zip(pool.run_many(jobs), got))
        assert t["ref"]["jobs"] == 6 and t["ref"]["ipc_s"] > 0.0


def test_a_ref_exception_is_a_recorded_bug(monkeypatch):
    from shapefuzz.systems.ref import tensors

    def boom(*a, **kw):
        raise KeyError("planted")

    monkeypatch.setattr(tensors, "run_tensors", boom)
    with WorkerPool(1, timeout_s=60) as pool:
        eager, ref = pool.run_many(jobs_for(P, (("ref", "default"),), 0, 0))
        assert eager.outcome.kind == "ok" and ref.outcome.kind == "bug", ref.outcome
        [bug] = pool.bugs
        assert "KeyError" in bug["traceback"] and bug["job"]["system"] == "ref"
