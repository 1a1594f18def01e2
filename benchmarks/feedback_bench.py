"""Does coverage feedback (Note [coverage feedback], `--coverage-feedback`) buy findings? Matched
campaigns with and without it, per CPU-minute.

    python benchmarks/feedback_bench.py [--seeds 1,2,3] [--budget 120] [--plant none,flip]
                                        [--out DIR] [--md FILE]

Method:
  * Each row is one real `shapefuzz fuzz` run in a subprocess (the CLI: workers, Hypothesis,
    oracles, shrinking, background confirmation, reports), `--workers 1`, the default systems
    and configs, `--budget B` of wall time; the two arms differ only in `--coverage-feedback`.
  * Arms alternate within each seed (off, on, off, on, ...) so a change of the machine's load
    hits both.
  * CPU seconds (user + system) of the whole process tree: the campaign process and the repro.py
    runs it confirms with (RUSAGE_CHILDREN), its worker and the fork server (sampled from /proc:
    they are never waited for, so RUSAGE_CHILDREN alone missed two thirds of the CPU). Wall
    time alone would mislead on a loaded machine.
  * Findings: distinct confirmed signatures (report.json `findings`, each one's repro.py exited
    1). Plant `flip` runs torch with its own planted bug
    (`inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY`, as tests/quality/test_planted_bug.py),
    `none` unmodified torch.
  * ShapeEnv lines: report.json `torch_coverage` areas symbolic_shapes + _sympy +
    runtime_assert. It is a lower bound from the traced jobs, and the feedback arm traces a job
    of every program, so the two arms' coverage is not measured alike (the feedback arm's is
    closer to the truth); compare findings, not this.
  * Criterion (issue 16): findings per CPU-minute, summed over seeds per arm; the distinct
    signatures of all seeds are shown too."""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLANTS = {"none": (), "flip": ("--torch-config", "inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY=true")}
SHAPEENV = ("symbolic_shapes", "_sympy", "runtime_assert")


