"""Campaign throughput with 1 and 2 workers on make_fx, side by side in one run.

    python benchmarks/workers_bench.py [--programs 48] [--chunks 6] [--out FILE]

Method: two warm WorkerPools (1 and 2 workers) live for the whole run. The programs are cut into
chunks; each chunk is one real Campaign (Hypothesis generation, workers, oracles, in-order
processing, Note [parallel rounds]) with its own seed and --max-examples, run once on each pool,
the pool order alternating chunk by chunk so a change in the machine's load lands on both rows
about equally. A seed gives the same programs whatever the number of workers, so both rows run
exactly the same programs (checked). Worker start-up is excluded (the pools are warmed first).
The machine's load average is printed with the result: on a shared machine the ratio is only
as good as the idle cores; re-run it when the machine is quiet.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings


def campaign(pool, n_workers: int, seed: int, n: int):
    from shapefuzz.campaign.engine import Campaign, CampaignSettings

    cfg = CampaignSettings((("make_fx", "default"),), budget_s=10_000, max_examples=n, seed=seed,
                           shrink_budget_s=0.0, parallel=n_workers)
    t = time.perf_counter()
    camp = Campaign(cfg, pool).run()
    return time.perf_counter() - t, camp.stats.programs, tuple(camp.stats.hashes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--programs", type=int, default=48)
    ap.add_argument("--chunks", type=int, default=6)
    ap.add_argument("--out", default=None, help="append the result table to this markdown file")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    from shapefuzz.campaign.workers import WorkerPool

    per = max(1, args.programs // args.chunks)
    load0 = os.getloadavg()
    with WorkerPool(1, timeout_s=120) as p1, WorkerPool(2, timeout_s=120) as p2:
        pools = {1: p1, 2: p2}
        for n, pool in pools.items():  # warm: start-up and first traces are not measured
            campaign(pool, n, seed=10_000, n=2 * n)
        total = {1: [0.0, 0], 2: [0.0, 0]}
        for c in range(args.chunks):
            hashes = {}
            for n in ((1, 2) if c % 2 == 0 else (2, 1)):
                dt, progs, hashes[n] = campaign(pools[n], n, seed=c, n=per)
                total[n][0] += dt
                total[n][1] += progs
            assert hashes[1] == hashes[2], "the two rows ran different programs"
            print(f"chunk {c}: {per} programs; 1 worker {total[1][1] / total[1][0]:.2f}/s, "
                  f"2 workers {total[2][1] / total[2][0]:.2f}/s so far", flush=True)
    load1 = os.getloadavg()
    r1, r2 = (total[n][1] / total[n][0] for n in (1, 2))
    table = "\n".join([
        (f"### workers_bench ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
         f"{os.cpu_count()} cores, {platform.python_version()})"),
        "",
        (f"Load average (1/5/15 min) before: {load0[0]:.2f}/{load0[1]:.2f}/{load0[2]:.2f}, after: "
         f"{load1[0]:.2f}/{load1[1]:.2f}/{load1[2]:.2f} (other processes on the machine)."),
        "",
        "| make_fx campaign | programs | seconds | programs/s | vs 1 worker |",
        "|---|---:|---:|---:|---:|",
        f"| 1 worker | {total[1][1]} | {total[1][0]:.1f} | {r1:.2f} | 1.00x |",
        f"| 2 workers | {total[2][1]} | {total[2][0]:.1f} | {r2:.2f} | {r2 / r1:.2f}x |",
        "",
    ])
    print(table)
    if args.out:
        with open(args.out, "a") as fh:
            fh.write(table + "\n")


if __name__ == "__main__":
    main()
