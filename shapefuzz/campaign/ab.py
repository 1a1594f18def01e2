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
import subprocess
import sys
from collections.abc import Hashable, Mapping
from pathlib import Path

from shapefuzz import BadInput
from shapefuzz.oracles.ab import SLOW_MIN_S, SLOWDOWN, SPEC_PREFIX, mark
from shapefuzz.oracles.findings import TORCH_SYSTEMS
from shapefuzz.repro.ab import SOURCE_ROOT, Baseline

__all__ = ["ABPool", "Baseline", "Launcher", "check_baseline", "mark", "probe", "read_samples", "speed_summary"]

#: files whose hashes tell two torch builds apart (the shape system and what it leans on)
SHAPE_FILES = ("fx/experimental/symbolic_shapes.py", "fx/experimental/sym_node.py",
               "fx/experimental/_config.py", "fx/experimental/recording.py",
               "utils/_sympy/functions.py", "utils/_sympy/value_ranges.py", "utils/_sympy/solve.py",
               "_subclasses/fake_tensor.py", "_subclasses/fake_impls.py", "_meta_registrations.py",
               "fx/passes/runtime_assert.py")

def spec_line(spec: Baseline, seed: int) -> str:
    """What the A/B oracle copies into each finding, so its repro knows the baseline."""
    return SPEC_PREFIX + json.dumps({**spec.to_json(), "seed": seed})


# ---- probing both sides -------------------------------------------------------------------
def build_info() -> dict:
    """This process's torch: version, file, hashes of SHAPE_FILES; and shapefuzz's folder."""
    import torch

    import shapefuzz

    root = os.path.dirname(torch.__file__)

    def digest(p: str) -> str:
        try:
            with open(os.path.join(root, p), "rb") as fh:
                return hashlib.sha256(fh.read()).hexdigest()[:16]
        except OSError:
            return ""

    return {"torch": torch.__version__, "torch_file": torch.__file__,
            "shapefuzz": os.path.dirname(os.path.abspath(shapefuzz.__file__)),
            "python": sys.version.split()[0], "hashes": {p: digest(p) for p in SHAPE_FILES}}


_PROBE = ("import json, sys; sys.path.insert(0, {root!r}); "
          "from shapefuzz.campaign.ab import build_info; print(json.dumps(build_info()))")


def probe(python: str, env: Mapping[str, str], timeout_s: float = 300.0) -> dict:
    """build_info() of `python` under `env`. Raises BadInput (one line) when it cannot
    import torch or shapefuzz."""
    return _probe_result(_start_probe(python, env), python, timeout_s)


def _start_probe(python: str, env: Mapping[str, str]) -> subprocess.Popen:
    try:
        return subprocess.Popen([python, "-c", _PROBE.format(root=SOURCE_ROOT)], env=dict(env),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL)
    except OSError as e:
        raise BadInput(f"--baseline-python {python}: cannot run it ({type(e).__name__}: {e})") from None


def _probe_result(p: subprocess.Popen, python: str, timeout_s: float) -> dict:
    try:
        out, err = p.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        p.kill()
        p.communicate()
        raise BadInput(f"--baseline-python {python}: cannot run it ({type(e).__name__}: {e})") from None
    if p.returncode != 0:
        last = (err.strip().splitlines() or ["no output"])[-1][:200]
        raise BadInput(f"the baseline ({python}) cannot import torch and shapefuzz ({last}); "
                       f"check `{python} -c 'import torch'` under the baseline environment")
    return json.loads(out.strip().splitlines()[-1])


def check_baseline(baseline: Baseline, timeout_s: float = 300.0,
                   started: subprocess.Popen | None = None) -> tuple[dict, dict]:
    """(candidate probe, baseline probe); BadInput when the baseline is unusable or is the
    candidate itself: the same torch build with no environment difference. `started`: the
    baseline's probe, already running (_start_probe)."""
    env = baseline.environ(os.environ)
    started = started or _start_probe(baseline.python, env)  # its torch import overlaps ours
    cand = build_info()
    base = _probe_result(started, baseline.python, timeout_s)
    if base["shapefuzz"] != cand["shapefuzz"]:
        raise BadInput(f"the baseline imports shapefuzz from {base['shapefuzz']}, not from "
                       f"{cand['shapefuzz']}; remove that copy from its environment")
    same = (base["torch"], base["hashes"]) == (cand["torch"], cand["hashes"])
    if same and env == dict(os.environ):
        raise BadInput(f"the baseline is the candidate: torch {base['torch']} with the same "
                       "symbolic_shapes.py and friends and no environment difference; give "
                       "--baseline-python another interpreter or --baseline-env KEY=VALUE")
    return cand, base


