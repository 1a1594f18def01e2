"""shapefuzz throughput benchmark: raw make_fx tracing vs. shapefuzz's make_fx observation vs.
the full fuzzer pipeline, side by side on one fixed, deterministic set of generated programs.

    python benchmarks/bench.py [--programs N] [--out benchmarks/results.md] [--profile]

See benchmarks/README.md for what each row means. Library code is only *called* from here.

Method (so the rows are comparable):
  * Programs are generated once, deterministically (Hypothesis, derandomized, database=None),
    and passed to every measurement as JSON. A fingerprint of the set is printed.
  * The first WARMUP programs of every measurement are run untimed; all rows time the same
    remaining programs.
  * Every in-process measurement runs in its own freshly spawned interpreter, so none of them
    inherits torch / sympy / FakeTensor dispatch caches warmed by another measurement (a
    program traced a second time in the same process is markedly cheaper). The pipeline rows
    use fresh WorkerPool workers, which are likewise cold. Measurements run one after another,
    never concurrently, so they do not compete for the machine's cores.
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
MAKE_FX = (("make_fx", "default"),)
MAKE_FX_EXPORT = (("make_fx", "default"), ("export", "default"))
BUDGET_OVERHEAD = 1.25  # DESIGN: pipeline time / raw trace time
BUDGET_RATE = 8.0  # DESIGN: make_fx programs/s


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


# ---- measurements (each run in a fresh spawned interpreter) ----------------------------------

def _child_setup() -> None:
    warnings.filterwarnings("ignore")  # as shapefuzz workers do


def _result(times: list[float], kinds: Counter, **extra) -> dict:
    return {"times": times, "kinds": dict(kinds), **extra}


def measure_eager(pjs: list[str]) -> dict:
    _child_setup()
    import shapefuzz.systems.eager  # noqa: F401
    from shapefuzz.workers import Job, run_job

    times, cpu, kinds = [], 0.0, Counter()
    for i, pj in enumerate(pjs):
        c0, t0 = time.process_time(), time.perf_counter()
        obs = run_job(Job(pj, "eager", "default", "[]"))
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        if i >= WARMUP:
            times.append(dt)
            cpu += dc
            kinds[obs.outcome.kind] += 1
    return _result(times, kinds, cpu=cpu)


def measure_raw_trace(pjs: list[str]) -> dict:
    """Only the make_fx(...)(*fakes) call is timed; the fake inputs are built exactly as
    MakeFxSystem._trace builds them (ShapeEnv, FakeTensorMode, fakeify, cleared pending
    unbacked symbols), untimed. No guards/asserts pass, no replay, no reference run."""
    _child_setup()
    import torch  # noqa: F401
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    from shapefuzz import interp
    from shapefuzz.program import Program
    from shapefuzz.systems.make_fx import fakeify

    times, cpu_times, setup_times, kinds, exc_types = [], [], [], Counter(), Counter()
    for i, pj in enumerate(pjs):
        p = Program.from_json(json.loads(pj))
        s0 = time.perf_counter()
        se = ShapeEnv()
        mode = FakeTensorMode(shape_env=se)
        real = interp.make_inputs(p.inputs)
        fakes = [fakeify(mode, t, s.dims, s.name) for t, s in zip(real, p.inputs)]
        se.pending_fresh_unbacked_symbols.clear()
        fn = interp.program_fn(p)
        c0, t0 = time.process_time(), time.perf_counter()
        try:
            make_fx(fn, tracing_mode="symbolic")(*fakes)
            kind = "ok"
        except Exception as e:  # noqa: BLE001  (counted, like a system's failed observation)
            kind = "exception"
            exc = type(e).__name__
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        if i >= WARMUP:
            times.append(dt)
            cpu_times.append(dc)
            setup_times.append(t0 - s0)
            kinds[kind] += 1
            if kind != "ok":
                exc_types[exc] += 1
    return _result(times, kinds, cpu=sum(cpu_times), cpu_times=cpu_times, setup_times=setup_times,
                   exc_types=dict(exc_types))


def measure_observe(pjs: list[str], n_variants: int, profile: bool = False) -> dict:
    """The whole in-process make_fx observation, as a worker runs it (job parsing, trace with
    decision recording, runtime asserts, guards, artifact run with binding, reference run,
    and the replays of `n_variants` variants); building the Job (variants_json) is timed too."""
    _child_setup()
    import shapefuzz.systems.make_fx  # noqa: F401
    from shapefuzz.evaluate import variants_json
    from shapefuzz.program import Program
    from shapefuzz.workers import Job, run_job

    prof = cProfile.Profile() if profile else None
    times, cpu, kinds, n_replays = [], 0.0, Counter(), 0
    for i, pj in enumerate(pjs):
        p = Program.from_json(json.loads(pj))
        timed = i >= WARMUP
        if prof is not None and timed:
            prof.enable()
        c0, t0 = time.process_time(), time.perf_counter()
        obs = run_job(Job(pj, "make_fx", "default", variants_json(p, n_variants, 0)))
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        if prof is not None and timed:
            prof.disable()
        if timed:
            times.append(dt)
            cpu += dc
            kinds[obs.outcome.kind] += 1
            n_replays += len(obs.replays)
    extra = {"replays": n_replays, "cpu": cpu}
    if prof is not None:
        buf = io.StringIO()
        st = pstats.Stats(prof, stream=buf)
        st.sort_stats("cumulative").print_stats(45)
        st.sort_stats("tottime").print_stats(30)
        extra["profile"] = buf.getvalue()
    return _result(times, kinds, **extra)


def in_fresh_process(fn, *args) -> dict:
    with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as ex:
        return ex.submit(fn, *args).result()


# ---- the pipeline (parent process, through WorkerPool) ---------------------------------------

def _proc_cpu(pid: int) -> float | None:
    """User+system CPU seconds of a process (Linux /proc), or None if unavailable."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _pool_cpu(pool) -> tuple[tuple[int, ...], float | None]:
    pids = tuple(w.proc.pid for w in pool.workers)
    cpus = [_proc_cpu(pid) for pid in pids]
    return pids, None if None in cpus else sum(cpus)


