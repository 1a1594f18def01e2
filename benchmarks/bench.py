"""shapefuzz throughput benchmark: raw make_fx tracing vs. shapefuzz's make_fx observation vs.
the full fuzzer pipeline, side by side on one fixed, deterministic set of generated programs.

    python benchmarks/bench.py [--programs N] [--out benchmarks/results.md]
                               [--export-programs K] [--profile [FILE]]

See benchmarks/README.md for what each row means. Library code is only *called* from here.

Method (so the rows are comparable):
  * Programs are generated once, deterministically (Hypothesis, derandomized, database=None),
    and passed to every measurement as JSON. A fingerprint of the set is printed.
  * Every in-process measurement lives in its own spawned interpreter, and every pipeline row
    has its own WorkerPool, so no row inherits torch / sympy / FakeTensor dispatch caches
    warmed by another row (a program traced a second time in one process is markedly
    cheaper, and a fuzzer sees each program once). Each process sees each program once.
  * The first WARMUP programs go through every row untimed (this also starts the processes).
  * The timed programs are then fed to the rows in chunks, interleaved, round-robin, with the
    row order rotated every chunk: a change in the machine's load (the dev box is shared)
    lands on all rows about equally instead of on whichever row happened to be running.
    Only one row works at a time; the others' processes sleep.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import multiprocessing as mp
import os
import platform
import pstats
import statistics
import sys
import time
import warnings
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

WARMUP = 5
CHUNK = 10  # timed programs per row per turn
MAKE_FX = (("make_fx", "default"),)
MAKE_FX_EXPORT = (("make_fx", "default"), ("export", "default"))
BUDGET_OVERHEAD = 1.25  # DESIGN: pipeline time / raw trace time
BUDGET_RATE = 8.0  # DESIGN: make_fx programs/s

ROW_EAGER = "eager: run_job(eager), in-process"
ROW_RAW = "make_fx raw trace (symbolic inputs + make_fx(program_fn)(*fakes))"
ROW_OBS0 = "make_fx observation, in-process, 0 variants"
ROW_OBS6 = "make_fx observation, in-process, 6 variants (default)"
ROW_PIPE1 = "pipeline: evaluate(make_fx), WorkerPool(1), n_variants=0"
ROW_PIPE2 = "pipeline: evaluate(make_fx + export), WorkerPool(2), n_variants=0"


# ---- program generation (parent process) -----------------------------------------------------

def generate(n: int) -> list:
    from hypothesis import HealthCheck, given, seed, settings

    from shapefuzz.strategies import programs

    out: list = []

    # Do not edit this function's body casually: derandomize=True seeds Hypothesis from the
    # test function's own digest, so editing it changes the program set (see the fingerprint).
    @seed(0)
    @settings(database=None, max_examples=n, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def collect(p):
        out.append(p)

    collect()
    return out


# ---- measurements inside a child interpreter ----------------------------------------------------
# Each takes [(program_json, timed)] and returns a partial result for the timed items only:
# lists (extended), dicts of counts (added) and numbers (added) -- see merge().

_CHILD: dict = {}  # per child process: set up once; the profiler, when profiling


def child_run(stage: str, items: list[tuple[str, bool]], opts: dict) -> dict:
    if not _CHILD.get("ready"):
        warnings.filterwarnings("ignore")  # as shapefuzz workers do
        _CHILD["ready"] = True
    return {"eager": _eager, "raw": _raw_trace, "observe": _observe}[stage](items, **opts)


def child_profile_text() -> str:
    buf = io.StringIO()
    st = pstats.Stats(_CHILD["prof"], stream=buf)
    st.sort_stats("cumulative").print_stats(45)
    st.sort_stats("tottime").print_stats(30)
    return buf.getvalue()


def _eager(items) -> dict:
    import shapefuzz.systems.eager  # noqa: F401
    from shapefuzz.systems.jobs import Job, run_job

    times, cpu_times, statuses = [], [], Counter()
    for pj, timed in items:
        c0, t0 = time.process_time(), time.perf_counter()
        obs = run_job(Job(pj, "eager", "default", "[]"))
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        if timed:
            times.append(dt)
            cpu_times.append(dc)
            statuses[obs.outcome.status] += 1
    return {"times": times, "cpu_times": cpu_times, "statuses": dict(statuses)}


def _raw_trace(items) -> dict:
    """A bare symbolic trace: the symbolic inputs (ShapeEnv, FakeTensorMode, fakeify, exactly as
    MakeFxSystem._trace builds them; make_fx(tracing_mode="symbolic") on real tensors does the
    same work internally) and the make_fx(...)(*fakes) call. No guards/asserts pass, no replay,
    no reference run, no decision recording."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    from shapefuzz.program import Program, interp
    from shapefuzz.systems.make_fx import fakeify

    times, cpu_times, setup_times, statuses, exc_types = [], [], [], Counter(), Counter()
    for pj, timed in items:
        p = Program.from_json(json.loads(pj))
        s0, sc0 = time.perf_counter(), time.process_time()
        se = ShapeEnv()
        mode = FakeTensorMode(shape_env=se)
        real = interp.make_inputs(p.inputs)
        fakes = [fakeify(mode, t, s.dims, s.name) for t, s in zip(real, p.inputs)]
        se.pending_fresh_unbacked_symbols.clear()
        fn = interp.program_fn(p)
        c0, t0 = time.process_time(), time.perf_counter()
        exc = ""
        try:
            make_fx(fn, tracing_mode="symbolic")(*fakes)
        except Exception as e:
            exc = type(e).__name__
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        if timed:
            times.append(dt + (t0 - s0))
            cpu_times.append(dc + (c0 - sc0))
            setup_times.append(t0 - s0)
            statuses["exception" if exc else "ok"] += 1
            if exc:
                exc_types[exc] += 1
    return {"times": times, "cpu_times": cpu_times, "setup_times": setup_times,
            "statuses": dict(statuses), "exc_types": dict(exc_types)}