#: `python -m shapefuzz`, with ast.parse / ast.unparse behind one lock: CPython 3.11's ast
#: conversion keeps its recursion depth in shared state, and two confirmation threads building
#: issue forms at once raised "SystemError: AST constructor recursion depth mismatch" and ended
#: the campaign without a report (seen twice in a row with the planted bug; reported to the
#: lead). The same for both arms, so it changes nothing the comparison measures.
BOOT = """import ast, sys, threading
_lock = threading.RLock()
def _locked(f):
    def g(*a, **k):
        with _lock:
            return f(*a, **k)
    return g
ast.parse, ast.unparse = _locked(ast.parse), _locked(ast.unparse)
from shapefuzz.cli import main
sys.argv[0] = "shapefuzz"
main()
"""


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _descendants(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                for child in map(int, fh.read().split()):
                    out += [child, *_descendants(child)]
    except OSError:
        pass  # gone meanwhile
    return out


def _proc_cpu(pid: int) -> tuple[float, str] | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            f = fh.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/cmdline") as fh:
            cmdline = fh.read()
    except OSError:
        return None
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK"), cmdline


def run_measured(cmd: list[str], log: Path, timeout_s: float) -> tuple[int, float]:
    """(exit code, CPU seconds of the process tree). The campaign and what it waits for (its
    repro.py runs) come from RUSAGE_CHILDREN; its workers and multiprocessing's fork server are
    never waited for by it (they die with it, PR_SET_PDEATHSIG), so their CPU is read from
    /proc every 0.25 s (the last sample of each: at most 0.25 s of CPU lost per process)."""
    before, last = _cpu(), {}
    with open(log, "w") as fh:
        p = subprocess.Popen(cmd, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while p.poll() is None and time.monotonic() < deadline:
            for pid in _descendants(p.pid):
                got = _proc_cpu(pid)
                if got is not None and "multiprocessing" in got[1]:
                    last[pid] = got[0]
            time.sleep(0.25)
        if p.poll() is None:
            p.kill()
        code = p.wait()
    return code, _cpu() - before + sum(last.values())


def run_one(seed: int, arm: str, plant: str, budget: float, out: Path) -> dict:
    """One campaign; its row."""
    folder = out / f"{plant}-{arm}-s{seed}"
    cmd = [sys.executable, "-c", BOOT, "fuzz", "--budget", str(budget), "--seed", str(seed),
           "--workers", "1", "--quiet", "--force", "--out", str(folder), *PLANTS[plant],
           "--coverage-feedback" if arm == "on" else "--no-coverage-feedback"]
    wall = time.monotonic()
    code, cpu = run_measured(cmd, out / f"{folder.name}.log", budget * 4 + 300)
    wall = time.monotonic() - wall
    if not (folder / "report.json").exists():
        raise SystemExit(f"{' '.join(cmd[3:])} exited {code} without a report; see {folder}.log")
    report = json.loads((folder / "report.json").read_text())
    areas = (report.get("torch_coverage") or {}).get("areas", {})
    return {"seed": seed, "arm": arm, "plant": plant, "exit": code, "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1), "programs": report["programs"],
            "signatures": sorted(f["signature"] for f in report["findings"]),
            "unconfirmed": len(report["unconfirmed"]),
            "shapeenv_lines": sum(areas.get(a, 0) for a in SHAPEENV),
            "traced_jobs": (report.get("torch_coverage") or {}).get("traced_jobs", 0),
            "load": round(os.getloadavg()[0], 1)}


def _row_md(r: dict) -> str:
    per_min = len(r["signatures"]) / (r["cpu_s"] / 60) if r["cpu_s"] else 0.0
    return (f"| {r['plant']} | {r['seed']} | {r['arm']} | {len(r['signatures'])} | {r['unconfirmed']} | "
            f"{per_min:.2f} | {r['programs']} | {r['programs'] / r['cpu_s']:.2f} | {r['shapeenv_lines']} | "
            f"{r['cpu_s']:.0f} | {r['wall_s']:.0f} | {r['load']} |")


def _arm_md(rows: list[dict], plant: str, arm: str) -> str:
    mine = [r for r in rows if r["plant"] == plant and r["arm"] == arm]
    found = sum(len(r["signatures"]) for r in mine)
    cpu = sum(r["cpu_s"] for r in mine)
    distinct = len({s for r in mine for s in r["signatures"]})
    progs = sum(r["programs"] for r in mine)
    return (f"| {plant} | all {len(mine)} | {arm} | {found} ({distinct} distinct) | "
            f"{sum(r['unconfirmed'] for r in mine)} | {found / (cpu / 60) if cpu else 0:.2f} | {progs} | "
            f"{progs / cpu if cpu else 0:.2f} | {max((r['shapeenv_lines'] for r in mine), default=0)} (max) | "
            f"{cpu:.0f} | {sum(r['wall_s'] for r in mine):.0f} | |")


def markdown(rows: list[dict], budget: float) -> str:
    head = ("| plant | seed | feedback | confirmed findings | unconfirmed | findings / CPU-min | programs | "
            "programs / CPU-s | ShapeEnv lines | CPU s | wall s | load |\n" + "|---" * 12 + "|")
    lines = [f"`--budget {budget:g} --workers 1`, default systems (make_fx, export), "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, torch "
             f"{_torch_version()}, a shared 2-core machine (load average in the last column).", "", head]
    lines += [_row_md(r) for r in rows]
    for plant in dict.fromkeys(r["plant"] for r in rows):
        lines += [_arm_md(rows, plant, arm) for arm in ("off", "on")]
    return "\n".join(lines) + "\n"


def _torch_version() -> str:
    r = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                       capture_output=True, text=True)
    return r.stdout.strip()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--budget", type=float, default=120.0)
    ap.add_argument("--plant", default="none,flip", help="comma-separated: none, flip")
    ap.add_argument("--out", default="/tmp/feedback-bench", help="campaign folders and rows.jsonl")
    ap.add_argument("--md", default=None, help="write the markdown table here too")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for plant in a.plant.split(","):
        for seed in map(int, a.seeds.split(",")):
            for arm in ("off", "on") if seed % 2 else ("on", "off"):
                rows.append(run_one(seed, arm, plant, a.budget, out))
                with open(out / "rows.jsonl", "a") as fh:
                    fh.write(json.dumps(rows[-1]) + "\n")
                print(_row_md(rows[-1]), flush=True)
    md = markdown(rows, a.budget)
    print(md)
    if a.md:
        Path(a.md).write_text(md)


if __name__ == "__main__":
    main()