def measure_pipeline(progs: list, n_workers: int, targets, n_variants: int) -> dict:
    """evaluate() per program, as the campaign calls it: jobs_for, the jobs through the pool
    (pickling, pipes, the workers' run_job), then every oracle in this process. CPU time is
    this process's plus the workers' (read from /proc after warmup and at the end)."""
    from shapefuzz.evaluate import evaluate
    from shapefuzz.workers import WorkerPool

    times, kinds, n_findings = [], Counter(), 0
    t_start = time.perf_counter()
    with WorkerPool(n_workers) as pool:
        pids0, wcpu0, mcpu0 = None, None, 0.0
        for i, p in enumerate(progs):
            if i == WARMUP:
                (pids0, wcpu0), mcpu0 = _pool_cpu(pool), time.process_time()
            t0 = time.perf_counter()
            ev = evaluate(p, targets, pool.run_many, n_variants=n_variants)
            dt = time.perf_counter() - t0
            if i >= WARMUP:
                times.append(dt)
                for o in ev.observations:
                    kinds[f"{o.system}:{o.outcome.kind}"] += 1
                n_findings += len(ev.findings)
        pids1, wcpu1 = _pool_cpu(pool)
        cpu = None  # unknown if a worker was replaced (its CPU time is gone with it)
        if wcpu0 is not None and wcpu1 is not None and pids0 == pids1:
            cpu = (wcpu1 - wcpu0) + (time.process_time() - mcpu0)
        restarts = pool.restarts
    return _result(times, kinds, cpu=cpu, findings=n_findings, restarts=restarts,
                   wall=time.perf_counter() - t_start)


# ---- report ------------------------------------------------------------------------------------

