"""Mutation score of the oracles (issue 30): mutants of the installed torch's shape code, triaged,
then each counted one through a default and an A/B campaign of a fixed budget.

    python benchmarks/mutation_bench.py --list [--sample N --seed S]   # counts per file/operator
    python benchmarks/mutation_bench.py --show ID                      # one mutant's change
    python benchmarks/mutation_bench.py --sample 200 --seed 0 --budget 90 [--workers 1]
        [--only-triage] [--ids ID,ID] [--triage-programs 200]
        [--work mutation-work] [--results benchmarks/mutation_results.jsonl]
        [--table benchmarks/mutation_results.md]

A run is resumable: triage rows (WORK/triage.jsonl) and campaign rows (--results) are appended
per mutant, and a rerun with the same torch, budget and seed skips the ids already done. The
table is rewritten after every mutant. How the pieces work: benchmarks/mutation/__init__.py."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

from mutation.apply import write_patch
from mutation.bench import BenchSettings, BrokenSetup, Mode, run_mode
from mutation.mutants import Mutant, enumerate_mutants, sample
from mutation.report import render
from mutation.store import JsonlStore
from mutation.triage import Triager, TriageSettings, Verdict

HERE = Path(__file__).resolve().parent


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (STYLE 11)
        self.exit(2, f"mutation_bench.py: {message}; see --help\n")


def _positive(cast):
    def check(text: str):
        try:
            value = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
        return value
    return check


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = _Parser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="print mutant counts per file and operator, run nothing")
    ap.add_argument("--show", metavar="ID", help="print one mutant's change and exit")
    ap.add_argument("--sample", type=_positive(int), help="mutants to draw, stratified by file and operator (default: all)")
    ap.add_argument("--seed", type=int, default=0, help="sample seed and campaign seed (default 0)")
    ap.add_argument("--ids", help="comma-separated mutant ids to run instead of a sample")
    ap.add_argument("--budget", type=_positive(float), default=90.0, help="seconds per campaign (default 90)")
    ap.add_argument("--workers", type=_positive(int), default=1, help="workers per campaign (default 1)")
    ap.add_argument("--only-triage", action="store_true", help="triage the sample, run no campaign")
    ap.add_argument("--no-baseline-cache", action="store_true",
                    help="A/B campaigns without the baseline cache (WORK/baseline-cache.sqlite, shared "
                         "by every mutant's campaign): each pays for its baseline, as a first run does")
    ap.add_argument("--whole-budget", action="store_true",
                    help="run every campaign to the end of its budget instead of stopping it at its "
                         "first detection (Note [early stop] in mutation/watch.py): same verdicts, "
                         "about twice the time; for program counts")
    ap.add_argument("--triage-programs", type=_positive(int), default=200,
                    help="the fixed program set of triage's coverage and observation (default 200)")
    ap.add_argument("--work", type=Path, default=Path("mutation-work"), help="patch folders, campaigns, caches")
    ap.add_argument("--torch-tests", type=Path, nargs="+", default=(),
                    help="test files of a PyTorch checkout of this torch's version (e.g. "
                         "test/test_dynamic_shapes.py): run them against the counted mutants instead "
                         "of the campaigns (torch wheels ship no tests)")
    ap.add_argument("--torch-tests-k", default="", help="pytest -k expression for --torch-tests")
    ap.add_argument("--compare", type=Path, metavar="RESULTS", help="put the score of an earlier run "
                    "(its --results file: same torch, budget, seed and workers) beside this one's, on the "
                    "mutants both scored")
    ap.add_argument("--results", type=Path, default=HERE / "mutation_results.jsonl")
    ap.add_argument("--table", type=Path, default=HERE / "mutation_results.md")
    return ap.parse_args(argv)


def _fail(message: str) -> int:
    print(f"mutation_bench.py: {message}", file=sys.stderr)
    return 2


def _chosen(a: argparse.Namespace, mutants: list[Mutant]) -> list[Mutant] | str:
    """The mutants of this run, or a one-line error."""
    if a.ids:
        by_id = {m.id: m for m in mutants}
        unknown = [i for i in a.ids.split(",") if i not in by_id]
        if unknown:
            return f"--ids: no mutant {unknown[0]!r} in this torch; --list --sample N shows ids"
        return [by_id[i] for i in a.ids.split(",")]
    return sample(mutants, a.sample, a.seed) if a.sample else mutants


def _counts(mutants: list[Mutant]) -> str:
    ops = sorted({m.operator.value for m in mutants})
    per = Counter((m.path, m.operator.value) for m in mutants)
    files = sorted({m.path for m in mutants})
    lines = ["| file | " + " | ".join(ops) + " | total |", "|---" * (len(ops) + 2) + "|"]
    for f in files:
        lines.append(f"| {f} | " + " | ".join(str(per[f, o]) for o in ops) + f" | {sum(per[f, o] for o in ops)} |")
    lines.append("| total | " + " | ".join(str(sum(per[f, o] for f in files)) for o in ops) + f" | {len(mutants)} |")
    return "\n".join(lines)


def _show(m: Mutant) -> str:
    import difflib

    diff = difflib.unified_diff(m.original.splitlines(True), m.mutated.splitlines(True),
                                f"a/torch/{m.path}", f"b/torch/{m.path}", n=2)
    return f"{m.id} {m.operator.value} {m.path}:{m.line} {m.qualname}: {m.description}\n" + "".join(diff)


def _triage_all(chosen: list[Mutant], triager: Triager, store: JsonlStore) -> None:
    todo = [m for m in chosen if m.id not in store]
    if todo:
        triager.check_smoke()
    for k, m in enumerate(todo, 1):
        t = triager(m)
        store.add({**t.to_json(), "operator": m.operator.value, "path": m.path, "line": m.line,
                   "qualname": m.qualname, "description": m.description})
        print(f"triage {k}/{len(todo)} {m.id} {m.operator.value} {m.path}:{m.line}: {t.verdict.value} "
              f"({t.seconds:.0f} s; {t.reason})", flush=True)


def _bench_all(counted: list[Mutant], a: argparse.Namespace, results: JsonlStore, settings: BenchSettings,
               write_table) -> None:
    todo = [m for m in counted if m.id not in results]
    for k, m in enumerate(todo, 1):
        patch = write_patch(m, a.work / "patches" / m.id)
        modes = {}
        for mode in Mode:
            r = run_mode(mode, patch, (a.work / "campaigns" / m.id / mode.value).resolve(), settings)
            modes[mode.value] = r.to_json()
            print(f"bench {k}/{len(todo)} {m.id} {mode.value}: {'detected' if r.detected else 'survived'}"
                  f"{' (stopped there)' if r.stopped_early else ''} "
                  f"({r.elapsed_s:.0f} s, {r.programs} programs, {r.findings} confirmed findings"
                  f"{', oracles ' + ','.join(r.oracles) if r.oracles else ''}{'; ' + r.error if r.error else ''})",
                  flush=True)
        results.add({"id": m.id, "operator": m.operator.value, "path": m.path, "line": m.line,
                     "qualname": m.qualname, "description": m.description, "modes": modes})
        write_table()


def _torch_tests_all(counted: list[Mutant], a: argparse.Namespace, env: dict, version: str) -> int:
    """Torch's own tests against the counted mutants (mutation/torch_tests.py), resumable in
    WORK/torch_tests.jsonl; prints the kill rate (benchmarks/README.md's results put it beside the
    campaigns' score, mutant by mutant)."""
    from mutation.torch_tests import TorchTests

    tests = TorchTests(tuple(f.resolve() for f in a.torch_tests), a.work, a.torch_tests_k)
    store = JsonlStore(a.work / "torch_tests.jsonl", {"torch_version": version, "k": a.torch_tests_k,
                                                       "files": sorted(f.name for f in a.torch_tests)})
    base = tests.baseline(env)
    if base.error or not base.ran:
        return _fail(f"--torch-tests: the unmodified run gave no result ({base.error or 'no test ran'})")
    print(f"torch tests, unmodified: {base.ran} ran, {len(base.failed)} failed ({base.seconds:.0f} s)", flush=True)
    for k, m in enumerate([m for m in counted if m.id not in store], 1):
        row = tests.judge(m, env, base)
        store.add(row)
        print(f"torch-tests {k} {m.id}: {'killed' if row['killed'] else 'survived'} ({row['seconds']} s"
              f"{'; ' + row['error'] if row['error'] else ''})", flush=True)
    done = [store.get(m.id) for m in counted if m.id in store]
    print(f"torch tests killed {sum(r['killed'] for r in done)} of {len(done)} counted mutants")
    return 0


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    missing = [f for f in a.torch_tests if not f.is_file()]
    if missing:  # before the minutes of triage, not after
        return _fail(f"--torch-tests: no file {missing[0]} (point at test files of a PyTorch checkout)")
    import torch

    t0 = time.monotonic()
    mutants = enumerate_mutants()
    if a.show:
        m = next((m for m in mutants if m.id == a.show), None)
        if m is None:
            return _fail(f"--show: no mutant {a.show!r} in torch {torch.__version__}")
        print(_show(m))
        return 0
    chosen = _chosen(a, mutants)
    if isinstance(chosen, str):
        return _fail(chosen)
    if a.list:
        print(f"torch {torch.__version__}: {len(mutants)} mutants ({time.monotonic() - t0:.1f} s)"
              + (f"; {len(chosen)} chosen" if len(chosen) != len(mutants) else "") + "\n")
        print(_counts(chosen))
        return 0
    return run(a, mutants, chosen, torch.__version__)


def _scored_commit() -> str:
    """The commit of the shapefuzz this interpreter imports (the code being scored), "+dirty"
    when its package folder has uncommitted changes; "" outside a git checkout."""
    import subprocess

    import shapefuzz

    where = os.path.dirname(os.path.abspath(shapefuzz.__file__))
    try:
        head = subprocess.run(["git", "-C", where, "rev-parse", "--short=7", "HEAD"], capture_output=True,
                              text=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", where, "status", "--porcelain", "--", "."], capture_output=True,
                               text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return head + ("+dirty" if head and dirty else "")


def run(a: argparse.Namespace, mutants: list[Mutant], chosen: list[Mutant], version: str) -> int:
    a.work = a.work.resolve()
    env = dict(os.environ)
    triage_store = JsonlStore(a.work / "triage.jsonl", {"torch_version": version, "method": "probe",
                                                         "programs": a.triage_programs})
    triager = Triager(TriageSettings(a.work, a.triage_programs, env=env), {m.path for m in mutants})
    meta = {"torch_version": version, "command": "python benchmarks/mutation_bench.py " + " ".join(sys.argv[1:]),
            "enumerated": len(mutants), "sampled": len(chosen), "seed": a.seed, "budget": a.budget,
            "workers": a.workers}
    # the scored code's commit: a run resumed on other code starts its rows afresh (rows from
    # before the field existed count as this code's)
    results = JsonlStore(a.results, {"torch_version": version, "budget": a.budget, "seed": a.seed,
                                     "workers": a.workers, "baseline_cache": not a.no_baseline_cache,
                                     "shapefuzz_commit": _scored_commit()}, since=("shapefuzz_commit",))

    same = {k: results.match[k] for k in ("torch_version", "budget", "seed", "workers")}

    def write_table() -> None:  # the earlier run's rows read afresh: it may still be running
        before = JsonlStore(a.compare, same).rows if a.compare is not None else None
        a.table.parent.mkdir(parents=True, exist_ok=True)
        a.table.write_text(render(meta, chosen, triage_store.rows, results.rows, before, str(a.compare or "")) + "\n")

    try:
        _triage_all(chosen, triager, triage_store)
    finally:
        triager.close()
    write_table()
    counted = [m for m in chosen if triage_store.get(m.id)["verdict"] == Verdict.COUNTED.value]
    print(f"triage: {dict(Counter(triage_store.get(m.id)['verdict'] for m in chosen))}", flush=True)
    if a.torch_tests:
        return _torch_tests_all(counted, a, env, version)
    if not a.only_triage:
        settings = BenchSettings(a.budget, a.seed, a.workers, env=env,
                                 baseline_cache=None if a.no_baseline_cache else a.work / "baseline-cache.sqlite",
                                 early_stop=not a.whole_budget)
        try:
            _bench_all(counted, a, results, settings, write_table)
        except BrokenSetup as e:  # Note [crashed campaign]: no row for this mutant
            return _fail(str(e))
    print(f"table: {a.table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
