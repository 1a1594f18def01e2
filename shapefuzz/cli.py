"""The command line: the only place that reads flags; it builds settings values and passes
them down (STYLE 8). Exit codes: 0 no finding / replay as recorded, 1 findings / replay differs,
2 bad usage or input (one line on stderr, never a traceback)."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import click

from shapefuzz import BadInput

__all__ = ["main"]


def _parse_torch_config(items: tuple[str, ...]) -> tuple[tuple[str, object], ...]:
    out = []
    for it in items:
        key, sep, val = it.partition("=")
        if not sep or not key.isidentifier():
            raise BadInput(f"--torch-config {it!r}: expected KEY=VALUE, e.g. aggressive_guard_free_semantics=2")
        import torch.fx.experimental._config as fxx

        if not hasattr(fxx, key):
            raise BadInput(f"--torch-config: torch.fx.experimental._config has no option {key!r}")
        low = val.lower()
        parsed: object = {"true": True, "false": False, "1": True, "0": False}.get(low) \
            if isinstance(getattr(fxx, key), bool) else (int(val) if val.lstrip("-").isdigit() else val)
        if parsed is None:
            raise BadInput(f"--torch-config {key}: {val!r} is not a boolean (use true/false)")
        out.append((key, parsed))
    return tuple(out)


class _FamilyOption(click.Option):
    """--family's help lists the op families, read from the op registry only when help is shown
    (importing the ops imports torch)."""

    def get_help_record(self, ctx):
        from shapefuzz.ops import families  # lazy: the ops import torch (+1 s)

        self.help = (self.help or "").replace("{families}", ", ".join(families()))
        return super().get_help_record(ctx)


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


@click.group()
def cli() -> None:
    """shapefuzz: a property-based differential fuzzer for PyTorch's symbolic shapes."""


@cli.command()
@click.option("--system", "systems", multiple=True, help="System to fuzz (repeatable). Default: make_fx, export, and torch-env under every config.")
@click.option("--config", "configs", multiple=True,
              help="Named config (repeatable), or 'all'. Default: each system's default configs "
                   "(`shapefuzz systems` lists them and what each switches).")
@click.option("--configs-per-program", "per_program", default="2", show_default=True, metavar="N|all",
              help="make_fx, export and compile run each program under their comparison config "
                   "(default) and N more of the chosen configs, in rotation by the program's hash; "
                   "'all': every config on every program (slower per program).")
@click.option("--budget", type=float, default=60.0, show_default=True,
              help="Wall-time seconds for the whole run, start-up, shrinking and confirmation "
                   "included: generation stops early enough to shrink and confirm what it found.")
@click.option("--max-examples", type=int, default=None, help="Stop after this many programs.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Generator seed: the same seed gives the same programs whatever --workers is.")
@click.option("--workers", type=int, default=None, help="Worker processes (default: number of cores).")
@click.option("--out", type=click.Path(file_okay=False), default="shapefuzz-out", show_default=True,
              help="Folder for the reports and finding folders; an unfinished campaign there resumes, "
                   "a finished one is refused unless --force.")
@click.option("--force", is_flag=True,
              help="Replace a finished campaign in --out (its reports and finding folders are removed).")
@click.option("--max-ops", type=int, default=8, show_default=True,
              help="Instructions per generated program at most.")
@click.option("--family", "families", multiple=True, cls=_FamilyOption,
              help="Restrict to op families (repeatable): {families}.")
@click.option("--torch-config", "torch_config", multiple=True,
              help="Set torch.fx.experimental._config KEY=VALUE in the workers (repeatable).")
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Per-program seconds.")
@click.option("--shrink-budget", type=float, default=30.0, show_default=True,
              help="Seconds at most for shrinking one finding (within --budget); a known upstream "
                   "issue's finding is shrunk after generation stops, 5 s at most, unless --strict.")