def _observe(items, n_variants: int, profile: bool = False) -> dict:
    """The whole in-process make_fx observation, as a worker runs it (job parsing, trace with
    decision recording, runtime asserts, guards, artifact run with binding, reference run,
    and the replays of `n_variants` variants); building the Job (variants_json) is timed too."""
    import shapefuzz.systems.make_fx  # noqa: F401
    from shapefuzz.campaign.evaluate import variants_json
    from shapefuzz.program import Program
    from shapefuzz.systems.jobs import Job, run_job

    prof = _CHILD.setdefault("prof", cProfile.Profile()) if profile else None
    times, cpu_times, statuses, n_replays = [], [], Counter(), 0
    for pj, timed in items:
        p = Program.from_json(json.loads(pj))
        if prof is not None and timed:
            prof.enable()
        c0, t0 = time.process_time(), time.perf_counter()
        obs = run_job(Job(pj, "make_fx", "default", variants_json(p, n_variants, 0)))
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        if prof is not None and timed:
            prof.disable()
        if timed:
            times.append(dt)
            cpu_times.append(dc)
            statuses[obs.outcome.status] += 1
            n_replays += len(obs.replays)
    return {"times": times, "cpu_times": cpu_times, "statuses": dict(statuses), "replays": n_replays}


# ---- rows (parent process) ------------------------------------------------------------------

def merge(acc: dict, part: dict) -> None:
    for k, v in part.items():
        if isinstance(v, list):
            acc.setdefault(k, []).extend(v)
        elif isinstance(v, dict):
            d = acc.setdefault(k, {})
            for kk, vv in v.items():
                d[kk] = d.get(kk, 0) + vv
        else:
            acc[k] = acc.get(k, 0) + v


class ChildRow:
    """A measurement in its own spawned interpreter, kept alive and fed chunk by chunk."""

    def __init__(self, name: str, stage: str, pjs: list[str], **opts):
        self.name, self.stage, self.pjs, self.opts = name, stage, pjs, opts
        self.ex = ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn"))
        self.result: dict = {"times": []}

    def feed(self, idxs, timed: bool) -> None:
        items = [(self.pjs[i], timed) for i in idxs]
        merge(self.result, self.ex.submit(child_run, self.stage, items, self.opts).result())

    def call(self, fn):
        return self.ex.submit(fn).result()

    def finish(self) -> dict:
        self.ex.shutdown(wait=True)
        if "cpu_times" in self.result:
            self.result["cpu"] = sum(self.result["cpu_times"])
        return self.result