# ---- baseline workers (Note [A/B workers]) --------------------------------------------------
_BOOT = ("import sys; sys.path.insert(0, {root!r}); "
         "from shapefuzz.campaign.ab import baseline_worker; baseline_worker(int(sys.argv[1]))")


def baseline_worker(fd: int) -> None:
    """The baseline worker's entry point: the same loop as a candidate worker's."""
    from multiprocessing.connection import Connection

    from shapefuzz.campaign.worker_loop import _worker_main

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


class ABPool:
    """Two WorkerPools behind the one-pool group interface (Note [A/B workers])."""

    def __init__(self, candidate, baseline, spec: Baseline, samples: Path | None = None,
                 seed: int = 0):
        self.cand, self.base = candidate, baseline
        self.spec_line = spec_line(spec, seed)
        self.samples = samples
        self._c: dict = {}
        self._b: dict = {}
        self._jobs: dict = {}
        self._finished: dict = {}

    def __getattr__(self, name: str):
        """Anything else a campaign reads off its pool (time split, coverage) is the candidate's."""
        if name.startswith("_") or name in ("cand", "base"):
            raise AttributeError(name)
        return getattr(self.cand, name)

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

    def __enter__(self) -> ABPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def submit(self, tag: Hashable, jobs) -> None:
        self._jobs[tag] = list(jobs)
        self.cand.submit(tag, jobs)
        self.base.submit(tag, [j for j in jobs if j.system in TORCH_SYSTEMS])

    def in_flight(self) -> int:
        return len(self._jobs) + len(self._finished)

    def cancel(self, tag: Hashable) -> None:
        for d in (self._jobs, self._c, self._b, self._finished):
            d.pop(tag, None)
        self.cand.cancel(tag)
        self.base.cancel(tag)

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
        self._c.update(self.cand.poll(timeout / 2))
        self._b.update(self.base.poll(timeout / 2))
        for tag in [t for t in self._jobs if t in self._c and t in self._b]:
            jobs, cand, base = self._jobs.pop(tag), self._c.pop(tag), self._b.pop(tag)
            self._finished[tag] = list(cand) + [mark(o, self.spec_line) for o in base]
            if self.samples is not None and _generated(tag) and jobs:
                self._record(jobs, cand, base)

    def _record(self, jobs, cand, base) -> None:
        """Note [A/B samples]: one line per program."""
        from shapefuzz.oracles.ab import improvements
        from shapefuzz.program.kinds import load_program

        program = load_program(json.loads(jobs[0].program_json))
        eager = cand[0] if jobs[0].system == "eager" else None
        by_key = {(o.system, o.config): o for o in cand}
        pairs = [(by_key.get((b.system, b.config)), b) for b in base]
        line = {"hash": hashlib.sha256(jobs[0].program_json.encode()).hexdigest()[:16],
                "times": [[b.system, b.config, c.elapsed_s, b.elapsed_s] for c, b in pairs
                          if c is not None and c.outcome.kind == b.outcome.kind == "ok"],
                "improvements": [[b.system, b.config, why] for c, b in pairs if c is not None
                                 for why in improvements(program, eager, c, b)]}
        with open(self.samples, "a") as fh:
            fh.write(json.dumps(line) + "\n")


# ---- the speed table (Note [A/B samples]) -----------------------------------------------------


def _quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def read_samples(path: Path, hashes: list[str]) -> list[dict]:
    """The sample lines of the programs the campaign counted: as many lines of each program
    hash as the campaign counted it (small question programs repeat), earliest first."""
    from collections import Counter

    if not path.exists():
        return []
    left, out = Counter(hashes), []
    for line in path.read_text().splitlines():
        try:
            s = json.loads(line)
        except ValueError:
            continue  # a line cut by a kill: the program is re-run after a resume anyway
        if isinstance(s, dict) and left[s.get("hash")] > 0:
            left[s["hash"]] -= 1
            out.append(s)
    return out


def speed_summary(samples: list[dict]) -> dict:
    """Per system: candidate/baseline time ratios (median, p10, p90, a histogram), the median
    speedup, and the programs where the candidate is more than SLOWDOWN x slower (and at least
    SLOW_MIN_S: the slowdown oracle's rule)."""
    per: dict[str, list] = {}
    for s in samples:
        for system, config, c, b in s["times"]:
            if b > 0 and c > 0:
                per.setdefault(system, []).append((c / b, c, b, config, s["hash"]))
    return {system: _system_speed(rows) for system, rows in sorted(per.items())}


