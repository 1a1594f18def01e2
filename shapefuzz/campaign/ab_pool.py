"""A/B campaigns: every program under a candidate torch (this interpreter and environment) and a
baseline torch (another interpreter, or this one with another environment).

Note [A/B workers]: the baseline's workers are not multiprocessing children. A spawned child
gets its parent's sys.path (multiprocessing's preparation data), which would put the candidate's
PYTHONPATH, and for another venv the candidate's site-packages, in front of the baseline's own
torch. So a baseline worker is a plain `subprocess.Popen` of the baseline interpreter, started
with the baseline's environment (start-up hooks such as sitecustomize.py and .pth files run as
they would for its user) plus shapefuzz's own source folder at the front of sys.path, so both
sides run the same shapefuzz. It talks to the pool over a multiprocessing Connection on an
inherited socket, and runs the same `_worker_main` loop as a candidate worker: isolation,
timeouts, the memory cap and the state guard are the candidate's (Note [isolation]).

`ABPool` has the WorkerPool group interface: a group's jobs run on both sides (the baseline runs
every torch system's jobs; eager and ref are torch-independent truth and run once), and the
group finishes when both sides have answered. Baseline observations come back after the
candidate's with their system marked (`make_fx@baseline`, oracles.base.BASELINE): oracles that
judge one torch never see them, the A/B oracle (oracles/ab.py) compares the pairs.

Note [A/B samples]: the per-program speed of both sides and the improvements (oracles/ab.py)
are appended, one JSON line per generated program, to DIR/ab-samples.jsonl as each program's
group finishes. The report reads back only the lines of programs the campaign counted (by
program hash): speculative programs cancelled after a finding and shrink runs never enter it,
and a resumed campaign keeps the lines of its first part."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Hashable
from multiprocessing.connection import wait
from pathlib import Path

from shapefuzz.campaign.ab_probe import check_baseline, probe, start_probe
from shapefuzz.campaign.ab_speed import fastest, improvement_summary, read_samples, speed_summary
from shapefuzz.campaign.baseline_cache import BaselineCache, build_key
from shapefuzz.campaign.executor import ExecutorBase
from shapefuzz.campaign.worker_loop import _worker_main
from shapefuzz.campaign.workers import WorkerPool
from shapefuzz.cases.corpus import atomic_write, load_state
from shapefuzz.oracles.ab import SLOWDOWN, ABEvidence, improvements, mark, slower
from shapefuzz.oracles.findings import TORCH_SYSTEMS
from shapefuzz.program.kinds import load_program
from shapefuzz.repro.ab import SOURCE_ROOT, Baseline

__all__ = ["ABPool", "Baseline", "Launcher", "check_baseline", "mark", "probe"]


def ab_evidence(spec: Baseline, seed: int) -> ABEvidence:
    """What the A/B oracle's findings carry, so their repro knows the baseline (Note [typed evidence])."""
    return ABEvidence(spec.python, spec.env, seed)


# ---- baseline workers (Note [A/B workers]) --------------------------------------------------
_BOOT = ("import sys; sys.path.insert(0, {root!r}); "
         "from shapefuzz.campaign.ab_pool import baseline_worker; baseline_worker(int(sys.argv[1]))")


def baseline_worker(fd: int) -> None:
    """The baseline worker's entry point: the same loop as a candidate worker's."""
    from multiprocessing.connection import Connection

    conn = Connection(fd)
    _worker_main(conn, *conn.recv())


class _Proc:
    """A Popen seen as the multiprocessing.Process the pool expects."""

    def __init__(self, popen: subprocess.Popen):
        self.popen = popen

    def is_alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        self.popen.kill()

    def join(self, timeout: float | None = None) -> None:
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            pass

    @property
    def exitcode(self) -> int | None:
        return self.popen.poll()


