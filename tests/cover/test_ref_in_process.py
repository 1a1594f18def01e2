"""Note [ref in process]: a WorkerPool runs ref jobs (and the eager job of an all-ref group) in
the campaign process; the observations are the ones a worker would return, in job order, and a
ref exception is a recorded shapefuzz bug, not a crash of the campaign. Note [shared groups]: once
the worker is ready, a group's last jobs go to it, as many as the share says, which follows who
waited for whom."""

from __future__ import annotations

import time
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
        pool.share_with_worker = False
        got = pool.run_many(jobs)
        assert [(o.system, o.config) for o in got] == [(j.system, j.config) for j in jobs]
        assert all(_same(o, run_job(j)) for o, j in zip(got, jobs))
        t = pool.times.per  # nothing went to the worker: no round trip
        assert t["ref"]["jobs"] == 3 and t["eager"]["jobs"] == 1
        assert t["ref"]["ipc_s"] == t["eager"]["ipc_s"] == 0.0
        pool.local.systems = ()  # the worker path gives the same observations
        assert all(_same(a, b) for a, b in zip(pool.run_many(jobs), got))
        assert t["ref"]["jobs"] == 6 and t["ref"]["ipc_s"] > 0.0


def test_a_ref_exception_is_a_recorded_bug(monkeypatch):
    from shapefuzz.systems.ref import tensors

    def boom(*a, **kw):
        raise KeyError("planted")

    monkeypatch.setattr(tensors, "run_tensors", boom)
    with WorkerPool(1, timeout_s=60) as pool:
        pool.share_with_worker = False  # the planted exception is in this process only
        eager, ref = pool.run_many(jobs_for(P, (("ref", "default"),), 0, 0))
        assert eager.outcome.status == "ok" and ref.outcome.status == "bug", ref.outcome
        [bug] = pool.bugs
        assert "KeyError" in bug["traceback"] and bug["job"]["system"] == "ref"


def test_a_group_is_shared_with_a_ready_worker_and_the_share_follows_who_waited():
    jobs = jobs_for(P, (("ref", "default"), ("ref", "all-off"), ("ref", "agfs=2")), 0, 0)
    with WorkerPool(1, timeout_s=60) as pool:
        pool.run_many(jobs)  # at once: the worker is still starting (a second or more), so here
        t = pool.times.per
        assert t["ref"]["jobs"] == 3 and t["ref"]["ipc_s"] == 0.0  # nothing went there yet
        t0 = time.monotonic()
        while pool._ready() is None:
            assert time.monotonic() - t0 < 120, "the worker never became ready"
            time.sleep(0.05)
        here = t["ref"]["jobs"]
        pool.share.fraction = 0.5
        pool.submit("a", jobs)  # 4 jobs: the last 2 (and a step more, the worker being idle) there
        assert t["ref"]["jobs"] == here + 1
        done = dict(pool.poll(60.0))
        while "a" not in done:
            done.update(pool.poll(1.0))
        assert t["ref"]["jobs"] == here + 3 and t["ref"]["ipc_s"] > 0.0
        assert all(_same(o, run_job(j)) for o, j in zip(done["a"], jobs))
        assert pool.share.fraction < 0.5 + 1 / 16  # up when idle, then down for each wait
        pool.share.fraction = 0.0
        pool.submit("b", jobs)  # the worker is idle again: one step up, round(4 / 16) = 1 job there
        assert t["ref"]["jobs"] == here + 3 + 3


def test_a_tag_submitted_again_after_a_cancel_gets_its_own_answers():
    """Note [group keys]: the cancelled group's jobs, already in the worker's pipe, answer after
    the same tag was submitted again with other jobs; they must not fill the new group."""
    q = Program(P.inputs, (Instr("narrow", (Ref(0), 1, 0, 2)),), (1,))
    first = jobs_for(P, (("ref", "default"), ("ref", "all-off"), ("ref", "agfs=2")), 0, 0)
    again = jobs_for(q, (("ref", "default"), ("ref", "agfs=1")), 0, 0)
    with WorkerPool(1, timeout_s=60) as pool:
        pool.local.systems = ()  # every job through the worker's pipe
        pool.run_many(first)  # the worker is up: the next jobs are sent ahead at once
        pool.submit("a", first)
        pool.cancel("a")
        pool.submit("a", again)
        done: dict = {}
        while "a" not in done:
            done.update(pool.poll(1.0))
        got = done["a"]
        assert [(o.system, o.config) for o in got] == [(j.system, j.config) for j in again]
        assert all(_same(o, run_job(j)) for o, j in zip(got, again))


