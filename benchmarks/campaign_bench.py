"""What a campaign delivers, per system, and where its time goes: each system's default campaign
(the CLI's `shapefuzz fuzz --system S --workers 1 --budget B`, confirmation on) side by side in
one run, with the raw trace time of the same programs (the floor) and the ratios.

    python benchmarks/campaign_bench.py [--budget 30] [--rows make_fx,export,...] [--seed 0 1]
                                        [--out FILE]

Method:
  * Each row is one real campaign (run_fuzz: workers, Hypothesis, oracles, shrinking,
    background confirmation, reports), one worker, each system's default configs
    (systems.targets_for), the wall budget counted from the campaign's start (the torch import
    of this process is paid once, before the first row; each row starts its own worker).
  * Its report.json's `time_split` (Note [time split]) gives the wall phases and the workers'
    job time per system: trace, replay, z3, ipc.
  * The programs a row counted are recorded (the generating round's jobs_for is wrapped here,
    nothing in the library changes) and traced again in a fresh spawned interpreter with nothing
    but the system's own trace per default config: the floor. make_fx / export: the system's
    `_trace` (symbolic inputs, the trace, its guards); torch-env: the ShapeEnv run of the
    questions; ref: its question run / tensor rules; compile: torch.compile's calls with the
    config's backend, as a user makes them (so Dynamo's guard latency profile, which a campaign
    skips: Note [no guard latency profile], is in the floor).
  * `ratio` = campaign wall time / floor time: what the fuzzer costs over torch's own work on
    the same programs (shrinking and confirmation included, so a row with findings pays more).
The machine's load average is printed: on the shared 2-core machine, rows move by tens of
percent between runs."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path


@dataclass(frozen=True)
class Row:
    """One campaign of the table: its systems and configs (the CLI's --system/--config), whether
    it runs in A/B mode against this same interpreter ("first": a fresh baseline cache,
    "repeat": the cache the "first" row filled, as a patch author's second run), and its goal."""

    name: str
    systems: tuple[str, ...] = ()
    configs: tuple[str, ...] = ()
    ab: str = ""  # "", "first" or "repeat"
    rate: float | None = None  # goal: programs/s of wall time
    share_of: tuple[str, float] | None = None  # goal: at least this share of another row's programs
    max_ratio: float | None = None  # goal: wall / floor at most this


#: the rows (issue 16 and 31 goals; absolute rates move between machines, ratios less)
ROWS = {r.name: r for r in (
    Row("torch-env", ("torch-env",), rate=50, max_ratio=1.5),
    Row("ref", ("ref",), rate=100, max_ratio=1.5),
    Row("make_fx", ("make_fx",), rate=8),
    Row("export", ("export",)),
    Row("make_fx+export", ("make_fx", "export"), rate=5),
    Row("default"),  # the CLI's default campaign (Note [default systems]): the A/B rows' yardstick
    Row("ab-first", ab="first", share_of=("default", 0.6)),
    Row("ab-repeat", ab="repeat", share_of=("default", 0.9)),
    Row("export-all", ("export",), ("all",), rate=2),
    Row("compile", ("compile",), rate=2),
    Row("inductor", ("compile",), ("inductor",), rate=0.3),
)}


#: the A/B rows' baseline: this interpreter, told apart by a variable nothing reads (the A/B
#: check refuses a baseline identical to the candidate)
AB_ENV = ("SHAPEFUZZ_BENCH_BASELINE=1",)


# ---- the campaign (this process) ---------------------------------------------------------------
def run_row(row: Row, budget: float, seed: int, out: Path, cache: Path) -> tuple[dict, list[str]]:
    import shapefuzz.campaign.generating as generating  # where a round submits its programs
    from shapefuzz.campaign.run import FuzzOptions, run_fuzz
    from shapefuzz.campaign.stats import program_hash
    from shapefuzz.cases.known import load_known
    from shapefuzz.repro.ab import baseline_from_flags
    from shapefuzz.strategies.settings import GenSettings
    from shapefuzz.systems import targets_for

    seen: dict[str, str] = {}
    original = generating.jobs_for

    def recording(program, *a, **kw):
        seen[program_hash(program)] = program.dumps()
        return original(program, *a, **kw)

    if row.ab == "first":
        cache.unlink(missing_ok=True)
    opts = FuzzOptions(targets=targets_for(row.systems, row.configs), budget_s=budget, max_examples=None,
                       seed=seed, workers=1, out=out, gen=GenSettings(), torch_config=(), timeout_s=60.0,
                       shrink_budget_s=30.0, confirm=True, quiet=True, known=load_known(),
                       baseline=baseline_from_flags(sys.executable, AB_ENV) if row.ab else None,
                       baseline_cache=cache if row.ab else None)
    generating.jobs_for = recording
    try:
        t = time.monotonic()
        run_fuzz(opts, t0=t)
        wall = time.monotonic() - t
    finally:
        generating.jobs_for = original
    report = json.loads((out / "report.json").read_text())
    report["bench_wall_s"] = wall
    hashes = [h.strip() for h in (out / "programs.txt").read_text().split()]
    return report, [seen[h] for h in hashes if h in seen]


# ---- the floor (a fresh interpreter per row) -----------------------------------------------------
def _floor_one(system: str, config: str, program) -> None:
    from shapefuzz.systems.torch_toggles import applied, fresh_fake_caches

    if system == "make_fx":
        from shapefuzz.systems.make_fx import MakeFxSystem

        fresh_fake_caches()
        with applied(config) as cfg:
            MakeFxSystem()._trace(program, lambda *a, **k: None, cfg.toggles)
    elif system == "export":
        from shapefuzz.systems.configs import config_of
        from shapefuzz.systems.export import ExportSystem

        c = config_of("export", config)
        fresh_fake_caches()
        with applied(c.toggles, frontend="export") as cfg:
            ExportSystem()._trace(program, lambda *a, **k: None, c.strict, c.dims, cfg.toggles, c.decomposed)
    elif system == "torch-env":
        import torch.fx.experimental._config as fxx
        from torch.fx.experimental.symbolic_shapes import ShapeEnv

        from shapefuzz.systems.torch_env import _Run

        with applied(config) as cfg:
            _Run(ShapeEnv(**cfg.env_kwargs), bool(fxx.backed_size_oblivious)).execute(program)
    elif system == "ref":
        _floor_ref(config, program)
    elif system == "compile":
        _floor_compile(config, program)


def _floor_ref(config: str, program) -> None:
    from shapefuzz.program.questions import QProgram
    from shapefuzz.systems.ref.execute import run
    from shapefuzz.systems.ref.settings import settings_for

    if isinstance(program, QProgram):
        run(program, settings_for(config))
    else:
        from shapefuzz.systems.ref.tensors import observe_tensors

        observe_tensors("ref", config, program, settings_for(config))


def _floor_compile(config: str, program) -> None:
    import torch
    import torch._dynamo

    from shapefuzz.program import interp
    from shapefuzz.systems.compile import _inductor_settings, _mark, call_sequence, program_function
    from shapefuzz.systems.compile_settings import settings_of
    from shapefuzz.systems.torch_toggles import applied, fresh_fake_caches

    s = settings_of(config)
    fn = program_function(program)
    fresh_fake_caches()
    torch._dynamo.reset()
    with applied(s.toggles, frontend="compile"), torch._dynamo.config.patch(**dict(s.dynamo)), \
            _inductor_settings(s):  # the config's own backend: Inductor's floor compiles too
        cf = torch.compile(fn, backend=s.backend, fullgraph=s.fullgraph, dynamic=s.dynamic)
        for specs in call_sequence(program):
            real = interp.make_inputs(specs)
            _mark(real, specs, s.marks)
            cf(*real)
    torch._dynamo.reset()


def floor(targets: list, programs: list[str]) -> dict:
    """Seconds of the systems' own traces over `programs` x `targets`, each program under the
    configs the campaign ran it under (Note [config rotation]; errors are torch's
    answers too: timed like the rest; their types are counted under "errors", so a floor that
    fails for a reason of its own shows)."""
    from shapefuzz.campaign.rotation import ROTATE, rotated
    from shapefuzz.program.kinds import kind_of, load_program
    from shapefuzz.systems import accepts

    warnings.filterwarnings("ignore")
    loaded = [load_program(json.loads(p)) for p in programs]
    runs = [rotated(p.dumps(), tuple(targets), ROTATE) for p in loaded]  # Note [config rotation]
    per: dict = {"errors": {}}
    for system, config in targets:
        mine = [p for p, run in zip(loaded, runs) if accepts(system, kind_of(p).name) and (system, config) in run]
        for k, p in enumerate(mine[:1] + mine):  # the first one twice: a warm-up, untimed, as
            t = time.perf_counter()              # the campaign's workers warm up at start
            try:
                _floor_one(system, config, p)
            except Exception as e:  # a program torch rejects still cost its trace
                name = type(e).__name__
                per["errors"][name] = per["errors"].get(name, 0) + 1
            if k:
                per[system] = per.get(system, 0.0) + time.perf_counter() - t
    return per


# ---- the table -----------------------------------------------------------------------------------
def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def goal_text(row: Row) -> str:
    parts = [f">= {row.rate:g}/s" if row.rate else "",
             f">= {row.share_of[1]:.0%} of {row.share_of[0]}'s programs" if row.share_of else "",
             f"wall/floor <= {row.max_ratio:g}" if row.max_ratio else ""]
    return ", ".join(p for p in parts if p) or "-"


def goal_met(row: Row, progs: int, wall: float, fsum: float, programs_of: dict[str, int]) -> str:
    """yes / no / ? (the yardstick row was not run) for every goal of the row at once."""
    checks = []
    if row.rate:
        checks.append(progs / wall >= row.rate)
    if row.share_of:
        ref = programs_of.get(row.share_of[0])
        checks.append(None if not ref else progs >= row.share_of[1] * ref)
    if row.max_ratio:
        checks.append(bool(fsum) and wall / fsum <= row.max_ratio)
    if not checks:
        return "-"
    return "?" if None in checks else "yes" if all(checks) else "no"


def table(results: list[tuple[Row, dict, dict]], budget: float, seed: int, load: str) -> str:
    lines = [f"campaign_bench: --budget {budget:g}, --seed {seed}, one worker, {time.strftime('%Y-%m-%d')}; torch "
             f"{results[0][1]['torch_version'] if results else '?'}, {platform.machine()}, "
             f"{os.cpu_count()} cores, load average {load}", "",
             "| campaign | programs | wall s | programs/s | goal | met | search programs/s | valid | floor s "
             "| floor programs/s | wall / floor | generate | wait | worker ready s | oracles | shrink | confirm "
             "| startup | worker trace | replay | z3 | ipc |", "|" + "---|" * 22]
    programs_of = {row.name: r["programs"] for row, r, _ in results}
    for row, r, fl in results:
        ts, progs = r["time_split"], r["programs"]
        ph, wall = ts["phases_s"], r["bench_wall_s"]
        busy = {k: sum(s.get(f"{k}_s", 0.0) for s in ts["systems"].values())
                for k in ("trace", "replay", "z3", "ipc")}
        total = sum(busy.values())
        fsum = sum(v for k, v in fl.items() if k != "errors")
        search = wall - sum(ph.get(k, 0.0) for k in ("startup", "shrink", "confirm", "report"))
        lines.append(
            f"| {row.name} | {progs} | {wall:.1f} | {progs / wall:.2f} | {goal_text(row)} | "
            f"{goal_met(row, progs, wall, fsum, programs_of)} | {progs / search if search > 0 else 0:.2f} | "
            f"{_pct(r['valid_programs'], progs)} | {fsum:.1f} | {progs / fsum if fsum else 0:.1f} | "
            f"{wall / fsum if fsum else 0:.1f}x | {_pct(ph.get('generate', 0.0), wall)} | "
            f"{_pct(ph.get('wait', 0.0), wall)} | {ts.get('first_worker_ready_s', 0.0):.1f} | "
            + " | ".join(_pct(ph.get(k, 0.0), wall) for k in ("oracles", "shrink", "confirm", "startup"))
            + " | " + " | ".join(_pct(busy[k], total) for k in ("trace", "replay", "z3", "ipc")) + " |")
    errors = {row.name: fl["errors"] for row, _, fl in results if fl.get("errors")}
    cached = {row.name: r.get("ab", {}).get("baseline_cache") for row, r, _ in results if row.ab}
    lines += ["", f"floor runs that raised (by type; torch's own rejections count too): {errors or 'none'}",
              f"A/B rows' baseline cache: {cached or '-'}",
              "", "wall phases: share of the row's wall time (Note [time split]); worker columns: "
              "share of the worker's busy time. search programs/s: programs per second of the "
              "wall time spent searching (without startup, shrinking, confirmation and the report). "
              "floor: the systems' own traces of the same programs, nothing else (the candidate's, for "
              "A/B rows; benchmarks/campaign_bench.py docstring). A/B rows: baseline = this same "
              "interpreter (unmodified against unmodified: any finding there is a false one)."]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=30.0)
    ap.add_argument("--rows", "--systems", dest="rows", default=",".join(ROWS),
                    help=f"comma-separated rows, of: {', '.join(ROWS)}")
    ap.add_argument("--seed", type=int, nargs="+", default=[0], help="one table per seed")
    ap.add_argument("--out", default=None, help="append the tables to this markdown file")
    args = ap.parse_args()
    unknown = [r for r in args.rows.split(",") if r not in ROWS]
    if unknown:
        ap.error(f"unknown rows {', '.join(unknown)}; choose from {', '.join(ROWS)}")
    warnings.filterwarnings("ignore")
    import torch  # noqa: F401  (paid once, before the first row's clock)

    from shapefuzz.systems import targets_for

    ctx = get_context("spawn")
    cache = Path(tempfile.mkdtemp(prefix="campaign-bench-cache-")) / "baseline.sqlite"
    for seed in args.seed:
        results, load0 = [], os.getloadavg()
        for name in args.rows.split(","):
            row = ROWS[name]
            out = Path(tempfile.mkdtemp(prefix=f"campaign-bench-{name}-"))
            report, programs = run_row(row, args.budget, seed, out, cache)
            with ProcessPoolExecutor(1, mp_context=ctx) as ex:
                fl = ex.submit(floor, list(targets_for(row.systems, row.configs)), programs).result()
            results.append((row, report, fl))
            print(f"{name}: {report['programs']} programs in {report['bench_wall_s']:.1f} s; floor "
                  f"{sum(v for k, v in fl.items() if k != 'errors'):.1f} s ({fl['errors']}); {out}", flush=True)
        load1 = os.getloadavg()
        text = table(results, args.budget, seed, f"{load0[0]:.1f} before, {load1[0]:.1f} after")
        print(text, flush=True)
        if args.out:
            with open(args.out, "a") as fh:
                fh.write(text + "\n\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
