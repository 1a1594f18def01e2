"""Note [A/B retiming] (campaign/ab_speed.py): a pair the slowdown rule calls slower is run again
on both sides and each keeps its fastest time. A cold start (slow once) is no slowdown; a
regression (slow on every run) still is; a pair the rule does not suspect runs once; a group
cancelled while it is being timed again never reaches the campaign. And Note [one wait]: one
side's answer is collected while the other side is still busy."""

from __future__ import annotations

import threading
import time

from shapefuzz.campaign.ab_pool import ABPool
from shapefuzz.campaign.executor import ExecutorBase
from shapefuzz.oracles.ab import slower
from shapefuzz.repro.ab import Baseline
from shapefuzz.systems.jobs import Job
from shapefuzz.systems.observation import Observation, Outcome

JOBS = [Job("{}", "eager", "default", "[]"), Job("{}", "make_fx", "default", "[]"),
        Job("{}", "export", "default", "[]")]


class TimedPool(ExecutorBase):
    """A WorkerPool stand-in answering at the next poll; `times[system]` are the elapsed times
    of that system's successive runs (the last one repeats)."""

    def __init__(self, times: dict[str, list[float]]):
        self.times = times
        self.runs: dict[str, int] = {}
        self.sent: list[list[str]] = []
        self.done: dict = {}

    def submit(self, tag, jobs):
        self.sent.append([j.system for j in jobs])
        out = []
        for j in jobs:
            k = self.runs.get(j.system, 0)
            self.runs[j.system] = k + 1
            t = self.times.get(j.system, [0.05])
            out.append(Observation(j.system, j.config, Outcome("ok"), elapsed_s=t[min(k, len(t) - 1)]))
        self.done[tag] = out

    def poll(self, timeout):
        out, self.done = self.done, {}
        return out

    def cancel(self, tag):
        self.done.pop(tag, None)

    def close(self):
        pass


def run(cand_times, base_times, cancel=False):
    cand, base = TimedPool(cand_times), TimedPool(base_times)
    pool = ABPool(cand, base, Baseline("/usr/bin/python3"))
    pool.submit((0, 0), JOBS)
    got = pool.poll()
    if cancel:
        assert got == [] and pool.in_flight() == 1  # being timed again
        pool.cancel((0, 0))
        assert pool.poll() == [] and pool.poll() == [] and pool.in_flight() == 0
        return cand, base, None
    while not got:
        got = pool.poll()
    ((_, obs),) = got
    by = {o.system: o for o in obs}
    return cand, base, by


def test_a_cold_start_is_timed_again_and_is_no_slowdown():
    cand, base, by = run({"make_fx": [1.0, 0.1]}, {"make_fx": [0.1]})
    assert cand.sent == [["eager", "make_fx", "export"], ["make_fx"]]  # only the suspected pair
    assert base.sent == [["make_fx", "export"], ["make_fx"]]
    assert by["make_fx"].elapsed_s == 0.1 and not slower(by["make_fx"], by["make_fx@baseline"])


def test_a_regression_stays_slower_after_every_rerun():
    cand, _, by = run({"export": [1.0]}, {"export": [0.1]})
    assert cand.sent[1:] == [["export"]] * ABPool.RETIMES
    assert by["export"].elapsed_s == 1.0 and slower(by["export"], by["export@baseline"])


def test_the_baseline_keeps_its_fastest_time_too():
    # the baseline's first run was the fast one: its reruns do not raise its time
    _, _, by = run({"make_fx": [1.0]}, {"make_fx": [0.1, 0.9]})
    assert by["make_fx@baseline"].elapsed_s == 0.1


def test_a_pair_the_rule_does_not_suspect_runs_once():
    cand, base, by = run({"make_fx": [0.15]}, {"make_fx": [0.1]})  # 1.5x: under the ratio
    assert len(cand.sent) == 1 and len(base.sent) == 1
    assert by["make_fx"].elapsed_s == 0.15


def test_a_group_cancelled_while_timed_again_never_finishes():
    run({"make_fx": [1.0]}, {"make_fx": [0.1]}, cancel=True)


class PipePool:
    """A pool of one worker answering through a real pipe, as WorkerPool's workers do."""

    def __init__(self):
        from multiprocessing import Pipe

        self.conn, self.peer = Pipe()

    def waitables(self):
        return [self.conn]  # its one worker is busy

    def poll(self, timeout):
        return [self.conn.recv()] if self.conn.poll(timeout) else []


def test_one_side_answering_is_collected_while_the_other_is_still_busy():
    """Note [one wait] (campaign/ab_pool.py): an answer of the candidate that comes while the
    baseline is busy is collected when it comes, not after a wait on the baseline."""
    cand, base = PipePool(), PipePool()
    pool = ABPool(cand, base, Baseline("/usr/bin/python3"))
    threading.Timer(0.1, lambda: cand.peer.send(("t", ["answer"]))).start()
    t = time.monotonic()
    pool._step(2.0)
    assert time.monotonic() - t < 1.0 and pool._c == {"t": ["answer"]} and pool._b == {}


def test_once_a_slowdown_is_established_its_pairs_run_once():
    """A candidate slower on every program: the first ESTABLISHED groups are timed again, the
    later ones are not (their slowdown is real; the campaign keeps its rate)."""
    cand, base = TimedPool({"make_fx": [1.0]}), TimedPool({"make_fx": [0.1]})
    pool = ABPool(cand, base, Baseline("/usr/bin/python3"))
    for n in range(ABPool.ESTABLISHED + 2):
        pool.submit((0, n), JOBS)
        got = pool.poll()
        while not got:
            got = pool.poll()
        by = {o.system: o for o in got[0][1]}
        assert slower(by["make_fx"], by["make_fx@baseline"])  # still reported slower
    reruns = [s for s in cand.sent if s == ["make_fx"]]
    assert len(reruns) == ABPool.ESTABLISHED * ABPool.RETIMES
