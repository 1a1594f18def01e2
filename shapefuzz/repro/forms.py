"""Which writer writes a case's scripts: the registry behind repro_source / check_source /
line_limit and trial.py's reductions (Note [repro forms] in shapefuzz/oracles/forms.py).

A `Writer` is what a family module of this package was by convention (issue, check, line_limit,
and optionally reduction and issue_cuts, once found by getattr), now one registered value per
writer with every part spelled out. `choose(case)` picks the finding's oracle's first form that
applies (its writer writes repro.py from the form's values and template), else the family of the
finding's system: ref's own findings are ref's; else the one its oracle names (front-end pairs,
ref against torch, A/B, scaling), else the one its program kind names (question programs), else
its system's (compile call sequences; traced make_fx / export)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from shapefuzz.oracles import get_oracle
from shapefuzz.oracles.forms import ReproForm
from shapefuzz.program.kinds import kind_of

__all__ = ["Chosen", "Writer", "choose", "family", "register_writer", "template_of", "writer"]


def _no_reduction(case: Any) -> str:
    return ""


def _no_cuts(case: Any) -> list | None:
    return None


@dataclass(frozen=True, slots=True)
class Writer:
    """What writes the scripts of the cases it is chosen for. `issue(case, torch_version,
    **extra)` is repro.py (extra: `calls`, a compile cut's kept calls; `form`, the ReproForm it
    writes, for a form's writer); `check(case, torch_version)` check.py; `line_limit(case)`
    repro.py's most lines (a form's writer gets `form` too); `reduction(case)` how trial.py cuts it ("" not at all) and
    `issue_cuts(case)` the cuts it tries on a question program (None: one question's slices)."""

    name: str
    issue: Callable[..., str]
    check: Callable[[Any, str], str] | None  # None: a form's writer (check.py is the family's)
    line_limit: Callable[..., int]
    reduction: Callable[[Any], str] = _no_reduction
    issue_cuts: Callable[[Any], list | None] = _no_cuts


_WRITERS: dict[str, Writer] = {}

#: writer name -> the module of this package that registers it (imported when first needed: a
#: family's templates and torch-facing helpers load only for a case of that family)
_MODULES = {"traced": "traced", "calls": "calls", "frontends": "frontends", "questions": "questions",
            "ref": "ref", "scaling": "scaling", "ab": "ab", "harness": "harness",
            "fresh-env-trace": "history_tensor_form", "fresh-env-questions": "questions"}


def register_writer(w: Writer) -> Writer:
    if w.issue.__module__ == "__main__":
        return w  # a writer module run as a script (python -m shapefuzz.repro.ref): its import registers
    if w.name in _WRITERS and _WRITERS[w.name] is not w:
        raise ValueError(f"repro writer {w.name!r} is registered twice")
    _WRITERS[w.name] = w
    return w


def writer(name: str) -> Writer:
    if name not in _WRITERS:
        if name not in _MODULES:
            raise ValueError(f"unknown repro writer {name!r}; known: {', '.join(_MODULES)}")
        importlib.import_module(f"shapefuzz.repro.{_MODULES[name]}")
    return _WRITERS[name]


#: the family of a system's own findings, when neither the oracle nor the program kind names one
_SYSTEM_FAMILY = {"ref": "ref", "compile": "calls"}  # Note [confirming ref findings]: ref


def family(case) -> Writer:
    """The writer of the finding's family (see the module docstring): what writes check.py,
    and repro.py when no form of its oracle applies."""
    f = case.finding
    name = "ref" if f.system == "ref" else (
        _oracle_family(f.oracle) or kind_of(case.program).repro_family
        or _SYSTEM_FAMILY.get(f.system, "traced"))
    return writer(name)


def _oracle_family(oracle: str) -> str:
    try:
        return get_oracle(oracle).repro_family
    except ValueError:  # a plugin's oracle, replayed without its plugin: the system's family
        return ""


def _forms(oracle: str) -> tuple[ReproForm, ...]:
    try:
        return get_oracle(oracle).forms
    except ValueError:
        return ()


def template_of(form: ReproForm) -> ModuleType:
    """The template module a form names (Note [repro templates])."""
    return importlib.import_module(form.template)


@dataclass(frozen=True, slots=True)
class Chosen:
    """The writer of a case's repro.py, and the oracle's form it writes (None: its family's)."""

    writer: Writer
    form: ReproForm | None = None

    def issue(self, case, torch_version: str, **extra) -> str:
        return self.writer.issue(case, torch_version, **extra, **({"form": self.form} if self.form else {}))

    def line_limit(self, case) -> int:
        return self.writer.line_limit(case, **({"form": self.form} if self.form else {}))

    def has_check(self) -> bool:
        """Whether the case gets a check.py (its family's): not for a form that is its own harness."""
        return self.form is None or self.form.check


def choose(case) -> Chosen:
    """The first form of the finding's oracle that applies to it, else its family (Note [repro
    forms]); ref's own findings are always ref's."""
    f = case.finding
    form = None if f.system == "ref" else next((x for x in _forms(f.oracle) if x.applies(f)), None)
    return Chosen(writer(form.writer), form) if form is not None else Chosen(family(case))