@click.option("--no-confirm", is_flag=True, help="Do not run each repro.py to confirm findings.")
@click.option("--known", "known_files", multiple=True, type=click.Path(dir_okay=False),
              help="Extra known-issues JSON file (repeatable); known findings do not fail the run.")
@click.option("--strict", is_flag=True, help="Known upstream issues count as findings too.")
@click.option("--quiet", is_flag=True, help="No live progress line and no summary line.")
@click.option("--memory-limit", "memory_mb", type=int, default=4096, show_default=True,
              help="MB a worker may grow past its warm size (address space cap); 0: no cap.")
@click.option("--database", default=None, metavar="URL",
              help="Shared example database: redis://HOST:PORT[/DB] (several machines) or dir:PATH.")
@click.option("--plugin", "plugins", multiple=True, metavar="MODULE",
              help="Import MODULE here and in every worker (extra ops or systems; repeatable).")
@click.option("--baseline-python", default=None, metavar="PATH",
              help="A/B mode: also run every program under this interpreter (the baseline torch).")
@click.option("--baseline-env", multiple=True, metavar="KEY=VALUE",
              help="A/B mode: set KEY for the baseline's workers (empty VALUE unsets it; repeatable).")
@click.option("--baseline-cache", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="A/B mode: keep the baseline's observations in FILE and reuse them in later runs "
                   "against the same baseline build [default: ~/.cache/shapefuzz/baseline-observations.sqlite].")
@click.option("--no-baseline-cache", is_flag=True, help="A/B mode: run every baseline job, store none.")
@click.option("--progress-log", type=click.Path(dir_okay=False), default=None,
              help="Append every progress update (twice a second, timestamped) to this file.")
@click.option("--coverage-feedback/--no-coverage-feedback", default=False, show_default=True,
              help="Steer generation with Hypothesis target() toward programs that reach ShapeEnv "
                   "lines new to the round (one traced job per program; off by default: it found "
                   "fewer bugs per CPU-minute in the measured campaigns, benchmarks/RESULTS.md).")
def fuzz(systems, configs, budget, max_examples, seed, workers, out, max_ops, families, torch_config,
         timeout, shrink_budget, no_confirm, known_files, strict, quiet, memory_mb, database, plugins,
         progress_log, baseline_python, baseline_env, baseline_cache, no_baseline_cache, force, coverage_feedback,
         per_program):
    """Run a budgeted fuzz campaign and write report.json/md/html and one folder per finding."""
    from shapefuzz.campaign.template import start_template  # lazy: keeps --help at click alone

    start_template()  # the workers' template warms up while this process imports torch
    from shapefuzz.campaign.run import FuzzOptions, run_fuzz  # lazy: keeps --help at click alone
    from shapefuzz.systems import targets_for  # lazy: keeps --help at click alone

    try:
        targets = targets_for(tuple(systems), tuple(configs))
    except BadInput as e:
        raise BadInput(f"--system/--config: {e}") from None
    if budget <= 0:
        raise BadInput(f"--budget {budget}: must be a positive number of seconds")
    rotate = _per_program(per_program)
    if max_examples is not None and max_examples <= 0:
        raise BadInput(f"--max-examples {max_examples}: must be positive")
    if workers is not None and not 1 <= workers <= 64:
        raise BadInput(f"--workers {workers}: must be between 1 and 64")
    if timeout <= 0:
        raise BadInput(f"--timeout {timeout}: must be positive")
    if memory_mb < 0:
        raise BadInput(f"--memory-limit {memory_mb}: must be a number of MB, or 0 for no cap")
    try:
        from shapefuzz.campaign.workers import import_plugins  # lazy: keeps --help at click alone

        import_plugins(plugins)  # before the generator settings: a plugin may add op families
    except ImportError as e:
        raise BadInput(f"--plugin: cannot import {e.name or plugins} ({e}); check PYTHONPATH") from None
    try:
        from shapefuzz.strategies.settings import GenSettings  # lazy: keeps --help at click alone

        gen = GenSettings(families=tuple(families), max_ops=max_ops)
    except ValueError as e:
        raise BadInput(str(e)) from None
    opts = FuzzOptions(tuple(targets), budget, max_examples, seed, workers or os.cpu_count() or 1,
                       Path(out), gen, _parse_torch_config(torch_config), timeout, shrink_budget,
                       not no_confirm, quiet, _known(known_files), strict, memory_mb, tuple(plugins),
                       database, progress_log)
    from shapefuzz.campaign.baseline_cache import default_path  # lazy: keeps --help at click alone
    from shapefuzz.repro.ab import baseline_from_flags  # lazy: keeps --help at click alone

    cache = None if no_baseline_cache else Path(baseline_cache) if baseline_cache else default_path()
    opts = dataclasses.replace(opts, baseline=baseline_from_flags(baseline_python, baseline_env), force=force,
                               baseline_cache=cache,
                               coverage_feedback=coverage_feedback, configs_per_program=rotate,
                               command=" ".join(["shapefuzz", *map(_quote, sys.argv[1:])]))
    sys.exit(run_fuzz(opts))  # a bad saved state or --database raises BadInput


