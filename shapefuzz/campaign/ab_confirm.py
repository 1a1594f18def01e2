"""A/B campaigns' second test of a pre-existing finding: its repro.py under the baseline
(Note [pre-existing at confirmation])."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shapefuzz.cases.corpus import atomic_write, load_case
from shapefuzz.oracles.ab import ORACLE
from shapefuzz.repro.ab import Baseline
from shapefuzz.repro.trial import symptom

__all__ = ["BASELINE_CONFIRM", "BaselineConfirm", "baseline_shows", "mark_rows"]

#: what the baseline's run of a confirmed finding's repro.py said ("exit N" first)
BASELINE_CONFIRM = "confirm-baseline.txt"


@dataclass(frozen=True, slots=True)
class BaselineConfirm:
    """A campaign's confirmation in A/B mode (Note [pre-existing at confirmation]).

    Note [pre-existing at confirmation]: the A/B oracle marks a one-torch finding pre-existing
    when the baseline's observation of the same program shows it too (Note [pre-existing
    findings], oracles/ab.py). What it cannot see (an answer that differs from run to run, a
    finding whose inputs the baseline's observation did not replay) is settled by the finding's
    issue form: repro.py needs only torch, so it runs under the baseline's interpreter and
    environment too, started beside the candidate's confirmation (its torch import overlaps);
    a repro.py that also exits 1 there is a bug of both builds, pre-existing. An A/B finding's
    repro.py runs both sides itself, and one already marked needs no second opinion; neither
    starts the baseline. The verdict is written to BASELINE_CONFIRM in the case folder (removed
    first: a case confirmed again is judged again), which the report reads (`baseline_shows`)."""

    baseline: Baseline
    confirm: Callable[[Path, float], bool]

    def __call__(self, case_dir: Path, timeout_s: float) -> bool:
        import tempfile
        import time

        case_dir = Path(case_dir)
        (case_dir / BASELINE_CONFIRM).unlink(missing_ok=True)
        if not _needs_baseline(case_dir):
            return self.confirm(case_dir, timeout_s)
        end = time.monotonic() + timeout_s
        with tempfile.TemporaryFile("w+") as out:  # a file, not a pipe: nobody reads it meanwhile
            proc = subprocess.Popen([self.baseline.python, str(case_dir / "repro.py")],
                                    env=self.baseline.environ(os.environ), stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT)
            try:
                ok = self.confirm(case_dir, timeout_s)
                if ok:
                    _record_baseline(proc, out, case_dir, end - time.monotonic())
                return ok
            finally:
                if proc.poll() is None:  # not needed any more, or out of time
                    proc.kill()
                    proc.wait()


def _record_baseline(proc: subprocess.Popen, out, case_dir: Path, left_s: float) -> None:
    """The baseline's verdict in BASELINE_CONFIRM; nothing when it did not finish in time (no
    verdict: not pre-existing by this test)."""
    try:
        proc.wait(timeout=max(0.5, left_s))
    except subprocess.TimeoutExpired:
        return
    out.seek(0)
    atomic_write(case_dir / BASELINE_CONFIRM, f"exit {proc.returncode}\n{out.read()[-4000:]}")


def _needs_baseline(case_dir: Path) -> bool:
    """A one-torch finding not already marked pre-existing (an unreadable case: no)."""
    try:
        f = load_case(case_dir).finding
    except Exception:  # the confirmation itself reports what is wrong with the case
        return False
    return f.oracle != ORACLE and not f.pre_existing


def baseline_shows(case_dir: str | Path) -> bool:
    """Whether the finding's repro.py exited 1 under the baseline with the symptom it showed under
    the candidate (its BUG line, repro/trial.symptom: an exit 1 from an unrelated exception is
    not the same bug), Note [pre-existing at confirmation]; False when it was not run."""
    try:
        theirs = (Path(case_dir) / BASELINE_CONFIRM).read_text()
        mine = (Path(case_dir) / "confirm.txt").read_text()
    except OSError:
        return False
    return theirs.startswith("exit 1\n") and symptom(theirs) == symptom(mine)


def mark_rows(rows: list[dict]) -> None:
    """report.json's findings: the ones the baseline's interpreter confirmed too are marked
    pre_existing; `pre_existing_by` says which test found each one pre-existing. A known one
    that is not is a difference of the change (Note [known in A/B]).

    Note [known in A/B]: a finding of a known upstream issue does not fail a one-torch campaign:
    torch has that bug. In an A/B campaign the question is the change, so a known issue's
    finding on a program where the baseline does not show it (its observation does not, and
    its repro.py, confirmed cold under both interpreters, exits 1 under the candidate only) is
    the change making that bug happen where it did not: it is reported new (`known` false,
    `known_note` saying which issue and why) and fails the run. Unmodified against unmodified,
    every known finding is pre-existing (90 s A/B campaigns, seeds 0-2)."""
    for row in rows:
        if row.get("pre_existing"):
            row["pre_existing_by"] = "the baseline's observation of the program shows it too"
        elif baseline_shows(row.get("case_dir", "")):
            row["pre_existing"] = True
            row["pre_existing_by"] = f"its repro.py exits 1 under the baseline too ({BASELINE_CONFIRM})"
        elif row.get("known"):
            row["known"] = False
            row["known_note"] = (f"{row.get('known_note', '')}; but the baseline does not show it on this program: "
                                 "the change makes it happen here (Note [known in A/B])")
