"""The performance oracle in whole campaigns (Note [scaling family]): each slowdown planted in
ShapeEnv (tests/fixtures/slow_plants.py, loaded in every worker and repro.py by a
sitecustomize.py on PYTHONPATH, as a patch author's change is) is reported as a confirmed
performance finding, one torch alone and in an A/B campaign against the same torch without the
plant, and the same one-torch campaign on unmodified torch reports none. (The 300 s campaigns on
seeds 0-2 that show no performance finding on unmodified torch are in benchmarks/README.md.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
sys.path.insert(0, str(FIXTURES))
import slow_plants  # noqa: E402

PLANTS = ("quadratic", "assert-blowup")
ARGS = ["--system", "make_fx", "--budget", "240", "--seed", "0", "--workers", "2", "--quiet"]


def _fuzz(out: Path, plant: str | None, *extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if plant:
        site = out.parent / f"site-{plant}"
        site.mkdir(exist_ok=True)
        (site / "sitecustomize.py").write_text(slow_plants.sitecustomize_source(plant))
        env["PYTHONPATH"] = os.pathsep.join([str(site), str(FIXTURES)])
    r = subprocess.run([sys.executable, "-m", "shapefuzz", "fuzz", *ARGS, *extra, "--out", str(out)],
                       env=env, capture_output=True, text=True, timeout=1200, cwd=out.parent)
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stdout + r.stderr
    return json.loads((out / "report.json").read_text())


def _performance(report: dict) -> list[dict]:
    """Confirmed findings of the performance oracle (in A/B, one-torch findings of the candidate
    are reported as such, or as regressions naming the oracle)."""
    return [f for f in report["findings"] if f["oracle"] == "performance" or ":performance:" in f["signature"]]


@pytest.mark.parametrize("plant", PLANTS)
def test_one_torch_campaign_finds_the_planted_slowdown(plant, tmp_path):
    found = _performance(_fuzz(tmp_path / "run", plant))
    assert found, f"no confirmed performance finding under the {plant} plant"
    assert all(f["confirmed"] and not f["known"] for f in found)


@pytest.mark.parametrize("plant", PLANTS)
def test_ab_campaign_finds_the_planted_slowdown(plant, tmp_path):
    # the baseline: this interpreter with PYTHONPATH unset, that is, without the plant
    report = _fuzz(tmp_path / "run", plant, "--baseline-env", "PYTHONPATH=")
    found = _performance(report)
    assert found, f"no confirmed performance finding in A/B under the {plant} plant"
    assert not any(f.get("pre_existing") for f in found), found  # the baseline does not show it


def test_unmodified_torch_gives_no_performance_finding(tmp_path):
    report = _fuzz(tmp_path / "run", None)
    assert not _performance(report) and not [u for u in report.get("unconfirmed", [])
                                             if u["oracle"] == "performance"]