class Launcher:
    """Starts one baseline worker: `launcher(args) -> (connection, process)`."""

    def __init__(self, baseline: Baseline):
        self.python = baseline.python
        self.env = baseline.environ(os.environ)

    def __call__(self, args: tuple):
        import multiprocessing as mp

        parent, child = mp.Pipe()
        fd = child.fileno()
        # what the interpreter prints before the worker redirects its output (a baseline that
        # cannot start says why) goes to the workers' log, as the worker's own output does: the
        # campaign's stderr keeps its one-line error
        log = open(args[1], "ab") if args[1] else None  # noqa: SIM115 - closed once started
        try:
            popen = subprocess.Popen([self.python, "-c", _BOOT.format(root=SOURCE_ROOT), str(fd)],
                                     pass_fds=(fd,), env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=log)
        finally:
            if log is not None:
                log.close()
        child.close()
        try:
            parent.send(args)
        except OSError:  # it died at once (a baseline without torch): the pool reads EOF, and a
            pass  # BrokenPipeError must not reach click, which exits 1 silently on EPIPE
        return parent, _Proc(popen)


# ---- the pair of pools ----------------------------------------------------------------------
def _generated(tag: Hashable) -> bool:
    """A generating round's group (round, index); shrink and blame runs use other tags."""
    return isinstance(tag, tuple) and len(tag) == 2 and all(isinstance(x, int) for x in tag)


