"""z3 check latency over real queries (DESIGN.md budget: median <= 5 ms, p99 <= 200 ms).

Collects every query the z3 checks (shapefuzz.systems.claims) ask while observing generated
programs (tensor programs on make_fx, question programs on torch-env), then replays each query
alone, twice: `cold` (a fresh translation, as the first time a claim is seen) and `warm` (the
translations shared, as within one observation). Reports p50 / p90 / p99 / max, the share of
each verdict, and the machine load (other processes disturb absolute times).

    python benchmarks/z3_bench.py [--tensor N] [--questions N] [--seed S] [--out benchmarks/z3_results.md]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections import Counter


def collect(n_tensor: int, n_questions: int, seed: int) -> tuple[list, dict]:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed

    import shapefuzz.systems.claims as snd
    from shapefuzz.program.variants import variants
    from shapefuzz.strategies import programs_from, qprograms
    from shapefuzz.strategies.settings import GenSettings
    from shapefuzz.systems.make_fx import MakeFxSystem
    from shapefuzz.systems.prover import DEFAULT_SETTINGS
    from shapefuzz.systems.torch_env import TorchEnvSystem

    queries: list = []
    orig = snd.prove

    def recording(facts, claim, settings=DEFAULT_SETTINGS, compiled=None):
        queries.append((tuple(facts), claim))
        return orig(facts, claim, settings, compiled)

    snd.prove = recording
    stats = {"tensor_programs": 0, "question_programs": 0, "observe_s": 0.0, "smt_s": 0.0}
    cfg = settings(deadline=None, suppress_health_check=list(HealthCheck), database=None)

    def run(system, strategy, n, key, with_variants):
        @hseed(seed)
        @settings(cfg, max_examples=n)
        @given(strategy)
        def go(p):
            t0 = time.perf_counter()
            snd._CACHE.clear()  # every program pays for its own queries, as in a fresh worker
            obs = system.observe(p, "default", variants(p, 6) if with_variants else [])
            stats["observe_s"] += time.perf_counter() - t0
            stats["smt_s"] += sum(c.elapsed_ms for c in obs.smt) / 1000
            stats[key] += 1

        go()

    try:
        run(MakeFxSystem(), programs_from(GenSettings()), n_tensor, "tensor_programs", True)
        run(TorchEnvSystem(), qprograms(max_ops=16), n_questions, "question_programs", False)
    finally:
        snd.prove = orig
    return queries, stats


def replay(queries: list, warm: bool) -> tuple[list[float], Counter]:
    from shapefuzz.systems.prover import Compiled, prove

    shared = Compiled()
    times, verdicts = [], Counter()
    reasons = Counter()
    for facts, claim in queries:
        t0 = time.perf_counter()
        v = prove(list(facts), claim, compiled=shared if warm else Compiled())
        times.append((time.perf_counter() - t0) * 1000)
        verdicts[v.status] += 1
        if v.status in ("unknown", "timeout"):
            reasons[v.reason.split(" (in ")[0][:90]] += 1
    REASONS.update(reasons if not warm else {})
    return times, verdicts


REASONS: Counter = Counter()


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tensor", type=int, default=40)
    ap.add_argument("--questions", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "z3_results.md"))
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    load0 = os.getloadavg()
    queries, stats = collect(a.tensor, a.questions, a.seed)
    cold, verdicts = replay(queries, warm=False)
    warm, _ = replay(queries, warm=True)
    load1 = os.getloadavg()
    n = len(queries)
    rows = [("cold (fresh translation)", cold), ("warm (shared translations)", warm)]
    lines = [
        "# z3 check latency (`python benchmarks/z3_bench.py`)", "",
        f"{n} queries collected from {stats['tensor_programs']} generated tensor programs (make_fx, "
        f"6 replays each) and {stats['question_programs']} question programs (torch-env), seed {a.seed}; "
        f"each query replayed alone. Machine load average {load0[0]:.1f} before, {load1[0]:.1f} after "
        f"(2 cores, shared with other work: absolute times are inflated by the load).", "",
        "| replay | p50 ms | p90 ms | p99 ms | max ms |", "|---|---:|---:|---:|---:|"]
    for name, xs in rows:
        lines.append(f"| {name} | {pct(xs, .5):.2f} | {pct(xs, .9):.2f} | {pct(xs, .99):.2f} | {max(xs):.1f} |")
    share = {k: f"{100 * v / n:.1f}%" for k, v in sorted(verdicts.items())}
    lines += ["", f"Verdicts: {dict(sorted(verdicts.items()))} (share: {share}); "
              f"unknown + timeout: {100 * (verdicts['unknown'] + verdicts['timeout']) / max(n, 1):.2f}%"
              f" (reasons: {dict(REASONS) or 'none'}).", "",
              f"Share of observation time spent in z3 checks (in the campaign path, with the shared cache): "
              f"{100 * stats['smt_s'] / max(stats['observe_s'], 1e-9):.1f}% "
              f"({stats['smt_s']:.1f} s of {stats['observe_s']:.1f} s).", "",
              "Targets (DESIGN.md): p50 <= 5 ms, p99 <= 200 ms.", ""]
    text = "\n".join(lines)
    with open(a.out, "w") as fh:
        fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
