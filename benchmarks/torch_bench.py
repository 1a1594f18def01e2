"""torch 2.13's own ShapeEnv on the unbacked-heavy workload of ref_bench.py, with its slow paths
restored one by one (docs/explanation/torch-internals.md; shapefuzz/systems/torch_toggles.py).

    python benchmarks/torch_bench.py [--chunks 32] [--layers 4] [--reps 5]

ref_bench.py calls `measure_torch` so that one command (`python benchmarks/ref_bench.py`) writes
the reference's tables and this one side by side. The question program is driven through torch's
ShapeEnv exactly as the torch-env system drives it (create_symbol / create_unbacked_symint, SymInt
arithmetic, torch._check, guard_or_false / guard_or_true / statically_known_true), inside
`torch_toggles.applied(config)`, which monkeypatches each optimization back to its pre-March-2026
code and counts that the slow code ran. Same method as ref_bench: cold sympy cache, collector
paused, CPU seconds, round-robin repetitions, minima and medians.

do_not_emit_stack_traces is read only by make_fx / export tracers (proxy_tensor.py), which this
direct workload does not use: its row measures nothing here and is reported as such.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time

from sympy.core.cache import clear_cache

__all__ = ["ABLATION", "CONFIGS", "measure_torch", "torch_tables"]

ALL_ON = "agfs=2+stack-traces-off"
CONFIGS = {
    "all slow (every slow path restored, agfs=0, stack traces on)": "all-slow",
    "torch 2.13 default (fast paths, agfs=0)": "default",
    "all on (fast paths, agfs=2, stack traces off)": ALL_ON,
}
ABLATION = {
    "agfs 2 -> 0": "stack-traces-off",
    "stack traces on": "agfs=2",
    **{f"slow:{name}": f"{ALL_ON}+slow:{name}"
       for name in ("expr-cache", "smart-sort", "relationals", "no-hint", "skip-static",
                    "add-from-args", "fast-eval-comparison")},
}


def timed_torch(program, config: str) -> tuple[float, dict]:
    import torch.fx.experimental._config as fxx
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    from shapefuzz.systems.torch_env import _Run
    from shapefuzz.systems.torch_toggles import applied

    clear_cache()
    gc.collect()
    gc.disable()
    try:
        with applied(config) as cfg:
            t0 = time.process_time()
            run = _Run(ShapeEnv(**cfg.env_kwargs), bool(fxx.backed_size_oblivious))
            outcome = run.execute(program)
            t = time.process_time() - t0
    finally:
        gc.enable()
    if outcome.status != "ok":
        raise RuntimeError(f"torch config {config}: the workload must run, got {outcome.short()}")
    return t, dict(cfg.counts)


def measure_torch(program, reps: int) -> dict[str, dict]:
    configs = {**CONFIGS, **ABLATION}
    names = list(configs)
    times: dict[str, list[float]] = {n: [] for n in names}
    counts: dict[str, dict] = {}
    timed_torch(program, ALL_ON)  # warm imports and first-call costs, untimed
    for r in range(reps):
        for name in names[r % len(names):] + names[: r % len(names)]:
            t, c = timed_torch(program, configs[name])
            times[name].append(t)
            counts[name] = c
    return {n: {"min": min(v), "median": statistics.median(v), "counts": counts[n]}
            for n, v in times.items()}


def torch_tables(m: dict[str, dict], table) -> list[str]:
    """Markdown sections: the main table and the per-toggle ablation (`table` formats rows)."""
    off = m[next(iter(CONFIGS))]
    on = m[next(n for n, c in CONFIGS.items() if c == ALL_ON)]
    main = table(["config", "trace s", "speedup vs all slow", "median s, speedup"],
                 [[n, f"{m[n]['min']:.3f}", f"{off['min'] / m[n]['min']:.2f}x",
                   f"{m[n]['median']:.3f}, {off['median'] / m[n]['median']:.2f}x"] for n in CONFIGS])
    gap = off["min"] - on["min"]
    rows = []
    for n in ABLATION:
        share = (m[n]["min"] - on["min"]) / gap if gap > 0 else 0.0
        ran = sum(m[n]["counts"].values())
        note = "no effect on direct ShapeEnv use" if n == "stack traces on" else (
            f"slow code ran {ran} times" if n.startswith("slow:") else "")
        rows.append([n, f"{m[n]['min']:.3f}", f"{m[n]['min'] / on['min']:.2f}x",
                     f"{100 * share:.0f}%", f"{m[n]['median']:.3f}", note])
    abl = table(["switched off (from all on)", "trace s", "slowdown vs all on", "share of the gap",
                 "median s", "check"], rows)
    return [main, "### torch: all on, one optimization switched off at a time", abl]


def main(argv=None) -> int:
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from ref_bench import _table, unbind_split_flip_cat

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=32)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    m = measure_torch(unbind_split_flip_cat(args.chunks, args.layers), args.reps)
    print("\n\n".join(torch_tables(m, _table)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
