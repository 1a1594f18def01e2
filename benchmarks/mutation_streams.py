"""The before/after mutation score as two streams side by side (issue 30): the same counted
mutants, a few at a time, through mutation_bench.py under two interpreters at once, so that both
sides see the same machine load. Each side is an interpreter whose shapefuzz is the code to
score (a venv with an editable install of a checkout at the commit); the harness is this
checkout's. Resumable: each side's --results file is appended per mutant, and a mutant scored on
both sides is not run again.

    python benchmarks/mutation_streams.py --before /venvS/bin/python --after /venvA/bin/python \\
        --work W --triage T.jsonl [T2.jsonl ...] [--sample 2000 --seed 0] [--batch 3] [--sides before]

W/before and W/after hold each side's work folder, results.jsonl, table.md and bench.log. The
counted mutants are taken from the triage files (merged; the last row of an id wins) in a fixed
shuffle, so a run stopped early is a sample of every file, not the first lines of one. It ends
when every counted mutant is scored, or, with --wait-triage LOG..., waits for more while those
triage logs have no "table:" line (triage still running)."""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _rows(paths: list[Path]) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    for p in paths:
        for line in p.read_text().splitlines() if p.exists() else []:
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a line torn by a kill
            rows[row["id"]] = row
    return rows


def _scored(results: Path) -> set[str]:
    return set(_rows([results]))


def _side(a: argparse.Namespace, name: str, python: str, ids: list[str]) -> subprocess.Popen:
    w = a.work / name
    w.mkdir(parents=True, exist_ok=True)
    cmd = [python, str(HERE / "mutation_bench.py"), "--ids", ",".join(ids), "--budget", str(a.budget),
           "--workers", "1", "--seed", str(a.seed), "--work", str(w), "--results", str(w / "results.jsonl"),
           "--table", str(w / "table.md")]
    if name == "before":
        cmd.append("--no-baseline-cache")  # the before code predates the cache
    else:
        cmd += ["--compare", str(a.work / "before" / "results.jsonl")]
    log = open(w / "bench.log", "a")  # noqa: SIM115 - the child writes it until it ends
    return subprocess.Popen(["nice", "-n", str(a.nice), *cmd], stdout=log, stderr=subprocess.STDOUT, cwd=HERE.parent)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="interpreter of the code before")
    ap.add_argument("--after", required=True, help="interpreter of the code after")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--triage", type=Path, nargs="+", required=True, help="triage.jsonl files")
    ap.add_argument("--wait-triage", type=Path, nargs="*", default=[], help="triage logs still growing")
    ap.add_argument("--budget", type=float, default=90)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=3)
    ap.add_argument("--nice", type=int, default=10)
    ap.add_argument("--sides", choices=("both", "before", "after"), default="both",
                    help="run one side alone: the before code is fixed, so its stream can go ahead while the "
                         "after code still changes (the side run alone sees less load: a conservative before)")
    a = ap.parse_args(argv)
    a.work = a.work.resolve()
    while True:
        rows = _rows(a.triage)
        sides = ("before", "after") if a.sides == "both" else (a.sides,)
        for side in sides:  # each side's harness reads its triage from its work folder
            (a.work / side).mkdir(parents=True, exist_ok=True)
            (a.work / side / "triage.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n"
                                                               for r in rows.values()))
        done = set.intersection(*(_scored(a.work / side / "results.jsonl") for side in sides))
        order = sorted(rows)
        random.Random(a.seed).shuffle(order)
        todo = [i for i in order if rows[i].get("verdict") == "counted" and i not in done]
        if not todo:
            if any("table:" not in p.read_text() for p in a.wait_triage if p.exists()):
                time.sleep(120)
                continue
            print(f"every counted mutant is scored on {' and '.join(sides)}", flush=True)
            return 0
        batch = todo[: a.batch]
        print(f"{time.strftime('%H:%M:%S')} batch {','.join(batch)} ({len(todo)} to go)", flush=True)
        procs = [_side(a, side, getattr(a, side), batch) for side in sides]
        codes = [p.wait() for p in procs]
        if any(codes):  # a broken set-up (Note [crashed campaign], mutation/bench.py): not again
            print(f"a side's mutation_bench.py failed: its bench.log in {a.work} says why", flush=True)
            return 2


if __name__ == "__main__":
    sys.exit(main())
