"""Worker start-up and restart, spawned against forked from the warm template (Note [zygote]),
side by side in one run.

    python benchmarks/startup_bench.py [--workers 2] [--reps 2] [--out FILE]

Each measurement runs in a fresh interpreter (the fork server lives as long as the process that
started it, so a second pool in the same process would find it warm), alternating the start
methods rep by rep so a change in the machine's load lands on both. Per rep and start method:
`start`: from WorkerPool(n) to every worker having answered one make_fx job; `restart`: one
worker killed (as after a timeout or a state drift, Note [state guard]) until its replacement
answered a job. The machine's load average is printed with the result.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

PROBE = """
import json, sys, time, warnings
warnings.filterwarnings("ignore")
t0 = time.perf_counter()
from shapefuzz.campaign.worker_loop import _WARM_UP
from shapefuzz.campaign.workers import WorkerPool
from shapefuzz.systems.jobs import Job
job = Job(_WARM_UP, "make_fx", "default", "[]")
with WorkerPool(int(sys.argv[2]), timeout_s=300, start=sys.argv[1]) as pool:
    pool.run_many([job] * pool.size)
    start = time.perf_counter() - t0
    t = time.perf_counter()
    pool._replace(0)
    pool.run_many([job] * pool.size)
    restart = time.perf_counter() - t
print(json.dumps({"start": start, "restart": restart}))
"""


def probe(method: str, workers: int) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, method, str(workers)], capture_output=True,
                         text=True, check=True, timeout=900)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--out", default=None, help="append the result table to this markdown file")
    args = ap.parse_args()
    load0 = os.getloadavg()
    rows: dict[str, list[dict]] = {"spawn": [], "forkserver": []}
    for rep in range(args.reps):
        for method in (("spawn", "forkserver") if rep % 2 == 0 else ("forkserver", "spawn")):
            rows[method].append(probe(method, args.workers))
            print(method, rows[method][-1], flush=True)
    load1 = os.getloadavg()
    mean = {m: {k: sum(r[k] for r in rs) / len(rs) for k in ("start", "restart")} for m, rs in rows.items()}
    table = "\n".join([
        (f"### startup_bench ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
         f"{platform.python_version()}, {args.workers} workers, {args.reps} reps)"),
        "",
        f"Load average (1 min) before: {load0[0]:.2f}, after: {load1[0]:.2f}.",
        "",
        "| workers | start s (all ready) | restart s (one replaced) |",
        "|---|---:|---:|",
        *(f"| {m} | {v['start']:.1f} | {v['restart']:.1f} |" for m, v in mean.items()),
        "",
        (f"Restart: {mean['spawn']['restart'] / mean['forkserver']['restart']:.1f}x faster forked; "
         f"start: {mean['spawn']['start'] / mean['forkserver']['start']:.2f}x."),
        "",
    ])
    print(table)
    if args.out:
        with open(args.out, "a") as fh:
            fh.write(table + "\n")


if __name__ == "__main__":
    main()
