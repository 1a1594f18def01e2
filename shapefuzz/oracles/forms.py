"""Repro forms an oracle owns: which of its findings a form shows, the values the script needs,
and its one template module.

Note [repro forms]: an oracle that knows how its findings are best shown declares `ReproForm`
values on its Oracle (`forms`), in its own module; the repro package (shapefuzz/repro/forms.py)
tries them first, in order, and the first whose `applies(finding)` holds writes the case's
repro.py; a finding no form applies to is written by its system's family, as before forms
existed. A form is data: `data(case)` returns plain values (numbers, strings, booleans, None
and lists, tuples and dicts of them) that the script binds as `NAME = value` lines and that the
form reads off the case's typed fields and its finding's evidence (Note [typed evidence]), never
off `detail`; the template is a real module (Note [repro templates]) named by its dotted name,
so an oracle never imports the repro package (it is a higher layer, tests/cover/test_layers.py).
`writer` names what writes the program around them: "harness" (the program as `f` and
`inputs`, the bindings, then the template's harness pasted whole: any oracle can use it), or a
writer the repro package registers for a form that needs more of it (a trace through the
finding's public call, a question program in two ShapeEnvs: the history oracle's)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shapefuzz.oracles.findings import Finding

__all__ = ["ReproForm", "always", "plain"]


def always(finding: Finding) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class ReproForm:
    """One repro.py form of an oracle's findings (Note [repro forms])."""

    name: str
    template: str  # the dotted module name of its template (importable where the script is written)
    data: Callable[[Any], dict[str, Any]]  # case -> NAME -> a plain value (`plain`)
    applies: Callable[[Finding], bool] = always
    writer: str = "harness"
    line_limit: int = 60  # at most this many lines (a writer of its own may say otherwise)
    #: also the system family's check.py (the full harness); False: repro.py is all the harness
    #: its findings have
    check: bool = False

    def values(self, case: Any) -> dict[str, Any]:
        """data(case), checked: upper-case names and plain values only (a case file cannot put
        code into a script through them)."""
        out = self.data(case)
        for name, value in out.items():
            if not (name.isidentifier() and name.isupper()):
                raise ValueError(f"repro form {self.name!r}: {name!r} is no NAME (an upper-case identifier)")
            if not plain(value):
                raise ValueError(f"repro form {self.name!r}: {name} = {value!r:.80} is not a plain value")
        return out


def plain(x: Any) -> bool:
    """A value whose repr is a literal Python reads back as the same value."""
    if isinstance(x, float):
        return math.isfinite(x)  # repr(nan) is no literal
    if x is None or isinstance(x, (bool, int, str)):
        return True
    if isinstance(x, (list, tuple)):
        return all(plain(v) for v in x)
    if isinstance(x, dict):
        return all(isinstance(k, (int, str)) and plain(v) for k, v in x.items())
    return False