def fmt_kinds(kinds: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "-"


def _cpu(r: dict) -> float | None:
    return r.get("cpu")


def report(rows: list[tuple[str, dict]], raw: dict, meta: dict) -> str:
    def same(r: dict, key: str) -> float:  # raw trace figures over the same programs as row r
        return sum(raw[key][j] for j in r.get("subset", range(len(r["times"]))))

    def raw_total(r: dict) -> float:
        return same(r, "times")

    def raw_cpu(r: dict) -> float:
        return same(r, "cpu_times")

    lines = [
        "# shapefuzz benchmark results",
        "",
        f"- date: {meta['date']}; machine: {meta['machine']}",
        f"- python {meta['python']}, torch {meta['torch']}, hypothesis {meta['hypothesis']}",
        (f"- programs generated: {meta['n']} (hypothesis seed 0, derandomized), "
        f"first {WARMUP} untimed (warmup), {meta['n'] - WARMUP} timed; "
        f"program-set fingerprint `{meta['fingerprint']}`"),
        f"- generation took {meta['gen_s']:.1f} s (not in any row); whole run {meta['run_s']:.0f} s",
        f"- load average (1 min) at start {meta['load0']:.2f}, at end {meta['load1']:.2f} "
        f"on {os.cpu_count()} cores" + (
            " -- **the machine was busy: wall-clock rows are inflated and noisy; the CPU-time "
            "figures below are the steadier ones**" if meta["load0"] > 0.5 or meta["load1"] > 2.5
            else ""),
        "",
        "| measurement | programs | total s | programs/s | ratio vs raw make_fx trace |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, r in rows:
        total = sum(r["times"])
        n = len(r["times"])
        rate = n / total if total else float("inf")
        lines.append(f"| {name} | {n} | {total:.2f} | {rate:.1f} | {total / raw_total(r):.2f}x |")

    lines.append("")
    lines.append("Each ratio compares with the raw make_fx trace over the same programs.")

    by = dict(rows)
    pipe, obs0, eager = by[ROW_PIPE1], by[ROW_OBS0], by[ROW_EAGER]
    t_raw, t_obs0, t_eager, t_pipe = (sum(x["times"]) for x in (raw, obs0, eager, pipe))
    overhead = t_pipe / t_raw
    rate = len(pipe["times"]) / t_pipe
    verdict = lambda ok: "PASS" if ok else "FAIL"
    lines += [
        "",
        "## Key figures",
        "",
        (f"- **fuzzer overhead over raw trace time** = pipeline (make_fx, n_variants=0, 1 worker) / "
        f"raw make_fx trace = {t_pipe:.2f} s / {t_raw:.2f} s = **{overhead:.2f}x** "
        f"(DESIGN budget <= {BUDGET_OVERHEAD}x: {verdict(overhead <= BUDGET_OVERHEAD)})"),
    ]
    c_raw, c_pipe = raw_cpu(pipe), _cpu(pipe)
    if c_raw and c_pipe is not None:
        lines.append(f"  - the same in CPU time (pipeline: main process + worker): {c_pipe:.2f} s / "
                     f"{c_raw:.2f} s = **{c_pipe / c_raw:.2f}x**")
    lines += [
        (f"- **make_fx programs/s** through the pipeline (1 worker, n_variants=0) = **{rate:.1f}/s** "
        f"(DESIGN budget >= {BUDGET_RATE:g}/s: {verdict(rate >= BUDGET_RATE)})"),
        ("- where the pipeline's wall time goes, as multiples of raw trace time "
        "(differences between separate runs, so noisy on a busy machine):"),
        "  - raw make_fx trace: 1.00x",
        (f"  - rest of the in-process make_fx observation (fake-input setup, decision recording, "
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
        c = _cpu(r)
        cpu_s = "n/a" if c is None else f"{c:.2f}"
        cpu_ratio = "n/a" if c is None or not raw_cpu(r) else f"{c / raw_cpu(r):.2f}x"
        notes = []
        if "setup_times" in r:
            notes.append(f"fake-input setup (untimed) {sum(r['setup_times']):.2f} s")
        if r.get("exc_types"):
            notes.append("exceptions: " + fmt_kinds(r["exc_types"]))
        if "replays" in r:
            notes.append(f"replays {r['replays']}")
        if "findings" in r:
            notes.append(f"findings {r['findings']}, worker restarts {r['restarts']}, "
                         f"wall incl. worker startup + warmup {r['wall']:.1f} s")
        lines.append(f"| {name} | {cpu_s} | {cpu_ratio} | {1000 * statistics.median(ts):.1f} | "
                     f"{1000 * p95:.1f} | {1000 * ts[-1]:.1f} | {fmt_kinds(r['kinds'])} | "
                     f"{'; '.join(notes)} |")
    return "\n".join(lines) + "\n"


ROW_EAGER = "eager: run_job(eager), in-process"
ROW_RAW = "make_fx raw trace (make_fx(program_fn)(*fakes) only)"
ROW_OBS0 = "make_fx observation, in-process, 0 variants"
ROW_OBS6 = "make_fx observation, in-process, 6 variants (default)"
ROW_PIPE1 = "pipeline: evaluate(make_fx), WorkerPool(1), n_variants=0"
ROW_PIPE2 = "pipeline: evaluate(make_fx + export), WorkerPool(2), n_variants=0"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=int, default=120, help="programs to generate (default 120)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "results.md"))
    ap.add_argument("--export-programs", type=int, default=60, metavar="K",
                    help="the make_fx+export context row runs on K programs only: the warmup ones, "
                         "then K-5 timed ones spread evenly over the set (export is slow; keeps a "
                         "default run under ~4 min); 0 skips the row, -1 runs all (default 60)")
    ap.add_argument("--profile", nargs="?", const=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "profile.txt"), default=None, metavar="FILE",
        help="instead of the benchmark, cProfile the in-process make_fx observation "
             "(0 variants) and write the top functions to FILE (default benchmarks/profile.txt)")
    args = ap.parse_args(argv)
    if args.programs <= WARMUP:
        ap.error(f"--programs must be > {WARMUP} (the first {WARMUP} are warmup)")
    warnings.filterwarnings("ignore")

    t_run = time.perf_counter()
    load0 = os.getloadavg()[0]
    print(f"generating {args.programs} programs ...", flush=True)
    t0 = time.perf_counter()
    progs = generate(args.programs)
    gen_s = time.perf_counter() - t0
    pjs = [p.dumps() for p in progs]
    fingerprint = hashlib.sha256("\n".join(pjs).encode()).hexdigest()[:12]
    print(f"  {len(progs)} programs in {gen_s:.1f} s, fingerprint {fingerprint}", flush=True)
    if len(progs) <= WARMUP:
        raise SystemExit(f"hypothesis produced only {len(progs)} programs")

    if args.profile:
        r = in_fresh_process(measure_observe, pjs, 0, True)
        with open(args.profile, "w") as f:
            f.write(r["profile"])
        print(r["profile"][:6000])
        print(f"profile of {len(r['times'])} observations ({sum(r['times']):.2f} s, profiled) "
              f"written to {args.profile}")
        return 0

    rows: list[tuple[str, dict]] = []

    def step(name, fn, *a):
        print(f"{name} ...", end=" ", flush=True)
        t = time.perf_counter()
        r = fn(*a)
        print(f"{sum(r['times']):.2f} s timed ({time.perf_counter() - t:.1f} s wall)", flush=True)
        rows.append((name, r))
        return r

    # The key ratio is pipeline / raw trace: those two run back to back, so that a change in
    # the machine's load during the run skews them as little as possible.
    step(ROW_EAGER, in_fresh_process, measure_eager, pjs)
    step(ROW_OBS0, in_fresh_process, measure_observe, pjs, 0)
    step(ROW_OBS6, in_fresh_process, measure_observe, pjs, 6)
    raw = step(ROW_RAW, in_fresh_process, measure_raw_trace, pjs)
    step(ROW_PIPE1, measure_pipeline, progs, 1, MAKE_FX, 0)
    # The export row may run on a subset: the same warmup programs, then timed programs spread
    # evenly over the whole set (later programs are heavier: Hypothesis's target phase steers
    # towards more data-dependent values, so a prefix would flatter export).
    n_timed = len(progs) - WARMUP
    m = n_timed if args.export_programs < 0 else max(0, min(args.export_programs - WARMUP, n_timed))
    subset = [i * n_timed // m for i in range(m)] if m else []
    row_pipe2 = ROW_PIPE2 + ("" if m == n_timed else f" -- {m} of the {n_timed} programs, evenly spread")
    if m:
        r = step(row_pipe2, measure_pipeline, progs[:WARMUP] + [progs[WARMUP + j] for j in subset],
                 2, MAKE_FX_EXPORT, 0)
        if m != n_timed:
            r["subset"] = subset
    order = (ROW_EAGER, ROW_RAW, ROW_OBS0, ROW_OBS6, ROW_PIPE1, row_pipe2)
    rows.sort(key=lambda row: order.index(row[0]))

    import hypothesis
    import torch

    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, torch threads "
                   f"{torch.get_num_threads()}",
        "python": platform.python_version(), "torch": torch.__version__,
        "hypothesis": hypothesis.__version__, "n": len(progs), "fingerprint": fingerprint,
        "gen_s": gen_s, "run_s": time.perf_counter() - t_run,
        "load0": load0, "load1": os.getloadavg()[0],
    }
    text = report(rows, raw, meta)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    print()
    print(text)
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
