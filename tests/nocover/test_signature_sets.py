"""Behaviour kept across a refactor: fixed-seed campaigns (make_fx and export, the default systems
before torch-env joined them (Note [default systems]), torch-env with
every config, compile, and seed 7 over the layout and control families, where the classes of
the first recording that the default programs no longer meet live: its `_layout_note`) give
the same sets of finding signatures as they did before the code moved
(tests/fixtures/signature_sets.json, recorded on the commit before the redesign). Measured with
--workers 1 on a loaded 2-core machine: the two layout entries take about 60 s and 100 s.

A change that means to change what campaigns find (a new oracle, a fixed false alarm, a new op)
re-records the fixture with `python tests/nocover/test_signature_sets.py --record [NAME...]` and
says why in its commit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "signature_sets.json"


def run(args: list[str], out: Path) -> set[str]:
    r = subprocess.run([sys.executable, "-m", "shapefuzz", "fuzz", *args, "--workers", "1",
                        "--budget", "1800", "--no-confirm", "--quiet", "--out", str(out)],
                       capture_output=True, text=True, timeout=1800, check=False)
    assert r.returncode in (0, 1), r.stdout[-2000:] + r.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    return {f["signature"] for f in report["findings"] + report["unconfirmed"]}


def found(old: str, got: set[str]) -> bool:
    """Is the recorded signature `old` still found (new oracles may add signatures)? A key
    recorded before root-cause signatures (Note [root cause]) is found with any root cause."""
    return old in got or (":at=" not in old and any(g.startswith(old + ":at=") for g in got))


def _checked(data: dict) -> list[str]:
    """The recorded campaigns with a signature to keep: one that found nothing (compile: 30
    programs, 138 s of CI) has nothing this test could lose; whether a compile campaign runs
    through the CLI and reports is tests/quality/test_planted_guard_bug.py's question. A
    re-recording that finds something brings it back."""
    return sorted(k for k, v in data.items() if k[0] != "_" and v["signatures"])


@pytest.mark.parametrize("name", _checked(json.loads(FIXTURE.read_text())))
def test_campaign_finds_the_recorded_signatures(name, tmp_path):
    want = json.loads(FIXTURE.read_text())[name]
    got = run(want["args"], tmp_path / "out")
    lost = sorted(s for s in want["signatures"] if not found(s, got))
    assert not lost, {"lost": lost, "new": sorted(got - set(want["signatures"]))}


if __name__ == "__main__" and sys.argv[1:2] == ["--record"]:
    # `--record NAME...` re-records those entries only (the layout entries keep the classes their
    # _layout_note names, not everything a time-limited shrink happened to meet)
    import tempfile

    data = json.loads(FIXTURE.read_text())
    for name, entry in data.items():
        if name.startswith("_") or (sys.argv[2:] and name not in sys.argv[2:]):
            continue
        entry["signatures"] = sorted(run(entry["args"], Path(tempfile.mkdtemp()) / "out"))
    FIXTURE.write_text(json.dumps(data, indent=1) + "\n")