def _per_program(text: str) -> int | None:
    """--configs-per-program: a count of configs, or None for all (Note [config rotation])."""
    if text == "all":
        return None
    if not text.isdigit():
        raise BadInput(f"--configs-per-program {text}: expected a whole number (0 or more) or 'all'")
    return int(text)


def _known(files):
    from shapefuzz.cases.known import load_known  # lazy: keeps --help at click alone

    return load_known(tuple(files))


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--max-elements", type=int, default=1_000_000, show_default=True,
              help="Refuse cases whose inputs or integers could size a tensor past this.")
@click.option("--record", is_flag=True,
              help="Write into each case.json whether it reproduces on this torch release (its "
                   "`versions`), so replays on this release expect that result from then on.")
def replay(paths, max_elements, record):
    """Replay case folders or case.json files; exit 0 when each behaves as recorded (for this
    torch release, when the case records it; else as its status says)."""
    from shapefuzz.cases.corpus import load_case, size_problem  # lazy: keeps --help at click alone

    cases = []
    for p in paths:
        found = sorted(Path(p).rglob("case.json")) if Path(p).is_dir() and not (Path(p) / "case.json").exists() else [p]
        if not found:
            raise BadInput(f"{p}: no case.json under this folder")
        cases += [load_case(x) for x in found]
    for c in cases:  # refused before anything runs: a verdict, not an allocation
        why = size_problem(c, max_elements)
        if why:
            raise BadInput(f"{c.path}: refused: {why}")
    import warnings

    warnings.filterwarnings("ignore")
    from shapefuzz.cases.replay import replay_case  # lazy: keeps --help at click alone

    bad = 0
    for c in cases:
        r = replay_case(c)
        state = "reproduces" if r.reproduced else "does not reproduce"
        mark = "ok  " if r.as_recorded else "DIFF"
        bad += not r.as_recorded
        click.echo(f"{mark} {c.path}: [{c.status}] {c.finding.signature} {state}")
        if record:
            from shapefuzz.cases.corpus import record_version  # lazy: keeps --help at click alone

            click.echo(f"     recorded: {record_version(Path(c.path), r.reproduced)}")
    sys.exit(1 if bad and not record else 0)


@cli.command()
def systems():
    """List every system, the configs it runs by default, and what each named config switches."""
    from shapefuzz.systems import (  # lazy: keeps --help at click alone
        REGISTRY,
        targets_for,
        unavailable,
    )
    from shapefuzz.systems.configs import default_names  # lazy: keeps --help at click alone

    every = [(s, c) for s, configs in REGISTRY.items() for c in configs]
    gone = {(k.system, k.config): k.reason for k in unavailable(every)}  # Note [torch names]
    click.echo("a campaign without --system runs: " + ", ".join(f"{s} {c}" for s, c in targets_for()))
    for s, configs in REGISTRY.items():
        click.echo(f"{s} (runs by default: {', '.join(default_names(s))})")
        for c in configs.values():
            opt_in = " [opt-in: only when named]" if c.opt_in else ""
            why = f" [unavailable: {gone[s, c.name]}; a campaign skips it]" if (s, c.name) in gone else ""
            click.echo(f"  {c.name:<34} {c.switches}{opt_in}{why}")


