"""compile system throughput, side by side with make_fx and export on the same programs.

    python benchmarks/compile_bench.py [--programs N] [--rows compile:default,compile:inductor]
        [--guard-latency-profile]

Programs are generated once (derandomized Hypothesis). Each row runs every program in this one
process, rows interleaved per program (so a change in the shared machine's load lands on all
rows alike); the first WARMUP programs are untimed. The compile rows run the whole call sequence
(10 calls: traced inputs, new data, new sizes, 0/1, traced inputs again), so their cost per
program is the cost of 1-4 compiles plus 10 guarded calls. --guard-latency-profile adds each
compile row again with Dynamo's guard latency profile left in, which campaigns skip (Note [no
guard latency profile] in shapefuzz/systems/compile.py); each program is then first observed
once untimed, so that both twins meet Inductor's disk caches warm."""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
import warnings

WARMUP = 3
ROWS = (("make_fx", "default"), ("export", "default"), ("compile", "default"),
        ("compile", "dynamic=True"), ("compile", "aot_eager"))


def generate(n: int):
    from hypothesis import HealthCheck, given, settings

    from shapefuzz.strategies import programs

    out = []

    @settings(max_examples=n, database=None, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def collect(p):
        out.append(p)

    collect()
    return out[:n]


#: the label of a row run with Dynamo's guard latency profile left in
PROFILED = " (guard latency profile left in)"


def observe(system, config: str, program, vs, profiled: bool):
    """The system's observation; `profiled`: with the guard latency profile a campaign skips."""
    import shapefuzz.systems.compile as compile_system

    skip = compile_system._no_guard_latency_profile
    if profiled:
        compile_system._no_guard_latency_profile = contextlib.nullcontext
    try:
        return system.observe(program, config, vs)
    finally:
        compile_system._no_guard_latency_profile = skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=40)
    ap.add_argument("--rows", default=",".join(f"{s}:{c}" for s, c in ROWS),
                    help="system:config rows, comma-separated")
    ap.add_argument("--guard-latency-profile", action="store_true",
                    help="each compile row again with Dynamo's guard latency profile left in")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    from shapefuzz.program.variants import variants
    from shapefuzz.systems import get_system

    pairs = [tuple(r.split(":", 1)) for r in args.rows.split(",")]
    rows = [(s, c, False) for s, c in pairs]
    rows += [(s, c, True) for s, c in pairs if s == "compile" and args.guard_latency_profile]
    progs = generate(args.programs + WARMUP)
    times = {r: [] for r in rows}
    for k, p in enumerate(progs):
        vs = variants(p, 6, 0)
        if args.guard_latency_profile:  # both twins warm: Inductor's disk caches serve a second compile
            for sysname, cfg in pairs:
                observe(get_system(sysname), cfg, p, vs, False)
        for sysname, cfg, profiled in rows:
            t = time.perf_counter()
            observe(get_system(sysname), cfg, p, vs, profiled)
            if k >= WARMUP:
                times[(sysname, cfg, profiled)].append(time.perf_counter() - t)
    load = os.getloadavg()[0]
    print(f"{args.programs} programs, load average {load:.1f} on {os.cpu_count()} cores (shared machine)")
    base = sum(times[rows[0]])
    print(f"| system:config | programs/s | median s | total vs {rows[0][0]}:{rows[0][1]} |\n|---|---:|---:|---:|")
    for (sysname, cfg, profiled), ts in times.items():
        label = f"{sysname}:{cfg}" + (PROFILED if profiled else "")
        print(f"| {label} | {len(ts) / sum(ts):.2f} | {statistics.median(ts):.3f} | {sum(ts) / base:.2f}x |")


if __name__ == "__main__":
    main()
