"""Repro scripts for a case: two per finding folder.

- `repro.py`, the issue form (DESIGN.md "repro.py is the issue form"): what a PyTorch developer
  pastes into an issue. Imports, the program as plain torch code, the one public torch call
  that shows the bug, expected vs got printed, exit 1 while the bug is there and 0 once it is
  fixed. A finding counts as confirmed only when its issue form exits 1 standalone (campaign/confirming.py: confirm).
- `check.py`, the full harness: the checks the campaign made, written out (acceptance of inputs,
  every claim, both runs of a differential), for `shapefuzz replay` users and CI.

One registered writer per family of finding (traced make_fx/export, compile call sequences,
front-end pairs, question programs, ref findings) and per form an oracle owns (Note [repro forms]:
forms.py picks one), over `common` (docstring, config switches, templates, script
assembly). Templates are real modules in `templates/` (Note [repro templates] in common.py).
Everything taken from a case goes through codegen (registered op names, numbers rendered as
numbers) or common.safe, so a crafted case cannot inject code (tests/cover/test_hostile.py)."""

from __future__ import annotations

from pathlib import Path

from shapefuzz.cases.corpus import atomic_write, load_case
from shapefuzz.repro.forms import choose, family
from shapefuzz.repro.reduce import apply_cut

__all__ = ["SCRIPTS", "check_source", "family", "line_limit", "regenerate", "repro_source",
           "write_scripts"]

#: file name -> what it holds, in every finding folder
SCRIPTS = {"repro.py": "the issue form", "check.py": "the full harness"}


def repro_source(case, torch_version: str = "") -> str:
    """repro.py, the issue form: of the part of the case its issue_cut keeps (Note [issue form
    reduction] in reduce.py), or of the whole case, by the writer chosen for it (Note [repro
    forms])."""
    shown, calls = apply_cut(case)
    extra = {"calls": calls} if calls is not None else {}
    return choose(shown).issue(shown, torch_version or case.torch_version, **extra)


def check_source(case, torch_version: str = "") -> str | None:
    """check.py, the full harness of the case's family; None for a case whose oracle's form is
    all the harness it has (Note [repro forms])."""
    if not choose(case).has_check():
        return None
    return family(case).check(case, torch_version or case.torch_version)


def line_limit(case) -> int:
    """At most this many lines in the case's repro.py (30 when the public artifact shows the
    finding as it is, 60 where the check needs a helper; a form's own limit)."""
    shown, _ = apply_cut(case)
    return choose(shown).line_limit(shown)


def write_scripts(folder: Path, case) -> None:
    """Write repro.py and check.py (when the case has one) into a case folder (atomically)."""
    atomic_write(Path(folder) / "repro.py", repro_source(case))
    check = check_source(case)
    if check is not None:
        atomic_write(Path(folder) / "check.py", check)


def regenerate(root: str) -> None:
    """Rewrite every repro.py and check.py under root from its case.json (after a template change)."""
    for p in sorted(Path(root).rglob("case.json")):
        write_scripts(p.parent, load_case(p))
