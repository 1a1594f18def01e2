"""The reference ShapeEnv's own record against eager (issue 14): `shapefuzz fuzz --system ref
--config all` over five seeds, a fixed number of programs each, finds nothing. No torch system
runs, so every finding such a campaign could report (eager agreement, config differential,
the z3 verdicts, truth) is about ref itself."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROGRAMS = 60


@pytest.mark.parametrize("seed", range(5))
def test_ref_every_config_has_no_finding(seed, tmp_path):
    out = tmp_path / f"seed{seed}"
    cmd = [sys.executable, "-m", "shapefuzz", "fuzz", "--system", "ref", "--config", "all",
           "--seed", str(seed), "--max-examples", str(PROGRAMS), "--budget", "600",
           "--workers", "1", "--quiet", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    report = json.loads((out / "report.json").read_text())
    assert report["programs"] >= PROGRAMS, report["programs"]  # the budget did not cut it short
    found = [(f["signature"], f["summary"]) for f in report["findings"] + report["unconfirmed"]]
    assert done.returncode == 0 and not found, (done.returncode, found, done.stderr[-2000:])