class ABPool(ExecutorBase):
    """Two WorkerPools behind the executor interface (Notes [A/B workers], [executor]); what
    the reports read off it besides is the candidate's, or both sides' summed."""

    #: reruns of a pair the slowdown rule calls slower (Note [A/B retiming] in ab_speed.py)
    RETIMES = 2
    #: pairs of one (system, config) that stayed slower through every rerun, after which its
    #: slowdown is established and its pairs are not run again (Note [A/B retiming])
    ESTABLISHED = 2

    def __init__(self, candidate, baseline, spec: Baseline, samples: Path | None = None,
                 seed: int = 0, cache=None):
        self.cand, self.base = candidate, baseline
        self.evidence = ab_evidence(spec, seed)
        self.samples = samples
        self.cache = cache  # Note [baseline cache] (baseline_cache.py), or None
        self._stored: dict = {}  # tag -> (the baseline's jobs, what the cache had for each)
        self._c: dict = {}
        self._b: dict = {}
        self._jobs: dict = {}
        self._finished: dict = {}
        self._retiming: dict = {}  # tag -> (jobs, candidate's, baseline's, reruns so far)
        self._stayed_slower: dict = {}  # (system, config) -> pairs slower after every rerun

    @property
    def times(self):
        return self.cand.times

    @property
    def coverage(self):
        return self.cand.coverage

    def cpu_s(self) -> float:
        return self.cand.cpu_s()

    @property
    def size(self) -> int:
        return self.cand.size

    @property
    def first_ready_s(self) -> float:
        """What an A/B repro.py's two interpreters take to start side by side (Note [background
        confirmation]): the slower of the two pools' first start-up, each measured while the other
        pool started too."""
        return max(self.cand.first_ready_s, self.base.first_ready_s)

    @property
    def restarts(self) -> int:
        return self.cand.restarts + self.base.restarts

    @property
    def bugs(self) -> list[dict]:
        return list(self.cand.bugs) + [{**b, "message": "baseline: " + b["message"]} for b in self.base.bugs]

    def close(self) -> None:
        self.cand.close()
        self.base.close()
        if self.cache is not None:
            self.cache.close()

    def submit(self, tag: Hashable, jobs) -> None:
        self._jobs[tag] = list(jobs)
        self.cand.submit(tag, jobs)
        theirs = [j for j in jobs if j.system in TORCH_SYSTEMS]
        stored = [self.cache.get(j) if self.cache is not None else None for j in theirs]
        self._stored[tag] = (theirs, stored)
        missing = [j for j, o in zip(theirs, stored) if o is None]
        if missing:
            self.base.submit(tag, missing)
        else:  # every baseline observation is stored: its workers stay free
            self._b[tag] = []

    def _baseline_of(self, tag: Hashable, ran: list) -> list:
        """The baseline's observations of `tag` in job order: stored ones and the `ran` ones
        (stored now, for the next campaign)."""
        theirs, stored = self._stored.pop(tag)
        fresh, out = iter(ran), []
        for job, obs in zip(theirs, stored):
            if obs is None:
                obs = next(fresh, None)
                if obs is None:
                    break  # the pool answered fewer jobs than it was given: nothing to pair
                if self.cache is not None:
                    self.cache.put(job, obs)
            out.append(obs)
        return out

    def in_flight(self) -> int:
        return len(self._jobs) + len(self._finished) + len(self._retiming)

    def cancel(self, tag: Hashable) -> None:
        for d in (self._jobs, self._finished, self._stored, self._retiming):
            d.pop(tag, None)
        for t in (tag, ("retime", tag)):  # the group and its reruns (Note [A/B retiming])
            self._c.pop(t, None)
            self._b.pop(t, None)
            self.cand.cancel(t)
            self.base.cancel(t)

    def poll(self, timeout: float = 0.25) -> list:
        if not self._finished:
            self._step(timeout)
        done, self._finished = list(self._finished.items()), {}
        return done

    def run_many(self, jobs) -> list:
        tag = ("run_many", object())
        self.submit(tag, jobs)
        while tag not in self._finished:
            self._step(0.25)
        return self._finished.pop(tag)

    def _step(self, timeout: float) -> None:
        """Collect what both sides answered.

        Note [one wait]: wait on both sides' busy workers at once, then collect both without
        waiting. Polling one side and then the other (half the timeout each) left a side whose
        answer came during the other's wait idle until that wait ended, in every group."""
        conns = self.cand.waitables() + self.base.waitables()
        if conns:
            wait(conns, timeout)
            timeout = 0.0
        self._c.update(self.cand.poll(timeout / 2))
        self._b.update(self.base.poll(timeout / 2))
        for tag in [t for t in self._jobs if t in self._c and t in self._b]:
            jobs, cand, base = self._jobs.pop(tag), self._c.pop(tag), self._baseline_of(tag, self._b.pop(tag))
            self._answered(tag, jobs, list(cand), base, 0)
        for tag in [t for t in self._retiming if ("retime", t) in self._c and ("retime", t) in self._b]:
            jobs, cand, base, reruns = self._retiming.pop(tag)
            self._answered(tag, jobs, fastest(cand, self._c.pop(("retime", tag))),
                           fastest(base, self._b.pop(("retime", tag))), reruns)

    def _answered(self, tag: Hashable, jobs: list, cand: list, base: list, reruns: int) -> None:
        """Both sides answered `tag`: run its slower-looking pairs again (Note [A/B retiming] in
        ab_speed.py), or hand the group to the campaign."""
        by_key = {(o.system, o.config): o for o in cand}
        slow = {(b.system, b.config) for b in base
                if (b.system, b.config) in by_key and slower(by_key[(b.system, b.config)], b)}
        if reruns == self.RETIMES:
            for k in slow:
                self._stayed_slower[k] = self._stayed_slower.get(k, 0) + 1
        slow = {k for k in slow if self._stayed_slower.get(k, 0) < self.ESTABLISHED}
        if slow and reruns < self.RETIMES:
            again = [j for j in jobs if (j.system, j.config) in slow]
            self._retiming[tag] = (jobs, cand, base, reruns + 1)
            self.cand.submit(("retime", tag), again)
            self.base.submit(("retime", tag), again)
            return
        self._finished[tag] = cand + [mark(o, self.evidence) for o in base]
        if self.samples is not None and _generated(tag) and jobs:
            self._record(jobs, cand, base)
            if self.cache is not None:  # the report's "baseline_cache" (ab_report)
                self.cache.write_stats(self.samples.parent / CACHE_FILE)

    def _record(self, jobs, cand, base) -> None:
        """Note [A/B samples]: one line per program."""
        program = load_program(json.loads(jobs[0].program_json))
        eager = cand[0] if jobs[0].system == "eager" else None
        by_key = {(o.system, o.config): o for o in cand}
        pairs = [(by_key.get((b.system, b.config)), b) for b in base]
        line = {"hash": hashlib.sha256(jobs[0].program_json.encode()).hexdigest()[:16],
                "times": [[b.system, b.config, c.elapsed_s, b.elapsed_s] for c, b in pairs
                          if c is not None and c.outcome.status == b.outcome.status == "ok"],
                "improvements": [[b.system, b.config, why] for c, b in pairs if c is not None
                                 for why in improvements(program, eager, c, b)]}
        with open(self.samples, "a") as fh:
            fh.write(json.dumps(line) + "\n")


# ---- one A/B run: probe, pools, report ------------------------------------------------------
PROBE_FILE = "ab-probe.json"
SAMPLES_FILE = "ab-samples.jsonl"
CACHE_FILE = "ab-cache.json"


