"""`shapefuzz issue CASE` prints a PyTorch bug-report draft from a finding folder: title, the
bug, repro.py inline, expected vs actual from a fresh run of repro.py, versions; a repro that
does not reproduce gives no draft (exit 1), a folder that is no finding exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _helpers import cli_exit

from shapefuzz.report.issue import TITLE_MAX, issue_title

CASE = Path(__file__).resolve().parents[2] / "corpus" / "pending-unbacked-narrow-make_fx"

REPRO = '''"""make_fx raised PendingUnbackedSymbolNotFound where eager succeeds
oracle eager-agreement: on the inputs it was traced with, the traced program must behave as eager.
system make_fx, config default; found with torch 2.13.0+cpu. Exits 1 while the bug is there."""
import sys
print("expected (eager): [torch.Size([2, 0])]")
print("BUG: got PendingUnbackedSymbolNotFound: u1", file=sys.stderr)
sys.exit({rc})
'''


def _case(tmp_path, rc: int) -> Path:
    folder = tmp_path / "finding"
    folder.mkdir()
    shutil.copy(CASE / "case.json", folder / "case.json")  # a real finding's fields, read as data
    (folder / "repro.py").write_text(REPRO.format(rc=rc))
    return folder


def test_a_draft_in_pytorchs_bug_form(tmp_path, capsys):
    import torch

    assert cli_exit("issue", str(_case(tmp_path, 1))) == 0
    text = capsys.readouterr().out
    title = text.splitlines()[0]
    assert title == ("eager-agreement: make_fx raised PendingUnbackedSymbolNotFound where eager succeeds "
                     "(narrow)") and len(title) <= TITLE_MAX
    for part in ("### 🐛 Describe the bug", "```python\n" + REPRO.format(rc=1), "### Expected",
                 "the traced program must behave as eager", "### Actual", "exits 1 and prints",
                 "BUG: got PendingUnbackedSymbolNotFound: u1", "### Versions",
                 f"PyTorch version: {torch.__version__}", "Python version: 3."):
        assert part in text, part
    expected, actual = text.split("### Expected")[1].split("### Actual")
    assert "expected (eager)" in actual  # Actual is the whole output
    assert "expected (eager): [torch.Size([2, 0])]" in expected and "BUG" not in expected


def test_a_repro_that_exits_0_gives_no_draft(tmp_path, capsys):
    assert cli_exit("issue", str(_case(tmp_path, 0))) == 1
    out = capsys.readouterr()
    assert out.out == "" and "does not reproduce" in out.err and out.err.count("\n") == 1


@pytest.mark.parametrize("where", ["missing", "empty"])
def test_a_folder_that_is_no_finding_exits_2(tmp_path, capsys, where):
    if where == "empty":
        (tmp_path / "empty").mkdir()
    assert cli_exit("issue", str(tmp_path / where)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a finding folder" in err


def test_a_long_title_is_cut_at_a_word():
    t = issue_title("torch-env (default): spurious DDE on " + "Max(u0, u1) + " * 10, "spurious-dde", "x:at=layout.narrow")
    assert len(t) <= TITLE_MAX and t.endswith("… (narrow)") and t.startswith("spurious-dde: torch-env")
