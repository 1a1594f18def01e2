"""Note [isolation]: a worker that aborts, hangs or runs out of memory gives its job a `crash` /
`timeout` observation and is replaced; the next job runs normally."""

import pytest

from shapefuzz.campaign.evaluate import jobs_for
from shapefuzz.campaign.workers import WorkerPool
from shapefuzz.program import Program

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _planted_op(plugin):
    plugin("planted_ops")  # the test-only op, registered in this process for these tests only


def planted(action: str) -> Program:
    return Program.from_json({
        "schema": 1,
        "inputs": [{"name": "x0", "dtype": "float", "shape": [3], "dims": ["dynamic"],
                    "data": [1.0, 2.0, 3.0]}],
        "instrs": [{"op": "planted", "args": [{"v": 0}, action]}], "outputs": [1]})


def test_abort_hang_and_oom_are_observations_and_the_pool_goes_on():
    cases = [("none", "ok", ""), ("abort", "crash", "SIGABRT"), ("hang", "timeout", "no answer in 8 s"),
             ("oom", "crash", "out of memory"), ("none", "ok", "")]
    with WorkerPool(1, timeout_s=8, memory_mb=512, plugins=("planted_ops",)) as pool:
        for action, status, text in cases:
            eager, traced = pool.run_many(jobs_for(planted(action), (("make_fx", "default"),), 0, 0))
            assert eager.outcome.status == "ok", (action, eager.outcome)  # the op only misbehaves under tracing
            assert traced.outcome.status == status, (action, traced.outcome)
            assert text in traced.outcome.message, (action, traced.outcome)
        assert pool.restarts == 3  # abort, hang, oom: each worker replaced once


def test_a_job_that_leaves_torch_changed_is_a_shapefuzz_bug_and_the_worker_is_replaced():
    """Note [state guard]: the job's own observation is kept, the drift is reported with the job
    attached, and the next job runs in a fresh worker where the hidden flag reads again."""
    with WorkerPool(1, timeout_s=60, plugins=("planted_ops",)) as pool:
        _, traced = pool.run_many(jobs_for(planted("leak"), (("make_fx", "default"),), 0, 0))
        assert traced.outcome.status == "ok", traced.outcome
        [bug] = pool.bugs
        assert "inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY" in bug["message"], bug
        assert "hidden" in bug["message"] and '"planted"' in bug["job"]["program_json"], bug
        assert pool.restarts == 1 and not bug["torch_owned"]  # a config entry: a patch's doing
        _, traced = pool.run_many(jobs_for(planted("none"), (("make_fx", "default"),), 0, 0))
        assert traced.outcome.status == "ok" and len(pool.bugs) == 1, (traced.outcome, pool.bugs)


def test_torch_function_state_left_disabled_is_torch_owned():
    """A drift in torch._C's torch-function state only (torch.cond's compile leaves it disabled
    after a DDE in Dynamo's guard building, reports/torch-2.13) is marked as torch's own, so the
    CLI does not call it a shapefuzz bug; the worker is replaced all the same."""
    with WorkerPool(1, timeout_s=60, plugins=("planted_ops",)) as pool:
        pool.run_many(jobs_for(planted("leak_tf"), (("make_fx", "default"),), 0, 0))
        [bug] = pool.bugs
        assert bug["torch_owned"] and "torch._C._is_torch_function_enabled: True -> False" in bug["message"], bug
        assert pool.restarts == 1
        _, traced = pool.run_many(jobs_for(planted("none"), (("make_fx", "default"),), 0, 0))
        assert traced.outcome.status == "ok" and len(pool.bugs) == 1, (traced.outcome, pool.bugs)


def test_an_exception_in_shapefuzz_is_a_recorded_bug_and_the_pool_goes_on(monkeypatch):
    """Note [shapefuzz bugs]: the job gets an outcome no oracle judges, the traceback and the job
    are kept, the worker is replaced, and the next job runs."""
    from shapefuzz import systems
    from shapefuzz.oracles import check_all

    # the workers import buggy_system; here the registration is undone after the test
    monkeypatch.setitem(systems.SYSTEMS, "buggy", ("buggy_system", "BuggySystem"))
    monkeypatch.setitem(systems.KINDS, "buggy", ("tensors",))

    p = planted("none")
    with WorkerPool(1, timeout_s=60, plugins=("planted_ops", "buggy_system")) as pool:
        eager, buggy, traced = pool.run_many(jobs_for(p, (("buggy", "default"), ("make_fx", "default")), 0, 0))
        assert buggy.outcome.status == "bug" and "planted: a lookup" in buggy.outcome.message
        assert traced.outcome.status == "ok", traced.outcome
        [bug] = pool.bugs
        assert "KeyError" in bug["traceback"] and bug["job"]["system"] == "buggy", bug
        assert pool.restarts == 1
    assert check_all(p, eager, [buggy, traced]) == []
    assert check_all(p, buggy, [traced]) == []  # a program whose eager run failed in shapefuzz


def test_parallel_groups_come_back_whole_and_in_job_order():
    progs = [planted("none") for _ in range(3)]
    with WorkerPool(2, timeout_s=60, plugins=("planted_ops",)) as pool:
        for k, p in enumerate(progs):
            pool.submit(k, jobs_for(p, (("make_fx", "default"), ("export", "default")), 0, 0))
        done = {}
        while len(done) < 3:
            done.update(pool.poll(1.0))
        for obs in done.values():
            assert [o.system for o in obs] == ["eager", "make_fx", "export"]
            assert all(o.outcome.status == "ok" for o in obs), obs
