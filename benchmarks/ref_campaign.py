"""A ref campaign's throughput over all its configs, worker round trips against in-process ref
observations (Note [ref in process] in shapefuzz/campaign/workers.py), side by side in one run.

    python benchmarks/ref_campaign.py [--programs 150] [--seed 4] [--reps 2]
                                      [--profile] [--out benchmarks/ref_campaign_results.md]

Each variant is the campaign a user runs (`shapefuzz fuzz --system ref --config all --workers 1`
without shrinking's share: no finding is expected on unmodified ref): the engine, a
WorkerPool(1) (its start-up is outside the timed part), the same seed and number of programs.
Variants run round-robin `reps` times, each rep on new programs (seed + rep, so sympy's caches
do not make a rep's second variant look fast; the order alternates), so a loaded machine slows
both alike; the table sums the reps of each and shows the loop's own time split (generation, waiting for workers, oracles,
bookkeeping) and the jobs' (trace, z3, IPC). `--profile` adds a cProfile of one in-process run
(the 25 most expensive functions by cumulative time) to the report.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import platform
import pstats
import time

from shapefuzz.campaign.engine import Campaign, CampaignSettings
from shapefuzz.campaign.workers import WorkerPool
from shapefuzz.systems import CONFIGS

#: name -> (systems run in process, whether groups are shared with the worker: Note [shared groups])
VARIANTS = {"worker round trips": ((), False), "ref in process": (("ref",), False),
            "in process, shared with the worker (default)": (("ref",), True)}


def one(pool: WorkerPool, variant: tuple, programs: int, seed: int) -> dict:
    pool.local.systems, pool.share_with_worker = variant
    pool.times.per.clear()
    cfg = CampaignSettings(tuple(("ref", c) for c in CONFIGS["ref"]), budget_s=3600, seed=seed,
                           max_examples=programs, shrink_budget_s=5)
    t = time.perf_counter()
    camp = Campaign(cfg, pool).run()
    wall = time.perf_counter() - t
    return {"programs": camp.stats.programs, "wall_s": wall, "split": camp.time_split(),
            "findings": sorted(camp.bugs)}


def _row(name: str, r: dict) -> str:
    phases = r["split"]["phases_s"]
    total = sum(phases.values()) or 1.0
    share = ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in sorted(phases.items(), key=lambda kv: -kv[1])
                      if v / total >= 0.01)
    jobs = r["split"]["systems"].get("ref", {})
    ipc = jobs.get("ipc_s", 0.0)
    return (f"| {name} | {r['programs']} | {r['wall_s']:.1f} | {r['programs'] / r['wall_s']:.1f} | "
            f"{jobs.get('trace_s', 0.0):.1f} | {jobs.get('z3_s', 0.0):.1f} | {ipc:.1f} | {share} |")


def _total(runs: list[dict]) -> dict:
    """The runs of one variant summed (programs, wall time, the split's phases and jobs)."""
    phases: dict = {}
    jobs: dict = {}
    for r in runs:
        for k, v in r["split"]["phases_s"].items():
            phases[k] = phases.get(k, 0.0) + v
        for k, v in r["split"]["systems"].get("ref", {}).items():
            jobs[k] = jobs.get(k, 0.0) + v
    return {"programs": sum(r["programs"] for r in runs), "wall_s": sum(r["wall_s"] for r in runs),
            "split": {"phases_s": phases, "systems": {"ref": jobs}},
            "findings": sorted({f for r in runs for f in r["findings"]})}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=150)
    ap.add_argument("--seed", type=int, default=4)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--out", default="benchmarks/ref_campaign_results.md")
    a = ap.parse_args()
    best: dict[str, list] = {}
    with WorkerPool(1) as pool:
        pool.run_many([])  # nothing: the worker starts while the first variant warms up
        one(pool, VARIANTS["ref in process"], 5, a.seed)  # warm-up: imports, sympy's caches, the worker
        for rep in range(a.reps):  # new programs per rep (seed + rep): sympy's cache is cold
            for name in (list(VARIANTS) if rep % 2 == 0 else list(VARIANTS)[::-1]):
                r = one(pool, VARIANTS[name], a.programs, a.seed + rep)
                best.setdefault(name, []).append(r)
        prof = _profile(pool, a) if a.profile else ""
    base, fast, shared = (_total(best[n]) for n in VARIANTS)
    lines = [
        "# ref campaign throughput", "",
        f"`python benchmarks/ref_campaign.py --programs {a.programs} --seed {a.seed} --reps {a.reps}`", "",
        f"Python {platform.python_version()}, {platform.machine()}; {len(CONFIGS['ref'])} ref configs "
        f"(--config all), one worker; {a.reps} round-robin runs on seeds {a.seed}..{a.seed + a.reps - 1} "
        f"(each a fresh set of programs), summed. The machine was shared with "
        "other jobs: compare the rows with each other (same run), not with other tables.", "",
        "| variant | programs | wall s | programs/s | ref trace s | z3 s | IPC s | loop time split |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
        *(_row(n, _total(best[n])) for n in VARIANTS), "",
        f"Speed-up of in-process ref observations: {base['wall_s'] / fast['wall_s']:.2f}x; with groups shared "
        f"with the worker: {base['wall_s'] / shared['wall_s']:.2f}x "
        f"(same {a.reps} x {a.programs} programs; findings "
        + " / ".join(str(_total(best[n])["findings"] or "none") for n in VARIANTS) + ").",
        "Budget (issue 14): >= 100 programs/s over all configs with one worker.",
    ]
    if prof:
        lines += ["", "## cProfile of one in-process run (cumulative)", "", "```", prof, "```"]
    text = "\n".join(lines) + "\n"
    with open(a.out, "w") as f:
        f.write(text)
    print(text)


def _profile(pool: WorkerPool, a) -> str:
    p = cProfile.Profile()
    p.enable()
    one(pool, VARIANTS["in process, shared with the worker (default)"], a.programs, a.seed)
    p.disable()
    s = io.StringIO()
    pstats.Stats(p, stream=s).sort_stats("cumulative").print_stats(25)
    return "\n".join(line for line in s.getvalue().splitlines() if line.strip())[-6000:]


if __name__ == "__main__":
    main()
