"""compile system throughput, side by side with make_fx and export on the same programs.

    python benchmarks/compile_bench.py [--programs N]

Programs are generated once (derandomized Hypothesis). Each row runs every program in this one
process, rows interleaved per program (so a change in the shared machine's load lands on all
rows alike); the first WARMUP programs are untimed. The compile rows run the whole call sequence
(10 calls: traced inputs, new data, new sizes, 0/1, traced inputs again), so their cost per
program is the cost of 1-4 compiles plus 10 guarded calls."""

from __future__ import annotations

import argparse
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=40)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    from shapefuzz.program.variants import variants
    from shapefuzz.systems import get_system

    progs = generate(args.programs + WARMUP)
    times = {r: [] for r in ROWS}
    for k, p in enumerate(progs):
        vs = variants(p, 6, 0)
        for sysname, cfg in ROWS:
            t = time.perf_counter()
            get_system(sysname).observe(p, cfg, vs)
            if k >= WARMUP:
                times[(sysname, cfg)].append(time.perf_counter() - t)
    load = os.getloadavg()[0]
    print(f"{args.programs} programs, load average {load:.1f} on {os.cpu_count()} cores (shared machine)")
    base = sum(times[("make_fx", "default")])
    print("| system:config | programs/s | median s | total vs make_fx |\n|---|---:|---:|---:|")
    for r, ts in times.items():
        print(f"| {r[0]}:{r[1]} | {len(ts) / sum(ts):.2f} | {statistics.median(ts):.3f} | {sum(ts) / base:.2f}x |")


if __name__ == "__main__":
    main()
