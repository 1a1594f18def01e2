"""shapefuzz finds torch's own planted bug, shrinks it, and confirms it with repro.py; the same
campaign on unmodified torch does not report it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PLANTED = "inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY=true"


def _fuzz(out, *extra):
    # the two tracers, the default systems this test was measured with (torch-env joined the
    # default later: Note [default systems]); the planted flip is met by tensor programs
    cmd = [sys.executable, "-m", "shapefuzz", "fuzz", "--system", "make_fx", "--system", "export", "--budget",
           "100", "--seed", "0", "--workers", "2", "--quiet", "--out", str(out), *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    return r.returncode, json.loads((out / "report.json").read_text())


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    return _fuzz(tmp_path_factory.mktemp("planted"), "--torch-config", PLANTED)


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    return _fuzz(tmp_path_factory.mktemp("clean"))


def test_planted_bug_is_found_shrunk_and_confirmed(planted):
    code, report = planted
    assert code == 1
    assert report["findings"], "no confirmed finding with the planted bug on"
    assert all(f["confirmed"] for f in report["findings"])
    assert min(f["n_instrs"] for f in report["findings"]) <= 12


def test_planted_findings_are_absent_on_unmodified_torch(planted, clean):
    planted_sigs = {f["signature"] for f in planted[1]["findings"]}
    clean_sigs = {f["signature"] for f in clean[1]["findings"]}
    assert planted_sigs - clean_sigs, "every planted-bug finding also shows on unmodified torch"
