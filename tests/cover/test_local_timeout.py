"""Note [local timeout]: a job run in the campaign process (ref, Note [ref in process]) that
hangs gets a `timeout` observation at the per-job timeout instead of hanging the campaign; a
job that finishes in time is untouched and leaves no timer behind."""

from __future__ import annotations

import signal
import time

import pytest

import shapefuzz.campaign.local as local
from shapefuzz.campaign.local import LocalJobs, LocalTimeout, deadline
from shapefuzz.campaign.timing import SystemTimes
from shapefuzz.campaign.torchcov import TorchCoverage
from shapefuzz.systems.jobs import Job


def test_the_deadline_interrupts_a_hang_and_clears_its_timer():
    t = time.perf_counter()
    with pytest.raises(LocalTimeout), deadline(0.2):
        time.sleep(10)
    assert time.perf_counter() - t < 5
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    with deadline(5):
        x = sum(range(1000))
    assert x == 499500 and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_hanging_local_job_is_a_timeout_observation(monkeypatch):
    monkeypatch.setattr(local, "run_job", lambda job, parsed: time.sleep(10))
    here = LocalJobs(("ref",), 0.2, SystemTimes(), TorchCoverage(), None)  # a ref job: no coverage sampler
    obs = here.run(Job("{}", "ref", "default", "[]"))
    assert (obs.system, obs.outcome.status) == ("ref", "timeout"), obs.outcome
    assert "no answer in 0.2 s" in obs.outcome.message
