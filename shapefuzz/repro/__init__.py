"""Repro scripts for a case: two per finding folder.

- `repro.py`, the issue form (DESIGN.md "repro.py is the issue form"): what a PyTorch developer
  pastes into an issue. Imports, the program as plain torch code, the one public torch call
  that shows the bug, expected vs got printed, exit 1 while the bug is there and 0 once it is
  fixed. A finding counts as confirmed only when its issue form exits 1 standalone (campaign/confirming.py: confirm).
- `check.py`, the full harness: the checks the campaign made, written out (acceptance of inputs,
  every claim, both runs of a differential), for `shapefuzz replay` users and CI.

One module per family of finding (traced make_fx/export, compile call sequences, front-end pairs,
question programs, ref findings), over `common` (docstring, config switches, templates, script
assembly). Templates are real modules in `templates/` (Note [repro templates] in common.py).
Everything taken from a case goes through codegen (registered op names, numbers rendered as
numbers) or common.safe, so a crafted case cannot inject code (tests/cover/test_hostile.py)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from shapefuzz.cases.corpus import atomic_write, load_case
from shapefuzz.oracles import get_oracle
from shapefuzz.program.kinds import kind_of
from shapefuzz.repro.reduce import apply_cut

__all__ = ["SCRIPTS", "check_source", "family", "line_limit", "regenerate", "repro_source",
           "write_scripts"]

#: file name -> what it holds, in every finding folder
SCRIPTS = {"repro.py": "the issue form", "check.py": "the full harness"}


#: the family of a system's own findings, when neither the oracle nor the program kind names one
_SYSTEM_FAMILY = {"ref": "ref", "compile": "calls"}  # Note [confirming ref findings]: ref


def family(case) -> ModuleType:
    """The module that writes this case's scripts: ref's own findings are ref's; else the one
    its oracle names (front-end pairs, ref against torch), else the one its program kind names
    (question programs), else its system's (compile call sequences; traced make_fx / export)."""
    import importlib

    f = case.finding
    name = "ref" if f.system == "ref" else (
        _oracle_family(f.oracle) or kind_of(case.program).repro_family
        or _SYSTEM_FAMILY.get(f.system, "traced"))
    return importlib.import_module(f"shapefuzz.repro.{name}")


def _oracle_family(oracle: str) -> str:
    try:
        return get_oracle(oracle).repro_family
    except ValueError:  # a plugin's oracle, replayed without its plugin: the system's family
        return ""


def repro_source(case, torch_version: str = "") -> str:
    """repro.py, the issue form: of the part of the case its issue_cut keeps (Note [issue form
    reduction] in reduce.py), or of the whole case."""
    shown, calls = apply_cut(case)
    extra = {"calls": calls} if calls is not None else {}
    return family(shown).issue(shown, torch_version or case.torch_version, **extra)


def check_source(case, torch_version: str = "") -> str:
    """check.py, the full harness."""
    return family(case).check(case, torch_version or case.torch_version)


def line_limit(case) -> int:
    """At most this many lines in the case's repro.py (30 when the public artifact shows the
    finding as it is, 60 where the check needs a helper)."""
    shown, _ = apply_cut(case)
    return family(shown).line_limit(shown)


def write_scripts(folder: Path, case) -> None:
    """Write repro.py and check.py into a case folder (atomically)."""
    atomic_write(Path(folder) / "repro.py", repro_source(case))
    atomic_write(Path(folder) / "check.py", check_source(case))


def regenerate(root: str) -> None:
    """Rewrite every repro.py and check.py under root from its case.json (after a template change)."""
    for p in sorted(Path(root).rglob("case.json")):
        write_scripts(p.parent, load_case(p))
