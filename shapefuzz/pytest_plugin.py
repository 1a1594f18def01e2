"""pytest plugin (registered through the pytest11 entry point): shapefuzz in any project's suite.

    pytest --shapefuzz-corpus DIR          # one test per case.json under DIR, replayed
    pytest --shapefuzz-budget SECONDS      # one test: a budgeted campaign; findings fail it

A corpus case must behave as its case file records (`bug` reproduces, `fixed` does not;
`known-upstream` runs as xfail(strict=True), so an upstream fix turns the run red). A failure
prints the commands that reproduce it. Without these options the plugin adds nothing, and it
imports neither torch nor the systems until a shapefuzz test runs."""

from __future__ import annotations

import dataclasses
import shlex
import sys
import tempfile
import time
from pathlib import Path

import pytest

from shapefuzz import BadInput

__all__ = ["CorpusItem", "FuzzItem"]


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("shapefuzz", "shapefuzz: symbolic-shape fuzzing")
    g.addoption("--shapefuzz-corpus", action="append", default=[], metavar="DIR",
                help="Replay every shapefuzz case (case.json) under DIR as a test (repeatable).")
    g.addoption("--shapefuzz-budget", type=float, default=None, metavar="SECONDS",
                help="Run a shapefuzz campaign of this many seconds as one test.")
    g.addoption("--shapefuzz-system", action="append", default=[], metavar="SYSTEM",
                help="System for --shapefuzz-budget (repeatable; default: make_fx, export and torch-env).")
    g.addoption("--shapefuzz-config", action="append", default=[], metavar="CONFIG",
                help="Named config for --shapefuzz-budget (repeatable, or 'all'; default: each "
                     "system's default configs, as `shapefuzz fuzz`).")
    g.addoption("--shapefuzz-max-examples", type=int, default=None, metavar="N",
                help="Stop the campaign after N programs (deterministic with a fixed seed).")
    g.addoption("--shapefuzz-seed", type=int, default=0, metavar="N", help="Campaign seed (default 0).")
    g.addoption("--shapefuzz-workers", type=int, default=1, metavar="N", help="Campaign workers (default 1).")
    g.addoption("--shapefuzz-strict", action="store_true",
                help="Known upstream issues fail the campaign test too.")
    g.addoption("--shapefuzz-out", default=None, metavar="DIR",
                help="Campaign output folder (default: a new temporary folder).")
    g.addoption("--shapefuzz-baseline-python", default=None, metavar="PATH",
                help="A/B campaign: the baseline torch's interpreter (shapefuzz fuzz --baseline-python).")
    g.addoption("--shapefuzz-baseline-env", action="append", default=[], metavar="KEY=VALUE",
                help="A/B campaign: the baseline's environment change (empty VALUE unsets; repeatable).")


class ShapefuzzFailure(Exception):
    """A shapefuzz test failed; the message is the whole report (no traceback)."""


@pytest.hookimpl(tryfirst=True)  # before -k / -m deselection sees the items
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    for root in config.getoption("shapefuzz_corpus"):
        found = sorted(Path(root).rglob("case.json"))
        if not found:
            raise pytest.UsageError(f"--shapefuzz-corpus {root}: no case.json under this folder")
        for p in found:
            items.append(CorpusItem.from_parent(session, name=f"shapefuzz-corpus[{p.parent.name}]",
                                                path=p, case_path=p))
    budget = config.getoption("shapefuzz_budget")
    if budget is not None:
        if budget <= 0:
            raise pytest.UsageError(f"--shapefuzz-budget {budget}: must be a positive number of seconds")
        items.append(FuzzItem.from_parent(session, name=f"shapefuzz-fuzz[{budget:g}s]"))


class _Item(pytest.Item):
    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ShapefuzzFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, self.name


