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
not the mutant."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from mutation.apply import clean_env, mutant_env

__all__ = ["BenchSettings", "Checked", "Mode", "ModeResult", "run_mode"]

#: confirmed findings whose repro is run both ways, per campaign (most campaigns have a few)
MAX_CHECKED = 12


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
    findings: int  # confirmed findings
    checked: tuple[Checked, ...]
    error: str = ""  # why the campaign gave no report

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
                "detected": self.detected, "detected_late": self.detected_late, "oracles": self.oracles,
                "checked": [{"signature": c.signature, "oracle": c.oracle, "mutant_exit": c.mutant_exit,
                             "clean_exit": c.clean_exit, "detects": c.detects, "late": c.late}
                            for c in self.checked]}


def _command(mode: Mode, out: Path, s: BenchSettings) -> list[str]:
    cmd = [s.python, "-m", "shapefuzz", "fuzz", "--budget", str(s.budget_s), "--seed", str(s.seed),
           "--workers", str(s.workers), "--quiet", "--out", str(out)]
    if mode is Mode.AB:  # an empty value unsets PYTHONPATH in the baseline (DESIGN.md contracts)
        cmd += ["--baseline-env", f"PYTHONPATH={clean_env(s.env).get('PYTHONPATH', '')}"]
        cmd += ["--baseline-cache", str(s.baseline_cache)] if s.baseline_cache else ["--no-baseline-cache"]
    return cmd


def repro_exit(python: str, case_dir: Path, env: dict, timeout_s: float) -> int | None:
    try:
        return subprocess.run([python, "repro.py"], cwd=case_dir, env=env, capture_output=True,
                              timeout=timeout_s, stdin=subprocess.DEVNULL).returncode
    except subprocess.TimeoutExpired:
        return None


def _checked(report: dict, out: Path, env: dict, s: BenchSettings) -> tuple[Checked, ...]:
    """Note [detected]: the confirmed findings, each repro.py run both ways (stops at the first
    that detects: one is enough, and each run imports torch)."""
    rows = [f for f in report.get("findings", []) if f.get("confirmed")][:MAX_CHECKED]
    rows += [f for f in report.get("unconfirmed", []) if f.get("confirm_timed_out")][:MAX_CHECKED]
    out_rows: list[Checked] = []
    for f in rows:
        case = Path(f["case_dir"])
        case = case if case.is_absolute() else out.parent / case
        c = Checked(f["signature"], f["oracle"], repro_exit(s.python, case, env, s.repro_timeout_s),
                    repro_exit(s.python, case, clean_env(s.env), s.repro_timeout_s),
                    not f.get("confirmed"))
        out_rows.append(c)
        if c.detects and not c.late:
            break
    return tuple(out_rows)


def _campaign(mode: Mode, out: Path, env: dict, s: BenchSettings) -> tuple[int | None, list[str]]:
    """(exit code, last line of its output); a finished campaign of an interrupted run is kept."""
    if (out / "report.json").exists():
        return None, ["finished before"]
    try:
        p = subprocess.run(_command(mode, out, s), env=env, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=s.budget_s * 3 + 600)
    except subprocess.TimeoutExpired:
        return None, ["the campaign did not end in 3x its budget + 600 s"]
    return p.returncode, (p.stderr or p.stdout).strip().splitlines()[-1:] or [""]


def run_mode(mode: Mode, patch_dir: Path, out: Path, s: BenchSettings) -> ModeResult:
    """One campaign of `mode` under the mutant in `patch_dir`, its findings checked."""
    env = mutant_env(patch_dir, s.env)
    t0 = time.monotonic()
    code, tail = _campaign(mode, out, env, s)
    elapsed = round(time.monotonic() - t0, 1)
    report_file = out / "report.json"
    if not report_file.exists():
        return ModeResult(mode, code, elapsed, 0, 0, (), f"no report.json: {tail[0][:300]}")
    report = json.loads(report_file.read_text())
    confirmed = sum(bool(f.get("confirmed")) for f in report.get("findings", []))
    return ModeResult(mode, code, elapsed, report.get("programs", 0), confirmed,
                      _checked(report, out, env, s))
