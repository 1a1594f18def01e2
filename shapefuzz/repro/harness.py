"""The "harness" writer (Note [repro forms] in shapefuzz/oracles/forms.py): repro.py of an
oracle's own form, any oracle's, a plugin's included. The script is the docstring, the program as
`f` and its inputs as `inputs` (codegen: nothing from the case file reaches it as code), the
form's values as `NAME = value` lines, then the form's template pasted as a harness (Note [repro
templates]: the names it reads from the script are declared under its `if TYPE_CHECKING:`)."""

from __future__ import annotations

from shapefuzz.oracles.forms import ReproForm
from shapefuzz.program.codegen import function_source
from shapefuzz.repro import common
from shapefuzz.repro.forms import Writer, register_writer, template_of
from shapefuzz.repro.templates import traced_issue

__all__ = ["WRITER", "issue"]


def issue(case, torch_version: str = "", form: ReproForm | None = None) -> str:
    if form is None:
        raise ValueError("the harness writer writes an oracle's form: pass the form")
    p = case.program
    imports, code = common.harness(template_of(form))
    parts = [function_source(p, "f"), common.inputs_line(p.inputs), common.bindings(form.values(case)), code]
    lines = (common.safe(case.finding.detail.split("\n")[0], 600),)
    # the program's source may name what the traced issue forms import (Note [repro templates])
    return common.script(common.doc(case, torch_version, lines),
                         [*imports, *common.imports_of(traced_issue)], parts)


def _line_limit(case, form: ReproForm | None = None) -> int:
    return form.line_limit if form is not None else 60


WRITER = register_writer(Writer("harness", issue, None, _line_limit))