class CorpusItem(_Item):
    def __init__(self, *, case_path: Path, **kw):
        super().__init__(**kw)
        self.case_path = Path(case_path)
        from shapefuzz.cases.corpus import CaseError, load_case  # lazy: loaded in every pytest run

        try:
            self.case = load_case(self.case_path)
        except CaseError as e:
            self.case = None
            self.load_error = str(e)
            return
        if self.case.status == "known-upstream":
            self.add_marker(pytest.mark.xfail(strict=True, reason=self.case.upstream or "known upstream bug"))

    def runtest(self) -> None:
        if self.case is None:
            raise ShapefuzzFailure(f"cannot load the case: {self.load_error}")
        from shapefuzz.cases.replay import replay_case  # lazy: loaded in every pytest run

        r = replay_case(self.case)
        d = self.case_path.parent
        how = (f"\n  signature: {self.case.finding.signature}\n  seen now: {list(r.signatures) or 'nothing'}"
               f"\n  reproduce: python {d / 'repro.py'}\n  replay:    shapefuzz replay {d}")
        if self.case.status == "known-upstream":
            if r.reproduced:
                raise ShapefuzzFailure(f"known upstream bug still reproduces (expected while it is open){how}")
            return  # fixed upstream: the strict xfail turns this pass into a failure
        if not r.as_recorded:
            what = ("the recorded bug no longer reproduces (fixed? set its status to \"fixed\")"
                    if self.case.status == "bug" else "a case recorded as fixed reproduces again (regression)")
            raise ShapefuzzFailure(f"{d.name}: {what}{how}")


class FuzzItem(_Item):
    def runtest(self) -> None:
        from shapefuzz.campaign.run import FuzzOptions, run_fuzz  # lazy: loaded in every pytest run
        from shapefuzz.cases.known import load_known  # lazy: loaded in every pytest run
        from shapefuzz.strategies.settings import GenSettings  # lazy: loaded in every pytest run
        from shapefuzz.systems import targets_for  # lazy: loaded in every pytest run

        opt = self.config.getoption
        try:  # the CLI's defaults: each system's default configs unless configs are named
            targets = targets_for(tuple(opt("shapefuzz_system")), tuple(opt("shapefuzz_config")))
        except BadInput as e:
            raise ShapefuzzFailure(f"--shapefuzz-system/--shapefuzz-config: {e}") from None
        out = Path(opt("shapefuzz_out") or tempfile.mkdtemp(prefix="shapefuzz-"))
        opts = FuzzOptions(targets=targets, budget_s=opt("shapefuzz_budget"),
                           max_examples=opt("shapefuzz_max_examples"), seed=opt("shapefuzz_seed"),
                           workers=opt("shapefuzz_workers"), out=out, gen=GenSettings(), torch_config=(),
                           timeout_s=60.0, shrink_budget_s=30.0, confirm=True, quiet=True,
                           known=load_known(), strict=opt("shapefuzz_strict"),
                           force=True,  # a rerun of the test replaces its own earlier campaign
                           command=" ".join(["pytest", *map(shlex.quote, sys.argv[1:])]))
        try:
            from shapefuzz.repro.ab import baseline_from_flags  # lazy: loaded in every pytest run

            opts = dataclasses.replace(opts, baseline=baseline_from_flags(
                opt("shapefuzz_baseline_python"), opt("shapefuzz_baseline_env")))
        except BadInput as e:
            raise ShapefuzzFailure(str(e)) from None
        try:
            if run_fuzz(opts, t0=time.monotonic()) == 0:  # the budget counts from this test's start
                return
        except BadInput as e:  # e.g. an A/B baseline that cannot import torch
            raise ShapefuzzFailure(str(e)) from None
        raise ShapefuzzFailure(_findings_text(out, opt("shapefuzz_strict")))


def _findings_text(out: Path, strict: bool) -> str:
    import json

    report = json.loads((out / "report.json").read_text())
    new = [f for f in report["findings"] if not f.get("known") or strict]
    lines = [(f"shapefuzz found {len(new)} finding(s) in {report['programs']} programs "
             f"(seed {report['seed']}); report: {out / 'report.md'}")]
    for f in new:
        lines += ["", f"[{f['severity']}] {f['summary']}", f"  signature: {f['signature']}"]
        lines += [f"  blame:     {f['blame']}"] if f.get("blame") else []
        lines += [f"  reproduce: python {f['case_dir']}/repro.py",
                  f"  replay:    shapefuzz replay {f['case_dir']}",
                  f"  keep it:   shapefuzz promote {f['case_dir']}"]
    return "\n".join(lines)