def start(baseline: Baseline, out: Path, seed: int, cache: Path | None = None) -> ABRun:
    """Start probing the baseline; ABRun.pool checks the probe (Note [A/B start-up]). `cache`:
    the baseline cache's file (Note [baseline cache]), None for none."""
    return ABRun(baseline, out, seed, start_probe(baseline.python, baseline.environ(os.environ)), cache)


class ABRun:
    """The pools of one A/B campaign, once the baseline is known to be usable.

    Note [A/B start-up]: the probe is a fresh baseline interpreter importing torch (15-20 s
    at load 10, of a 90 s budget whose start-up took 50-60 s), so it runs while both sides'
    workers start: the baseline's (a plain Popen, it does not block) and the candidate's (its
    constructor waits for the warm template, Note [zygote], and its workers then warm up while
    the probe goes on; a repeated A/B run waited 12.5 s for its first worker at load 5 when the
    candidate's pool started after the probe). A bad baseline still exits 2 after the probe,
    both pools closed first."""

    def __init__(self, baseline: Baseline, out: Path, seed: int, probing: subprocess.Popen | None = None,
                 cache: Path | None = None):
        self.baseline, self.out, self.seed, self.probing = baseline, out, seed, probing
        self.cache_path = cache
        self.build: dict = {}  # the baseline's probe, once checked

    def check(self) -> None:
        """Wait for the probe: BadInput when the baseline is unusable or the same build; then
        the samples start afresh unless an unfinished campaign in `out` is being resumed."""
        cand, base = check_baseline(self.baseline, started=self.probing)
        self.build = base
        if load_state(self.out) is None:
            (self.out / SAMPLES_FILE).unlink(missing_ok=True)
            (self.out / CACHE_FILE).unlink(missing_ok=True)
        atomic_write(self.out / PROBE_FILE, json.dumps({"candidate": cand, "baseline": base,
                                                        "spec": self.baseline.to_json()}, indent=1))

    def pool(self, *args, **kwargs) -> ABPool:
        """WorkerPool's arguments, for both sides (the baseline's workers log apart)."""
        base = WorkerPool(*args, **{**kwargs, "log_path": str(self.out / "workers-baseline.log")},
                          launch=Launcher(self.baseline))
        cand = None
        try:
            cand = WorkerPool(*args, **kwargs)  # warms up while the probe runs (Note [A/B start-up])
            self.check()
        except BaseException:
            if cand is not None:
                cand.close()
            base.close()
            raise
        cand.local.systems = base.local.systems  # both sides' torch jobs in workers: timed alike
        return ABPool(cand, base, self.baseline, self.out / SAMPLES_FILE, self.seed, self._cache(args, kwargs))

    def _cache(self, args: tuple, kwargs: dict):
        """Note [baseline cache]: keyed by the checked build and what the workers are told."""
        if self.cache_path is None:
            return None
        extra = {"torch_config": args[2] if len(args) > 2 else kwargs.get("torch_config"),
                 "plugins": list(kwargs.get("plugins", ()))}
        try:
            return BaselineCache(self.cache_path, build_key(self.build, self.baseline.environ(os.environ), extra))
        except (OSError, sqlite3.Error) as e:
            print(f"shapefuzz: no baseline cache ({self.cache_path}: {e}); every baseline job runs",
                  file=sys.stderr)
            return None


def ab_report(baseline: Baseline | None, out: Path, hashes: list[str]) -> dict | None:
    """report.json's "ab" section (None outside A/B mode)."""
    if baseline is None:
        return None
    try:
        probes = json.loads((out / PROBE_FILE).read_text())
    except (OSError, ValueError):
        probes = {}
    samples = read_samples(out / SAMPLES_FILE, hashes)
    try:
        cache = json.loads((out / CACHE_FILE).read_text())
    except (OSError, ValueError):
        cache = None
    return {"baseline_cache": cache, "baseline": baseline.to_json(), "candidate_build": probes.get("candidate", {}),
            "baseline_build": probes.get("baseline", {}), "programs": len(samples),
            "speed": speed_summary(samples), "improvements": improvement_summary(samples),
            "slowdown_ratio": SLOWDOWN}