@cli.command()
@click.argument("folders", nargs=-1, type=click.Path())
@click.option("--merge", is_flag=True,
              help="Merge the campaigns in FOLDERS (e.g. the machines sharing one --database) "
                   "into one report in --out: findings once per signature, counters summed.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="With --merge: the folder for the merged report.json/md/html.")
def report(folders, merge, out):
    """Re-render report.md and report.html of a campaign folder from its report.json, or
    (--merge DIR [DIR ...] --out MERGED) write one report of several campaigns. Exit 0 when the
    report is written (it judges no finding: the campaigns' exit codes did), 2 on bad input."""
    if merge:
        if out is None:
            raise BadInput("--merge needs --out MERGED, the folder for the merged report")
        from shapefuzz.report.merge import write_merged  # lazy: keeps --help at click alone

        written = write_merged(folders, out)
    else:
        if out is not None:
            raise BadInput(f"--out {out} is for --merge; `shapefuzz report FOLDER` re-renders in FOLDER")
        if len(folders) != 1:
            raise BadInput(f"report: give one campaign folder (got {len(folders)}), or "
                           "--merge DIR [DIR ...] --out MERGED")
        from shapefuzz.report import rerender  # lazy: keeps --help at click alone

        written = rerender(Path(folders[0]))
    click.echo(f"{written / 'report.md'}\n{written / 'report.html'}")


@cli.command()
@click.argument("case", type=click.Path())
@click.option("--corpus", default="corpus", show_default=True, type=click.Path(file_okay=False),
              help="The corpus folder the test suite replays.")
@click.option("--name", default="", help="Folder name in the corpus (default: the case folder's).")
@click.option("--status", default="bug", show_default=True,
              type=click.Choice(["bug", "fixed", "known-upstream"]))
@click.option("--upstream", default="", help="Upstream issue / torch version (known-upstream cases).")
@click.option("--force", is_flag=True, help="Overwrite a corpus case of the same name.")
def promote(case, corpus, name, status, upstream, force):
    """Copy a finding's case folder into the corpus, so the test suite replays it."""
    from shapefuzz.cases.promote import promote_case  # lazy: keeps --help at click alone

    dest = promote_case(case, corpus, name, status, upstream, force)
    click.echo(f"promoted to {dest} (status {status}); `shapefuzz replay {Path(dest).parent}` replays it"
               + ("; `pytest tests/test_corpus.py` too" if Path(corpus).resolve() == Path("corpus").resolve() else ""))


@cli.group()
def known() -> None:
    """Known upstream issues (shapefuzz/cases/known_issues.json and --known files)."""


@known.command("check")
@click.option("--known", "known_files", multiple=True, type=click.Path(dir_okay=False),
              help="Extra known-issues JSON file (repeatable); --write writes into these.")
@click.option("--no-bundled", is_flag=True,
              help="Check only the --known files, not shapefuzz/cases/known_issues.json (to update "
                   "the bundled list, pass it as --known with --no-bundled --write).")
@click.option("--write", is_flag=True,
              help="Write this torch's release into each --known file: into an entry's seen_in "
                   "when its repro reproduces, as its fixed_in when it is the first release seen fixed.")
@click.option("--root", default=".", show_default=True, type=click.Path(file_okay=False),
              help="The folder the entries' case paths are relative to (the repository).")
def known_check(known_files, no_bundled, write, root):
    """Re-run each known entry's repro.py under this torch (torch.__version__) and print its
    status: reproduces, fixed here, regressed (its fixed_in is at or before this version and it
    reproduces again), no case, or what went wrong running the repro.

    Exit 1 when an entry changed status relative to its file (fixed where the file says it
    reproduces, reproducing where the file says fixed, or a repro that is missing or exits
    neither 0 nor 1), so CI notices; else 0. A release the file does not list yet is no change:
    --write records it."""
    import torch

    from shapefuzz.cases.known import (  # lazy: keeps --help at click alone
        check_known,
        load_entries,
        load_file,
        write_entries,
    )

    if write and not known_files:
        raise BadInput("--write writes into the --known files; give one (the bundled list: "
                       "--no-bundled --known shapefuzz/cases/known_issues.json)")
    files = {p: load_file(Path(p)) for p in known_files}
    version = torch.__version__
    changed = False
    for where, entries in ([] if no_bundled else [("bundled", load_entries())]) + list(files.items()):
        results = check_known(entries, Path(root), _run_repro, version)
        for c in results:
            changed |= c.changed
            mark = "  CHANGED" if c.changed else ""
            click.echo(f"{c.status:>20}  {c.entry.case or '-'}  [{c.entry.upstream or 'no upstream issue'}]  "
                       f"{c.entry.signature}{mark}")
        if write and where in files:
            write_entries(Path(where), [c.updated for c in results])
    click.echo(f"torch {version}: {'an entry changed status' if changed else 'every entry as its file says'}")
    sys.exit(1 if changed else 0)


def _run_repro(path: Path) -> int:
    """A repro.py's exit code under this interpreter; -1 when it runs past 600 s."""
    import subprocess

    try:
        return subprocess.run([sys.executable, str(path)], capture_output=True, timeout=600).returncode
    except subprocess.TimeoutExpired:
        return -1


@cli.command()
@click.argument("case")
def issue(case):
    """Print a GitHub issue draft in PyTorch's bug-report form for CASE, a finding folder
    (case.json + repro.py): a title, the bug, repro.py inline, expected vs actual (what repro.py
    prints when run now, with this interpreter, 120 s at most) and the versions.

    Exit 0 with the draft; 1 when repro.py does not reproduce on this torch (no draft: it would
    report a bug this torch may not have); 2 when CASE is not a finding folder."""
    from shapefuzz.report.issue import draft_issue, run_repro  # lazy: keeps --help at click alone

    run = run_repro(Path(case) / "repro.py") if (Path(case) / "repro.py").is_file() else None
    if run is not None and not run.reproduces:
        how = "timed out" if run.returncode is None else f"exited {run.returncode}"
        click.echo(f"shapefuzz: {case}: repro.py {how}, it does not reproduce on torch "
                   f"{_torch_version()}; no issue draft", err=True)
        sys.exit(1)
    click.echo(draft_issue(case, run).text(), nl=False)


def _torch_version() -> str:
    import torch

    return torch.__version__


def main(argv: list[str] | None = None) -> None:
    if argv is None and sys.argv[1:2] == ["fuzz"]:
        try:
            _main(argv)
        except SystemExit as e:
            _exit_now(e.code)
        _exit_now(0)
    _main(argv)


def _exit_now(code) -> None:
    """`shapefuzz fuzz` run as a program ends here, without the interpreter's teardown: with
    torch loaded that took 4-6 s on the loaded 2-core machine, past --budget (Note [wall
    budget]). Every file the campaign writes is closed by now; stdout and stderr are flushed."""
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


def _main(argv: list[str] | None) -> None:
    try:
        cli.main(args=argv, standalone_mode=False, prog_name="shapefuzz")
    except BadInput as e:
        click.echo(f"shapefuzz: error: {e}", err=True)
        sys.exit(2)
    except click.UsageError as e:
        click.echo(f"shapefuzz: error: {e.format_message()} (see shapefuzz --help)", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("shapefuzz: aborted", err=True)
        sys.exit(130)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)

