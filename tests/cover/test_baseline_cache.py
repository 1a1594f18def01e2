"""The baseline cache of A/B campaigns (shapefuzz/campaign/baseline_cache.py, Note [baseline
cache]): a stored observation comes back equal, under its build key only; load-dependent outcomes
are not stored; a planted pickle runs nothing; the key follows the build, the environment that
matters and PYTHONPATH's patch files; and an A/B pool whose baseline jobs are all stored sends its
baseline workers nothing and answers in job order."""

from __future__ import annotations

import os
import pickle

from shapefuzz.campaign.ab_pool import ABPool
from shapefuzz.campaign.baseline_cache import BaselineCache, build_key
from shapefuzz.campaign.executor import ExecutorBase
from shapefuzz.repro.ab import Baseline
from shapefuzz.systems.jobs import Job
from shapefuzz.systems.observation import Decision, Observation, Outcome, RunResult, SmtCheck, Value

BUILD = {"torch": "2.13.0", "torch_file": "/x/torch/__init__.py", "hashes": {"a.py": "1"}, "tree": "t"}


def job(n: int, system: str = "make_fx") -> Job:
    return Job(f'{{"program": {n}}}', system, "default", "[]")


def obs(system: str = "make_fx", status: str = "ok", n: int = 0) -> Observation:
    return Observation(system, "default", Outcome(status), decisions=(Decision("Eq(s0, 2)", "False", "guard"),),
                       artifact=RunResult(True, values=(Value("tensor", (n, 2), "float32", (1.0, 2.0)),)),
                       smt=(SmtCheck("static-soundness", 0, "Eq(s0, 2)", "unsat"),), elapsed_s=0.5)


def test_a_stored_observation_comes_back_equal_under_its_key_only(tmp_path):
    cache = BaselineCache(tmp_path / "c.sqlite", "k1")
    cache.put(job(1), obs(n=3))
    assert cache.get(job(1)) == obs(n=3)
    assert cache.get(job(2)) is None and cache.get(job(1, "export")) is None
    assert BaselineCache(tmp_path / "c.sqlite", "k2").get(job(1)) is None  # another build
    assert BaselineCache(tmp_path / "c.sqlite", "k1").get(job(1)) == obs(n=3)  # a later campaign
    assert (cache.hits, cache.misses) == (1, 2)


def test_load_dependent_outcomes_are_not_stored(tmp_path):
    cache = BaselineCache(tmp_path / "c.sqlite", "k")
    for n, status in enumerate(("timeout", "crash", "bug")):
        cache.put(job(n), obs(status=status))
        assert cache.get(job(n)) is None
    cache.put(job(9), obs(status="dde"))
    assert cache.get(job(9)).outcome.status == "dde"


class Planted:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.mkdir, (self.path,))


def test_a_planted_entry_runs_nothing_and_is_a_miss(tmp_path):
    cache = BaselineCache(tmp_path / "c.sqlite", "k")
    target = tmp_path / "was-run"
    cache.db.execute("INSERT INTO obs VALUES (?, ?)", (cache._key(job(1)), pickle.dumps(Planted(str(target)))))
    assert cache.get(job(1)) is None and not target.exists()
    cache.put(job(1), obs())  # the job ran again and replaced it
    assert cache.get(job(1)) == obs()


def test_the_key_follows_the_build_the_environment_and_the_patch_files(tmp_path):
    patch = tmp_path / "patch"
    patch.mkdir()
    (patch / "sitecustomize.py").write_text("x = 1\n")
    env = {"HOME": "/root", "PYTHONPATH": str(patch)}
    k = build_key(BUILD, env, {"torch_config": []})
    assert build_key(BUILD, {**env, "HOME": "/elsewhere", "PWD": "/tmp"}, {"torch_config": []}) == k
    assert build_key({**BUILD, "tree": "u"}, env, {"torch_config": []}) != k  # a source build edited
    assert build_key(BUILD, {**env, "TORCH_LOGS": "dynamic"}, {"torch_config": []}) != k
    assert build_key(BUILD, env, {"torch_config": [["x", 1]]}) != k
    (patch / "sitecustomize.py").write_text("x = 22\n")  # the patch itself changed
    assert build_key(BUILD, env, {"torch_config": []}) != k


class FakePool(ExecutorBase):
    """A WorkerPool stand-in: answers every submitted group at the next poll."""

    def __init__(self):
        self.submitted: list = []
        self.done: dict = {}

    def submit(self, tag, jobs):
        self.submitted.append(list(jobs))
        self.done[tag] = [obs(j.system, n=len(j.program_json)) for j in jobs]

    def poll(self, timeout):
        out, self.done = self.done, {}
        return out

    def cancel(self, tag):
        self.done.pop(tag, None)

    def close(self):
        pass


def test_an_ab_pool_with_every_baseline_job_stored_leaves_the_baseline_idle(tmp_path):
    jobs = [Job("{}", "eager", "default", "[]"), job(1), job(2, "export")]

    def run(cache):
        cand, base = FakePool(), FakePool()
        pool = ABPool(cand, base, Baseline("/usr/bin/python3"), cache=cache)
        pool.submit((0, 0), jobs)
        ((tag, got),) = pool.poll()
        assert tag == (0, 0)
        return base.submitted, got

    first_sent, first = run(BaselineCache(tmp_path / "c.sqlite", "k"))
    assert [j.system for j in first_sent[0]] == ["make_fx", "export"]  # eager is truth: one side only
    again_sent, again = run(BaselineCache(tmp_path / "c.sqlite", "k"))
    assert again_sent == [] and again == first
    assert [o.system for o in again] == ["eager", "make_fx", "export", "make_fx@baseline", "export@baseline"]
