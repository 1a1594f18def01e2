"""The performance oracle in whole campaigns (Note [scaling family]): each slowdown planted in
ShapeEnv (tests/fixtures/slow_plants.py, loaded in every worker and repro.py by a
sitecustomize.py on PYTHONPATH, as a patch author's change is) is reported as a confirmed
performance finding one torch alone, and in an A/B campaign against the same torch without the
plant a confirmed slowdown of the candidate (the performance oracle's, or the A/B oracle's timed
against the baseline) that the baseline does not show. That unmodified torch gives none:
tests/cover/test_performance_oracle.py on the same
programs, and the 300 s default campaigns on seeds 0-2 in benchmarks/README.md."""

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
MODES = {"one-torch": (), "ab": ("--baseline-env", "PYTHONPATH=")}  # baseline: no plant
# two campaigns at a time, one worker each (CI time: about 6 minutes in all); four at once met
# each plant at 20-26 s of 150 under load 6, and at 102-130 s or not at all under load 9. 180 s:
# the quadratic plant slows every trace (71-79 programs in 120 s, 2026-12-04), and its A/B
# campaign met its family at 117 s, too late to confirm within 120
ARGS = ["--system", "make_fx", "--budget", "180", "--shrink-budget", "10", "--seed", "0", "--workers", "1", "--quiet"]


def _start(out: Path, plant: str, extra: tuple[str, ...]) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    site = out.parent / f"site-{plant}"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(slow_plants.sitecustomize_source(plant))
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(FIXTURES)])
    return subprocess.Popen([sys.executable, "-m", "shapefuzz", "fuzz", *ARGS, *extra, "--out", str(out)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=out.parent)


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[tuple[str, str], dict]:
    root = tmp_path_factory.mktemp("slowdowns")
    out = {}
    for mode, extra in MODES.items():  # two at a time: four at once left each too little CPU
        procs = {(plant, mode): _start(root / f"{plant}-{mode}", plant, extra) for plant in PLANTS}
        for key, proc in procs.items():
            stdout, stderr = proc.communicate(timeout=1200)
            assert proc.returncode in (0, 1) and "Traceback" not in stderr, (key, stdout, stderr)
            out[key] = json.loads((root / f"{key[0]}-{key[1]}" / "report.json").read_text())
    return out


def _slowdowns(report: dict) -> list[dict]:
    """Findings of the performance oracle (in A/B, the candidate's one-torch findings are
    reported as such) and, in A/B, the A/B oracle's slowdowns (the candidate timed against the
    baseline: issue 31's way of finding a slowdown in A/B)."""
    return [f for f in report["findings"]
            if f["oracle"] == "performance" or (f["oracle"] == "ab" and f["kind"] == "slowdown")]


@pytest.mark.parametrize("plant", PLANTS)
@pytest.mark.parametrize("mode", MODES)
def test_the_planted_slowdown_is_a_confirmed_performance_finding(reports, plant, mode):
    found = [f for f in _slowdowns(reports[plant, mode]) if f["confirmed"] and not f["known"]]
    assert found, f"no confirmed slowdown finding under the {plant} plant ({mode})"
    if mode == "ab":  # the baseline (no plant) does not show one of them: the change under test
        # does (a family whose time also grows on the baseline is its pre-existing finding)
        assert any(not f.get("pre_existing") for f in found), found