def _proc_cpu(pid: int) -> float | None:
    """User+system CPU seconds of a process (Linux /proc), or None if unavailable."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class PipelineRow:
    """evaluate() per program, as the campaign calls it: jobs_for, the jobs through the pool
    (pickling, pipes, the workers' run_job), then every oracle in this process. CPU time is
    this process's plus the workers' (from /proc, around each chunk)."""

    def __init__(self, name: str, progs: list, n_workers: int, targets, only=None):
        self.name, self.progs, self.n_workers, self.targets = name, progs, n_workers, targets
        self.only = only  # program indices this row runs (None: all)
        self.pool = None
        self.result: dict = {"times": [], "statuses": {}, "findings": 0, "cpu": 0.0}
        self.t_start = 0.0

    def _cpu(self):
        pids = tuple(w.proc.pid for w in self.pool.workers)
        cpus = [_proc_cpu(pid) for pid in pids]
        return pids, (None if None in cpus else sum(cpus)), time.process_time()

    def feed(self, idxs, timed: bool) -> None:
        from shapefuzz.campaign.evaluate import evaluate
        from shapefuzz.campaign.workers import WorkerPool

        if self.pool is None:
            self.t_start = time.perf_counter()
            self.pool = WorkerPool(self.n_workers)
        idxs = [i for i in idxs if self.only is None or i in self.only]
        if not idxs:
            return
        r = self.result
        pids0, w0, m0 = self._cpu()
        statuses = Counter()
        for i in idxs:
            t0 = time.perf_counter()
            ev = evaluate(self.progs[i], self.targets, self.pool.run_many, n_variants=0)
            dt = time.perf_counter() - t0
            if timed:
                r["times"].append(dt)
                statuses.update(f"{o.system}:{o.outcome.status}" for o in ev.observations)
                r["findings"] += len(ev.findings)
        pids1, w1, m1 = self._cpu()
        if timed:
            merge(r, {"statuses": dict(statuses)})
            if r["cpu"] is not None and w0 is not None and w1 is not None and pids0 == pids1:
                r["cpu"] += (w1 - w0) + (m1 - m0)
            else:
                r["cpu"] = None  # a worker was replaced: its CPU time is gone with it
        else:
            r["warm_wall"] = time.perf_counter() - self.t_start

    def finish(self) -> dict:
        if self.pool is not None:
            self.result["restarts"] = self.pool.restarts
            self.pool.close()
        return self.result


# ---- report ------------------------------------------------------------------------------------

def fmt_counts(counts: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"


def report(rows: list[tuple[str, dict]], raw: dict, meta: dict) -> str:
    def same(r: dict, key: str) -> float:  # raw trace figures over the same programs as row r
        return sum(raw[key][j] for j in r.get("subset", range(len(r["times"]))))

    def raw_total(r: dict) -> float:
        return same(r, "times")

    def raw_cpu(r: dict) -> float:
        return same(r, "cpu_times")

    busy = meta["load0"] > 0.5 or meta["load1"] > 2.5
    lines = [
        "# shapefuzz benchmark results",
        "",
        f"- date: {meta['date']}; machine: {meta['machine']}",
        f"- python {meta['python']}, torch {meta['torch']}, hypothesis {meta['hypothesis']}",
        (f"- programs generated: {meta['n']} (hypothesis seed 0, derandomized), "
         f"first {WARMUP} untimed (warmup), {meta['n'] - WARMUP} timed; "
         f"program-set fingerprint `{meta['fingerprint']}`"),
        (f"- rows measured interleaved, {CHUNK} programs per row per turn, each row in its own "
         f"process(es), PYTHONHASHSEED={meta['hash_seed']}; generation took {meta['gen_s']:.1f} s (not in any row); "
         f"whole run {meta['run_s']:.0f} s"),
        (f"- load average (1 min) at start {meta['load0']:.2f}, at end {meta['load1']:.2f} "
         f"on {os.cpu_count()} cores"
         + (" -- **the machine was busy: absolute times are inflated; ratios are steadier "
            "(rows are interleaved)**" if busy else "")),
        "",
        "| measurement | programs | total s | programs/s | ratio vs raw make_fx trace |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, r in rows:
        total = sum(r["times"])
        n = len(r["times"])
        rate = n / total if total else float("inf")
        lines.append(f"| {name} | {n} | {total:.2f} | {rate:.1f} | {total / raw_total(r):.2f}x |")
    lines += ["", "Each ratio compares with the raw make_fx trace over the same programs."]

    by = dict(rows)
    pipe, obs0, eager = by[ROW_PIPE1], by[ROW_OBS0], by[ROW_EAGER]
    t_raw, t_obs0, t_eager, t_pipe = (sum(x["times"]) for x in (raw, obs0, eager, pipe))
    overhead = t_pipe / t_raw
    rate = len(pipe["times"]) / t_pipe

    def verdict(ok: bool) -> str:
        return "PASS" if ok else "FAIL"

    lines += [
        "",
        "## Key figures",
        "",
        (f"- **fuzzer overhead over raw trace time** = pipeline (make_fx, n_variants=0, 1 worker) / "
         f"raw make_fx trace = {t_pipe:.2f} s / {t_raw:.2f} s = **{overhead:.2f}x** "
         f"(DESIGN budget <= {BUDGET_OVERHEAD}x: {verdict(overhead <= BUDGET_OVERHEAD)})"),
    ]
    c_raw, c_pipe = raw_cpu(pipe), pipe.get("cpu")
    if c_raw and c_pipe is not None:
        lines.append(f"  - the same in CPU time (pipeline: main process + worker): {c_pipe:.2f} s / "
                     f"{c_raw:.2f} s = **{c_pipe / c_raw:.2f}x**")
    t_setup = sum(raw["setup_times"])
    lines.append(f"  - against the make_fx(...)(*fakes) call alone, i.e. without building the symbolic "
                 f"inputs (ShapeEnv, FakeTensorMode, fakeify: {t_setup:.2f} s, part of the raw row): "
                 f"{t_pipe:.2f} s / {t_raw - t_setup:.2f} s = {t_pipe / (t_raw - t_setup):.2f}x")
    lines += [
        (f"- **make_fx programs/s** through the pipeline (1 worker, n_variants=0) = **{rate:.1f}/s** "
         f"(DESIGN budget >= {BUDGET_RATE:g}/s: {verdict(rate >= BUDGET_RATE)})"),
        ("- where the pipeline's wall time goes, as multiples of raw trace time "
        "(differences between rows):"),
        "  - raw make_fx trace: 1.00x",
        (f"  - rest of the in-process make_fx observation (decision recording, "
         f"runtime asserts + recompile, guards, artifact run, reference run, job parsing): "
         f"{(t_obs0 - t_raw) / t_raw:+.2f}x"),
        f"  - eager job: {t_eager / t_raw:+.2f}x",
        (f"  - the rest (pool IPC/pickling, process switches, jobs_for, oracles): "
         f"{(t_pipe - t_obs0 - t_eager) / t_raw:+.2f}x"),
        "",
        "## Per-row detail",
        "",
        "| measurement | CPU s | CPU ratio vs raw | median ms/program | p95 ms | max ms | outcomes | notes |",
        "|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for name, r in rows:
        ts = sorted(r["times"])
        p95 = ts[min(len(ts) - 1, round(0.95 * (len(ts) - 1)))]
        c = r.get("cpu")
        cpu_s = "n/a" if c is None else f"{c:.2f}"
        cpu_ratio = "n/a" if c is None or not raw_cpu(r) else f"{c / raw_cpu(r):.2f}x"
        notes = []
        if "setup_times" in r:
            notes.append(f"of which fake-input setup {sum(r['setup_times']):.2f} s")
        if r.get("exc_types"):
            notes.append("exceptions: " + fmt_counts(r["exc_types"]))
        if "replays" in r:
            notes.append(f"replays {r['replays']}")
        if "findings" in r:
            notes.append(f"findings {r['findings']}, worker restarts {r['restarts']}, "
                         f"worker startup + warmup {r.get('warm_wall', 0):.1f} s")
        lines.append(f"| {name} | {cpu_s} | {cpu_ratio} | {1000 * statistics.median(ts):.1f} | "
                     f"{1000 * p95:.1f} | {1000 * ts[-1]:.1f} | {fmt_counts(r['statuses'])} | "
                     f"{'; '.join(notes)} |")
    return "\n".join(lines) + "\n"


# ---- main ----------------------------------------------------------------------------------------

def main(argv=None) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=int, default=120, help="programs to generate (default 120)")
    ap.add_argument("--out", default=os.path.join(here, "results.md"),
                    help="markdown report (default benchmarks/results.md)")
    ap.add_argument("--export-programs", type=int, default=60, metavar="K",
                    help="the make_fx+export context row runs on K programs only: the warmup ones, "
                         "then K-5 timed ones spread evenly over the set (export is slow; keeps a "
                         "default run under ~4 min); 0 skips the row, -1 runs all (default 60)")
    ap.add_argument("--profile", nargs="?", const=os.path.join(here, "profile.txt"), default=None,
                    metavar="FILE",
                    help="instead of the benchmark, cProfile the in-process make_fx observation "
                         "(0 variants) and write the top functions to FILE "
                         "(default benchmarks/profile.txt)")
    args = ap.parse_args(argv)
    if args.programs <= WARMUP:
        ap.error(f"--programs must be > {WARMUP} (the first {WARMUP} are warmup)")
    warnings.filterwarnings("ignore")
    # Every measuring process (spawned children, pool workers) inherits this. A fixed hash seed
    # fixes set/dict iteration order, hence sympy's and ShapeEnv's: with random seeds the same
    # code in two processes differed by up to ~10%, which swamped the differences measured.
    hash_seed = os.environ.setdefault("PYTHONHASHSEED", "0")

    t_run = time.perf_counter()
    load0 = os.getloadavg()[0]
    print(f"generating {args.programs} programs ...", flush=True)
    t0 = time.perf_counter()
    progs = generate(args.programs)
    gen_s = time.perf_counter() - t0
    pjs = [p.dumps() for p in progs]
    fingerprint = hashlib.sha256("\n".join(pjs).encode()).hexdigest()[:12]
    print(f"  {len(progs)} programs in {gen_s:.1f} s, fingerprint {fingerprint}", flush=True)
    n_timed = len(progs) - WARMUP
    if n_timed <= 0:
        raise SystemExit(f"hypothesis produced only {len(progs)} programs")
    warm = range(WARMUP)
    chunks = [range(WARMUP + k, min(len(progs), WARMUP + k + CHUNK)) for k in range(0, n_timed, CHUNK)]

    if args.profile:
        row = ChildRow("profile", "observe", pjs, n_variants=0, profile=True)
        row.feed(warm, False)
        row.feed(range(WARMUP, len(progs)), True)
        text = row.call(child_profile_text)
        r = row.finish()
        with open(args.profile, "w") as f:
            f.write(text)
        print(text[:6000])
        print(f"profile of {len(r['times'])} observations ({sum(r['times']):.2f} s, profiled) "
              f"written to {args.profile}")
        return 0

    # The export row may run on a subset: the warmup programs, then timed programs spread
    # evenly over the whole set (later programs are heavier: Hypothesis's target phase steers
    # towards more data-dependent values, so a prefix would flatter export).
    m = n_timed if args.export_programs < 0 else max(0, min(args.export_programs - WARMUP, n_timed))
    subset = [i * n_timed // m for i in range(m)] if m else []
    row_pipe2 = ROW_PIPE2 + ("" if m == n_timed else f" -- {m} of the {n_timed} programs, evenly spread")

    rows = [
        ChildRow(ROW_EAGER, "eager", pjs),
        ChildRow(ROW_RAW, "raw", pjs),
        ChildRow(ROW_OBS0, "observe", pjs, n_variants=0),
        ChildRow(ROW_OBS6, "observe", pjs, n_variants=6),
        PipelineRow(ROW_PIPE1, progs, 1, MAKE_FX),
    ]
    if m:
        rows.append(PipelineRow(row_pipe2, progs, 2, MAKE_FX_EXPORT,
                                only=set(warm) | {WARMUP + j for j in subset}))
    try:
        print("warmup (starting processes) ...", flush=True)
        for row in rows:
            row.feed(warm, False)
        print(f"  done at {time.perf_counter() - t_run:.0f} s; timed chunks:", end=" ", flush=True)
        for c, chunk in enumerate(chunks):
            for row in rows[c % len(rows):] + rows[:c % len(rows)]:
                row.feed(chunk, True)
            print(f"{c + 1}/{len(chunks)} ({time.perf_counter() - t_run:.0f} s)", end=" ", flush=True)
        print(flush=True)
    finally:
        results = [(row.name, row.finish()) for row in rows]
    if m and m != n_timed:
        results[-1][1]["subset"] = subset

    import hypothesis
    import torch

    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, torch threads "
                   f"{torch.get_num_threads()}",
        "python": platform.python_version(), "torch": torch.__version__,
        "hypothesis": hypothesis.__version__, "n": len(progs), "fingerprint": fingerprint,
        "gen_s": gen_s, "run_s": time.perf_counter() - t_run,
        "load0": load0, "load1": os.getloadavg()[0], "hash_seed": hash_seed,
    }
    text = report(results, dict(results)[ROW_RAW], meta)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    print()
    print(text)
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
