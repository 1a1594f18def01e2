"""repro.py as a torch developer gets it: torch only, the oracle in one line, the torch version
and the config switches it needs, exit 1 while the bug is there (checked on corpus cases)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from shapefuzz.cases.corpus import load_case
from shapefuzz.repro import check_source, repro_source

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


@pytest.mark.parametrize("name", ["zero-size-backed-positive-torch-env", "pending-unbacked-narrow-make_fx"])
def test_repro_is_standalone_and_says_what_it_checks(name, tmp_path):
    case = load_case(CORPUS / name)
    src = repro_source(case)
    assert not re.search(r"^\s*(from|import) shapefuzz", src, re.M), "repro.py must need torch only"
    assert re.search(r"^oracle [a-z-]+: .{20,}\.$", src, re.M)  # the one-line oracle explanation
    assert "found with torch 2.13" in src
    if case.finding.config != "default":  # a settings config becomes a plain ShapeEnv argument
        assert "ShapeEnv(specialize_zero_one=False)" in src
    script = tmp_path / "repro.py"
    script.write_text(src)
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    import torch

    from shapefuzz.cases.versions import running_release

    assert f"torch {torch.__version__}" in r.stdout  # the running torch, not the one it was found with
    if case.expected_to_reproduce(running_release()):  # what the case records for this release
        assert r.returncode == 1 and "BUG:" in r.stdout, r.stdout + r.stderr
    else:
        assert r.returncode == 0, r.stdout + r.stderr


def test_reference_function_is_only_written_out_when_branches_were_forced():
    case = load_case(CORPUS / "pending-unbacked-narrow-make_fx")
    assert not case.fallback_branches
    src = check_source(case)
    assert "f_ref = f  #" in src and "def f_ref(" not in src and src.count("def f(") == 1
    assert "f_ref" not in repro_source(case)  # a trace error: eager is the program itself
