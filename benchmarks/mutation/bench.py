"""One counted mutant through the two campaigns of the score (issue 30 item 3):

- default: `shapefuzz fuzz --budget B --seed S --workers W --out DIR` with the mutant's patch
  folder on PYTHONPATH (what a developer runs on a patched torch);
- A/B: the same plus `--baseline-env PYTHONPATH=<the path without the folder>`: candidate the
  mutant, baseline the unmodified interpreter.

Note [detected]: a mutant is detected by a campaign when one of its confirmed findings has a
repro.py that exits 1 under the mutant and 0 without it, each run in its own interpreter with a
timeout. A finding whose confirmation the campaign cut off at its deadline (report.json's
`confirm_timed_out`, listed under "unconfirmed") is checked the same way and reported apart, as
detected late: the strict score counts only what the campaign itself confirmed. A finding whose
repro fails both ways is a bug of unmodified torch the campaign met on the way (pre-existing),
not the mutant.

Note [crashed campaign]: a campaign that gives no report.json under a mutant either was crashed
by the mutant (the fuzzer met a torch it could not drive: the mutant survived, and the row says
why) or could not have run at all (an interpreter whose shapefuzz and strategies come from two
checkouts, a missing package). The second is not a verdict on the mutant and must not be scored
as a survivor (one such row per side once passed for a "gained" mutant in the before/after
comparison). So after a crashed campaign a short default campaign runs without the mutant (the
default one: an A/B campaign without a mutant has no baseline to differ from, and refuses to
run): when that gives no report either, the bench stops with BrokenSetup and writes no row. (A
mutant of _refs._broadcast_shapes crashes the generator itself, which asks torch whether two
shapes broadcast: a survivor, with its error.)"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

from mutation.apply import clean_env, mutant_env
from mutation.watch import Seen, Watch, known_signatures

__all__ = ["BenchSettings", "BrokenSetup", "Checked", "Mode", "ModeResult", "run_mode"]

#: confirmed findings whose repro is run both ways, per campaign (most campaigns have a few)
MAX_CHECKED = 12
#: seconds between two looks at a running campaign's finding folders (Note [early stop])
POLL_S = 1.0
#: budget of the campaign without the mutant that tells a crash from a broken set-up
CLEAN_CHECK_BUDGET_S = 10.0


class BrokenSetup(Exception):
    """A campaign gives no report even without the mutant (Note [crashed campaign])."""


class Mode(Enum):
    DEFAULT = "default"
    AB = "ab"


@dataclass(frozen=True, slots=True)
class BenchSettings:
    budget_s: float
    seed: int
    workers: int
    repro_timeout_s: float = 120.0
    python: str = sys.executable
    env: dict = field(default_factory=dict)  # the environment without any mutant
    #: A/B: the baseline cache every mutant's campaign shares (Note [baseline cache]): the
    #: baseline is the same unmodified torch for all of them, as for a patch author's reruns
    baseline_cache: Path | None = None
    #: stop a campaign at its first detection (Note [early stop]); the verdict stays the same
    early_stop: bool = True


@dataclass(frozen=True, slots=True)
class Checked:
    """One confirmed finding, its repro.py run under the mutant and without it."""
    signature: str
    oracle: str
    mutant_exit: int | None  # None: timed out
    clean_exit: int | None
    late: bool = False  # the campaign's own confirmation was cut off by its budget

    @property
    def detects(self) -> bool:
        return self.mutant_exit == 1 and self.clean_exit == 0


@dataclass(frozen=True, slots=True)
class ModeResult:
    mode: Mode
    exit_code: int | None  # the campaign's (None: it timed out)
    elapsed_s: float
    programs: int
    findings: int  # confirmed findings (stopped early: the one its watcher checked)
    checked: tuple[Checked, ...]
    error: str = ""  # why the campaign gave no report
    stopped_early: bool = False  # stopped at its first detection (Note [early stop])

    @property
    def detected(self) -> bool:
        return any(c.detects and not c.late for c in self.checked)

    @property
    def detected_late(self) -> bool:
        return any(c.detects for c in self.checked)

    @property
    def oracles(self) -> list[str]:
        return sorted({c.oracle for c in self.checked if c.detects and not c.late})

    def to_json(self) -> dict:
        return {"mode": self.mode.value, "exit_code": self.exit_code, "elapsed_s": self.elapsed_s,
                "programs": self.programs, "findings": self.findings, "error": self.error,
                "stopped_early": self.stopped_early,
                "detected": self.detected, "detected_late": self.detected_late, "oracles": self.oracles,
                "checked": [{"signature": c.signature, "oracle": c.oracle, "mutant_exit": c.mutant_exit,
                             "clean_exit": c.clean_exit, "detects": c.detects, "late": c.late}
                            for c in self.checked]}


def _command(mode: Mode, out: Path, s: BenchSettings) -> list[str]:
    cmd = [s.python, "-m", "shapefuzz", "fuzz", "--budget", str(s.budget_s), "--seed", str(s.seed),
           "--workers", str(s.workers), "--quiet", "--out", str(out)]
    if mode is Mode.AB:  # an empty value unsets PYTHONPATH in the baseline (DESIGN.md contracts)
        cmd += ["--baseline-env", f"PYTHONPATH={clean_env(s.env).get('PYTHONPATH', '')}"]
        if _fuzz_has(s.python, "--baseline-cache"):  # an older shapefuzz (the before side) has none
            cmd += ["--baseline-cache", str(s.baseline_cache)] if s.baseline_cache else ["--no-baseline-cache"]
    return cmd


@functools.cache
def _fuzz_has(python: str, option: str) -> bool:
    """Whether that interpreter's `shapefuzz fuzz` knows `option` (read from its --help)."""
    p = subprocess.run([python, "-m", "shapefuzz", "fuzz", "--help"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=120, cwd="/")
    return option in p.stdout


def repro_exit(python: str, case_dir: Path, env: dict, timeout_s: float) -> int | None:
    try:
        return subprocess.run([python, "repro.py"], cwd=case_dir, env=env, capture_output=True,
                              timeout=timeout_s, stdin=subprocess.DEVNULL).returncode
    except subprocess.TimeoutExpired:
        return None


def _checked(report: dict, out: Path, env: dict, s: BenchSettings, watch: Watch) -> tuple[Checked, ...]:
    """Note [detected]: the confirmed findings, each repro.py run both ways (stops at the first
    that detects: one is enough, and each run imports torch); a row the watcher checked during
    the campaign (Note [early stop]) is reused."""
    rows = [f for f in report.get("findings", []) if f.get("confirmed")][:MAX_CHECKED]
    rows += [f for f in report.get("unconfirmed", []) if f.get("confirm_timed_out")][:MAX_CHECKED]
    out_rows: list[Checked] = []
    for f in rows:
        case = Path(f["case_dir"])
        case = case if case.is_absolute() else out.parent / case
        seen = watch.checked(case)
        exits = (seen.mutant_exit, seen.clean_exit) if seen else _both_ways(case, env, s)
        c = Checked(f["signature"], f["oracle"], *exits, not f.get("confirmed"))
        out_rows.append(c)
        if c.detects and not c.late:
            break
    return tuple(out_rows)


def _both_ways(case: Path, env: dict, s: BenchSettings) -> tuple[int | None, int | None]:
    return (repro_exit(s.python, case, env, s.repro_timeout_s),
            repro_exit(s.python, case, clean_env(s.env), s.repro_timeout_s))


@dataclass(frozen=True, slots=True)
class Ran:
    """How one campaign process ended."""
    exit_code: int | None
    tail: str  # the last line of its output
    early: Seen | None = None  # the detection it was stopped at (Note [early stop])


def _campaign(mode: Mode, out: Path, env: dict, s: BenchSettings, watch: Watch) -> Ran:
    """The campaign, watched (Note [early stop]); a finished campaign of an interrupted run is
    kept."""
    if (out / "report.json").exists():
        return Ran(None, "finished before")
    out.parent.mkdir(parents=True, exist_ok=True)
    log = out.parent / f"{mode.value}.log"
    t0 = time.monotonic()
    with log.open("w") as sink:  # its own session: stopping it stops its workers too
        p = subprocess.Popen(_command(mode, out, s), env=env, stdout=sink, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True,
                             cwd=out.parent)  # not a checkout's folder: `-m shapefuzz` would import it
        while p.poll() is None:
            time.sleep(POLL_S)
            hit = watch.poll() if s.early_stop else None
            if hit is not None and time.monotonic() - t0 <= s.budget_s:
                _stop(p)
                return Ran(None, "stopped at its first detection", hit)
            if time.monotonic() - t0 > s.budget_s * 3 + 600:
                _stop(p)
                return Ran(None, "the campaign did not end in 3x its budget + 600 s")
    lines = log.read_text(errors="replace").strip().splitlines()
    return Ran(p.returncode, lines[-1] if lines else "")


def _reports_without_mutant(out: Path, s: BenchSettings) -> bool:
    """Note [crashed campaign]: whether a short default campaign without the mutant gives a report."""
    clean = out.parent / "default-without-mutant"
    if (clean / "report.json").exists():  # the other mode's check ran it already
        return True
    short = replace(s, budget_s=CLEAN_CHECK_BUDGET_S, baseline_cache=None)
    with (out.parent / "default-without-mutant.log").open("w") as sink:
        try:
            subprocess.run(_command(Mode.DEFAULT, clean, short), env=clean_env(s.env), stdout=sink, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, cwd=out.parent, timeout=CLEAN_CHECK_BUDGET_S * 3 + 300)
        except subprocess.TimeoutExpired:
            return False
    return (clean / "report.json").exists()


def _stop(p: subprocess.Popen) -> None:
    for sig, wait_s in ((signal.SIGTERM, 15), (signal.SIGKILL, 15)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _programs_so_far(out: Path) -> int:
    """Programs of a stopped campaign, from its checkpoint (written each second)."""
    try:
        return int(json.loads((out / "campaign-state.json").read_text())["stats"]["programs"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def run_mode(mode: Mode, patch_dir: Path, out: Path, s: BenchSettings) -> ModeResult:
    """One campaign of `mode` under the mutant in `patch_dir`, its findings checked."""
    env = mutant_env(patch_dir, s.env)
    watch = Watch(out, lambda case: _both_ways(case, env, s), known_signatures())
    t0 = time.monotonic()
    ran = _campaign(mode, out, env, s, watch)
    elapsed = round(time.monotonic() - t0, 1)
    if ran.early is not None:
        hit = ran.early
        return ModeResult(mode, None, elapsed, _programs_so_far(out), 1,
                          (Checked(hit.signature, hit.oracle, hit.mutant_exit, hit.clean_exit),),
                          stopped_early=True)
    report_file = out / "report.json"
    if not report_file.exists():
        if not _reports_without_mutant(out, s):
            raise BrokenSetup(f"the {mode.value} campaign in {out} gave no report, and neither does it without the "
                              f"mutant: check the interpreter {s.python} ({ran.tail[:200]})")
        return ModeResult(mode, ran.exit_code, elapsed, 0, 0, (), f"no report.json: {ran.tail[:300]}")
    report = json.loads(report_file.read_text())
    confirmed = sum(bool(f.get("confirmed")) for f in report.get("findings", []))
    return ModeResult(mode, ran.exit_code, elapsed, report.get("programs", 0), confirmed,
                      _checked(report, out, env, s, watch))