def _system_speed(rows: list) -> dict:
    ratios = [r[0] for r in rows]
    med = _quantile(ratios, 0.5)
    edges = [0.25, 0.5, 0.8, 0.9, 1.1, 1.25, 2.0, 4.0]
    hist = [sum(1 for r in ratios if lo <= r < hi) for lo, hi in zip([0.0, *edges], [*edges, float("inf")])]
    # the oracle's rule: SLOWDOWN x slower and SLOW_MIN_S more (below it, scheduling noise)
    slow = sorted((r for r in rows if r[0] > SLOWDOWN and r[1] - r[2] >= SLOW_MIN_S), reverse=True)[:20]
    return {"n": len(rows), "median_ratio": med, "p10_ratio": _quantile(ratios, 0.1),
            "p90_ratio": _quantile(ratios, 0.9), "median_speedup": 1 / med if med else 0.0,
            "candidate_s": sum(r[1] for r in rows), "baseline_s": sum(r[2] for r in rows),
            "histogram": {"edges": edges, "counts": hist},
            "slower_2x": [{"program": h, "config": cfg, "ratio": round(r, 3), "candidate_s": round(c, 4),
                           "baseline_s": round(b, 4)} for r, c, b, cfg, h in slow]}


def improvement_summary(samples: list[dict]) -> dict:
    """{system:config: {why: n}} over the counted programs."""
    out: dict = {}
    for s in samples:
        for system, config, why in s["improvements"]:
            per = out.setdefault(f"{system}:{config}", {})
            per[why] = per.get(why, 0) + 1
    return out


# ---- one A/B run: probe, pools, report ------------------------------------------------------
PROBE_FILE = "ab-probe.json"
SAMPLES_FILE = "ab-samples.jsonl"


def start(baseline: Baseline, out: Path, seed: int) -> ABRun:
    """Start probing the baseline; ABRun.pool checks the probe (Note [A/B start-up])."""
    return ABRun(baseline, out, seed, _start_probe(baseline.python, baseline.environ(os.environ)))


class ABRun:
    """The pools of one A/B campaign, once the baseline is known to be usable.

    Note [A/B start-up]: the probe is a fresh baseline interpreter importing torch (15-20 s
    at load 10, of a 90 s budget whose start-up took 50-60 s), so it runs while the baseline's
    workers start (a plain Popen, it does not block); the candidate's pool, whose constructor
    waits for the warm template (Note [zygote]), starts once the probe has said the baseline is
    usable, so a bad baseline still exits 2 after the probe alone (its pool closed first)."""

    def __init__(self, baseline: Baseline, out: Path, seed: int, probing: subprocess.Popen | None = None):
        self.baseline, self.out, self.seed, self.probing = baseline, out, seed, probing

    def check(self) -> None:
        """Wait for the probe: BadInput when the baseline is unusable or the same build; then
        the samples start afresh unless an unfinished campaign in `out` is being resumed."""
        from shapefuzz.cases.corpus import atomic_write, load_state

        cand, base = check_baseline(self.baseline, started=self.probing)
        if load_state(self.out) is None:
            (self.out / SAMPLES_FILE).unlink(missing_ok=True)
        atomic_write(self.out / PROBE_FILE, json.dumps({"candidate": cand, "baseline": base,
                                                        "spec": self.baseline.to_json()}, indent=1))

    def pool(self, *args, **kwargs) -> ABPool:
        """WorkerPool's arguments, for both sides (the baseline's workers log apart)."""
        from shapefuzz.campaign.workers import WorkerPool

        base = WorkerPool(*args, **{**kwargs, "log_path": str(self.out / "workers-baseline.log")},
                          launch=Launcher(self.baseline))
        try:
            self.check()
        except BaseException:
            base.close()
            raise
        cand = WorkerPool(*args, **kwargs)
        cand.local_systems = base.local_systems  # both sides' torch jobs in workers: timed alike
        return ABPool(cand, base, self.baseline, self.out / SAMPLES_FILE, self.seed)


def ab_report(baseline: Baseline | None, out: Path, hashes: list[str]) -> dict | None:
    """report.json's "ab" section (None outside A/B mode)."""
    if baseline is None:
        return None
    try:
        probes = json.loads((out / PROBE_FILE).read_text())
    except (OSError, ValueError):
        probes = {}
    samples = read_samples(out / SAMPLES_FILE, hashes)
    return {"baseline": baseline.to_json(), "candidate_build": probes.get("candidate", {}),
            "baseline_build": probes.get("baseline", {}), "programs": len(samples),
            "speed": speed_summary(samples), "improvements": improvement_summary(samples),
            "slowdown_ratio": SLOWDOWN}
