"""Note [parallel rounds], without worker processes: a fake pool that answers groups out of order
(the last submitted first) gives the campaign the same programs, findings and counts as a serial
run, and really keeps parallel + 1 programs in flight. Question programs on `ref` run in-process
in microseconds; a planted "crash" on some programs (by hash) makes findings, so rounds end early
and speculative programs get cancelled."""

from __future__ import annotations

import hashlib
from dataclasses import replace

from shapefuzz.campaign.engine import Campaign, CampaignSettings
from shapefuzz.systems.jobs import run_job
from shapefuzz.systems.observation import Outcome

TARGETS = (("ref", "default"),)


def run_planted(job):
    obs = run_job(job)
    if hashlib.sha256(job.program_json.encode()).hexdigest()[0] in "01":  # ~1 program in 8
        return replace(obs, outcome=Outcome("crash", "Crash", "planted"))
    return obs


class OutOfOrderPool:
    def __init__(self):
        self.pending: dict = {}
        self.max_in_flight = 0
        self.cancelled = 0

    def submit(self, tag, jobs):
        self.pending[tag] = jobs
        self.max_in_flight = max(self.max_in_flight, len(self.pending))

    def poll(self, timeout=0.0):
        if not self.pending:
            return []
        tag = list(self.pending)[-1]  # newest first: results arrive out of order
        return [(tag, [run_planted(j) for j in self.pending.pop(tag)])]

    def cancel(self, tag):
        self.pending.pop(tag, None)
        self.cancelled += 1

    def run_many(self, jobs):
        return [run_planted(j) for j in jobs]


def campaign(executor, parallel: int) -> Campaign:
    cfg = CampaignSettings(TARGETS, budget_s=600, max_examples=80, seed=3, shrink_budget_s=2,
                           parallel=parallel)
    return Campaign(cfg, executor).run()


def test_out_of_order_results_give_the_serial_campaign():
    serial = campaign(lambda jobs: [run_planted(j) for j in jobs], 1)
    pool = OutOfOrderPool()
    par = campaign(pool, 3)
    assert pool.max_in_flight == 4  # parallel + 1 programs in flight
    assert par.stats.hashes == serial.stats.hashes and len(serial.stats.hashes) == 80
    assert set(par.bugs) == set(serial.bugs) and serial.bugs  # the planted crash was found
    assert {s: b.count for s, b in par.bugs.items()} == {s: b.count for s, b in serial.bugs.items()}
    assert par.stats.outcomes == serial.stats.outcomes
    assert par.round == serial.round >= 1  # rounds ended on new findings in both
    assert pool.cancelled >= 1  # speculative programs after a new finding were dropped
