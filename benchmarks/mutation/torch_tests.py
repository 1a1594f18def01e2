"""Torch's own tests as the anchor of the mutation score (issue 30 item 3): the same mutants,
each run against test files of a PyTorch source checkout (test/test_dynamic_shapes.py,
test/test_sympy_utils.py ...). Torch wheels ship no tests and the project does not copy them: the
user points at a checkout of the same version.

A mutant is killed when a test that passes on the unmodified interpreter fails under it (a test
that already fails unmodified says nothing). Failures are read from pytest's JUnit XML, a data
file: nothing from it is evaluated."""

from __future__ import annotations

import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from mutation.apply import clean_env, mutant_env, write_patch
from mutation.mutants import Mutant

__all__ = ["TestRun", "TorchTests", "failed_tests"]


@dataclass(frozen=True, slots=True)
class TestRun:
    """One pytest run of the chosen test files: the failing test ids, or why it did not run."""

    failed: frozenset[str]
    ran: int
    seconds: float
    error: str = ""  # a timeout or a run whose report is missing: no verdict

    def to_json(self) -> dict:
        return {"failed": sorted(self.failed), "ran": self.ran, "seconds": round(self.seconds, 1),
                "error": self.error}


def failed_tests(junit: Path) -> tuple[frozenset[str], int]:
    """(ids of the failed or errored test cases, how many ran) from a JUnit XML report."""
    root = ET.parse(junit).getroot()
    failed, ran = set(), 0
    for case in root.iter("testcase"):
        ran += 1
        if case.find("failure") is not None or case.find("error") is not None:
            failed.add(f"{case.get('classname', '')}::{case.get('name', '')}")
    return frozenset(failed), ran


@dataclass(frozen=True, slots=True)
class TorchTests:
    files: tuple[Path, ...]
    work: Path
    select: str = ""  # pytest -k expression
    timeout_s: float = 1800.0
    python: str = sys.executable

    def run(self, env: dict, name: str) -> TestRun:
        junit = self.work / "torch-tests" / f"{name}.xml"
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit.unlink(missing_ok=True)
        cmd = [self.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}",
               *map(str, self.files), *(["-k", self.select] if self.select else [])]
        t0 = time.monotonic()
        try:
            subprocess.run(cmd, env=env, capture_output=True, timeout=self.timeout_s, check=False,
                           cwd=self.files[0].parent)
        except subprocess.TimeoutExpired:
            return TestRun(frozenset(), 0, time.monotonic() - t0, f"timeout after {self.timeout_s:.0f} s")
        if not junit.exists():
            return TestRun(frozenset(), 0, time.monotonic() - t0, "pytest wrote no report (a crash at start-up?)")
        failed, ran = failed_tests(junit)
        return TestRun(failed, ran, time.monotonic() - t0)

    def baseline(self, env: dict) -> TestRun:
        return self.run(clean_env(env), "unmodified")

    def judge(self, m: Mutant, env: dict, baseline: TestRun) -> dict:
        """The row of `m`: killed when a test passing unmodified fails under the mutant."""
        patch = write_patch(m, self.work / "patches" / m.id)
        r = self.run(mutant_env(patch, clean_env(env)), m.id)
        newly = sorted(r.failed - baseline.failed)
        return {"id": m.id, "operator": m.operator.value, "path": m.path, "line": m.line,
                "killed": bool(newly) and not r.error, "newly_failed": newly[:20], **r.to_json()}