# ---- Note [torch-env in process] ----------------------------------------------------------------
def _question_jobs():
    from shapefuzz.program.questions import QInstr, QProgram

    q = QProgram((QInstr("unbacked", (3,)), QInstr("backed", (5,)),
                  QInstr("check", (">=", Ref(0), 0)), QInstr("ask", ("guard_or_false", ">=", Ref(0), Ref(1)))))
    q.validate()
    return jobs_for(q, (("torch-env", "default"), ("torch-env", "agfs=2"), ("torch-env", "slow:expr-cache")), 0, 0)


def test_torch_env_jobs_run_here_and_equal_a_workers():
    jobs = _question_jobs()
    with WorkerPool(1, timeout_s=60) as pool:
        assert "torch-env" in pool.local.systems
        pool.share_with_worker = False
        got = pool.run_many(jobs)
        t = pool.times.per
        assert t["torch-env"]["jobs"] == 3 and t["torch-env"]["ipc_s"] == 0.0
        pool.local.systems = ()
        assert all(_same(a, b) for a, b in zip(pool.run_many(jobs), got))
        assert t["torch-env"]["ipc_s"] > 0.0 and not pool.bugs


def test_torch_env_stays_in_workers_where_the_worker_is_another_torch():
    with WorkerPool(1, timeout_s=60, torch_config=(("capture_scalar_outputs", True),)) as pool:
        assert pool.local.systems == ("ref",)
    with WorkerPool(1, timeout_s=60, cov_feedback=True) as pool:
        assert pool.local.systems == ("ref",)


def test_a_local_torch_job_that_leaves_torch_state_changed_is_reported_and_moved_to_workers(monkeypatch):
    import torch.fx.experimental._config as fxx

    from shapefuzz.campaign import local

    jobs = _question_jobs()

    def leaky(job, parsed=None):
        fxx.aggressive_guard_free_semantics = 1  # never restored by the job
        return run_job(job, parsed)

    monkeypatch.setattr(local, "run_job", leaky)
    try:
        with WorkerPool(1, timeout_s=60) as pool:
            pool.share_with_worker = False
            got = pool.run_many(jobs[:1])
            assert got[0].outcome.status == "ok"
            [bug] = pool.bugs
            assert "left torch state changed" in bug["message"]
            assert "aggressive_guard_free_semantics" in bug["message"]
            assert "torch-env" not in pool.local.systems  # the rest go to a worker
    finally:
        fxx.aggressive_guard_free_semantics = 0


def test_local_torch_jobs_are_sampled_for_torch_coverage():
    # Note [torch coverage]: jobs run here are sampled as a worker's are, so a torch-env
    # campaign's coverage does not shrink to the worker's share
    from shapefuzz.campaign.torchcov import area_of

    jobs = _question_jobs()
    with WorkerPool(1, timeout_s=60) as pool:
        pool.share_with_worker = False
        cov = pool.coverage
        for _ in range(40):  # the sampler traces once tracing one job stays under 5% of the time
            pool.run_many(jobs)
        assert cov.sampled >= 1 and cov.lines
        assert any(area_of(rel) and "symbolic_shapes" in rel for rel in cov.lines)
        assert pool.times.per["torch-env"]["ipc_s"] == 0.0  # all of it here


def test_a_local_torch_job_that_times_out_is_still_state_checked(monkeypatch):
    import torch.fx.experimental._config as fxx

    from shapefuzz.campaign import local

    def leaky_hang(job, parsed=None):
        fxx.aggressive_guard_free_semantics = 1  # left changed by a job cut off by the timeout
        time.sleep(10)

    monkeypatch.setattr(local, "run_job", leaky_hang)
    try:
        with WorkerPool(1, timeout_s=0.3) as pool:
            pool.share_with_worker = False
            [obs] = pool.run_many(_question_jobs()[:1])
            assert obs.outcome.status == "timeout"
            assert any("left torch state changed" in b["message"] for b in pool.bugs)
            assert "torch-env" not in pool.local.systems
    finally:
        fxx.aggressive_guard_free_semantics = 0
