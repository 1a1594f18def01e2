"""torch-env campaigns through one worker with one job sent ahead against every queued job sent
ahead (Note [pipelined jobs] in shapefuzz/campaign/workers.py), side by side in one run.

    python benchmarks/pipeline_bench.py [--programs 120] [--reps 4] [--out FILE]

Method: one warm WorkerPool(1) lives for the whole run. Each rep is one real Campaign (Hypothesis
generation, the worker, oracles, in-order processing; no shrinking) over torch-env's 16 default
configs with its own seed, run once per variant, the variant order alternating rep by rep so a
change in the machine's load lands on both rows alike; both variants run the same programs
(checked by program hash). The pool's pipeline depth is the only difference.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings

VARIANTS = {"one job ahead": 1, "every queued job ahead (default)": None}


def campaign(pool, seed: int, n: int):
    from shapefuzz.campaign.engine import Campaign, CampaignSettings
    from shapefuzz.systems import targets_for

    cfg = CampaignSettings(targets_for(("torch-env",)), budget_s=10_000, max_examples=n,
                           seed=seed, shrink_budget_s=0.0)
    t = time.perf_counter()
    camp = Campaign(cfg, pool).run()
    return time.perf_counter() - t, camp.stats.programs, tuple(camp.stats.hashes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--programs", type=int, default=120)
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--out", default=None, help="append the result table to this markdown file")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    from shapefuzz.campaign.workers import WorkerPool

    load0 = os.getloadavg()[0]
    total = {n: [0.0, 0] for n in VARIANTS}
    with WorkerPool(1) as pool:
        default_depth = pool._depth
        campaign(pool, 999, 10)  # warm: the worker's first traces pay lazy imports
        for rep in range(args.reps):
            hashes = set()
            for name in (list(VARIANTS) if rep % 2 == 0 else list(VARIANTS)[::-1]):
                pool._depth = VARIANTS[name] or default_depth
                wall, programs, h = campaign(pool, rep, args.programs)
                hashes.add(h)
                total[name][0] += wall
                total[name][1] += programs
            assert len(hashes) == 1, "the variants ran different programs"
    lines = [f"pipeline_bench: torch-env default configs, one worker, {args.reps} x {args.programs} programs "
             f"(seeds 0..{args.reps - 1}); Python {platform.python_version()}, {platform.machine()}, "
             f"load average {load0:.1f} before, {os.getloadavg()[0]:.1f} after", "",
             "| variant | programs | wall s | programs/s |", "|---|---:|---:|---:|"]
    for name, (wall, programs) in total.items():
        lines.append(f"| {name} | {programs} | {wall:.1f} | {programs / wall:.1f} |")
    (one, _), (deep, _) = total.values()
    lines += ["", f"every queued job ahead: {one / deep:.2f}x the programs/s of one job ahead"]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write("\n" + text)


if __name__ == "__main__":
    main()
