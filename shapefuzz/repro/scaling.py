"""repro.py of a performance finding (shapefuzz/oracles/performance.py): the program as `f`, its
inputs and how each dim is traced, the family's rule as bindings, the worker's own measuring
functions copied in (shapefuzz/systems/scaling.py, the fit from the observation record), then
templates/scaling_issue.py, which measures, prints the table and the fit, profiles the largest
member, and exits 1 while the finding's symptom still holds."""

from __future__ import annotations

from shapefuzz import SYMPY_CACHE_SIZE
from shapefuzz.program.codegen import function_source
from shapefuzz.repro import common
from shapefuzz.repro.forms import Writer, register_writer
from shapefuzz.repro.templates import scaling_issue, traced_issue
from shapefuzz.systems import observation, scaling

__all__ = ["WRITER", "check", "issue", "line_limit"]

_EXITS = ("Exits 1 while the family's cost still grows faster than its order, 0 once it does not. "
          "Times are the tracing thread's CPU times: run it on a quiet machine for the clearest numbers. "
          "`python repro.py --profile` adds a cProfile of the largest member.")


def issue(case, torch_version: str = "") -> str:
    f, p = case.finding, case.program
    s = common.settings_of(f.system, f.config)
    head = common.doc(case, torch_version, lines=(
        "The program is traced n times over in one function (copies on inputs of their own, "
        "sharing nothing): the shape system's work should grow linearly with n.",), exits=_EXITS)
    rule = (f"NS = {scaling.NS!r}\nROUNDS = {scaling.ROUNDS}\nEXPECTED = 1.0\n"
            f"MARGIN = {observation.ORDER_MARGIN!r}\nTIME_FLOOR_S = {observation.TIME_FLOOR_S!r}\n"
            f"SIZE_FLOOR = {observation.SIZE_FLOOR!r}\nEXCESS_SHARE = {observation.EXCESS_SHARE!r}\n"
            f"KIND = {f.symptom!r}\n"
            f"DIMS = {[list(x.dims) for x in p.inputs]!r}\nENV_KWARGS = {s.env_kwargs!r}\n")
    copied = [common.function(observation, "growth_order"), common.function(observation, "superlinear"),
              common.function(observation, "superlinear_kinds"), common.function(scaling, "copies"), common.function(scaling, "trace_copies"),
              common.function(scaling, "hottest")]
    imports, code = common.harness(scaling_issue)
    parts = [function_source(p, "f"), common.inputs_line(p.inputs), rule, *copied, code]
    # the program's own names (guard_or_true ...) come with the traced form's imports; the script
    # keeps the ones its code uses
    imports = [*imports, *common.imports_of(traced_issue)]
    # before torch imports sympy: the campaign measured with that cache (Note [sympy cache])
    head += common.bindings({"SYMPY_CACHE_SIZE": SYMPY_CACHE_SIZE}) + common.block(scaling_issue, "sympy_cache")
    return common.script(head, imports, ["\n".join(x.rstrip("\n") + "\n" for x in parts)])


def check(case, torch_version: str = "") -> str:
    """check.py: the same measurement (the family is the whole check)."""
    return issue(case, torch_version)


def line_limit(case) -> int:
    """The measuring functions are copied in whole (about 60 lines): the program's own lines on
    top of that."""
    return 100 + len(case.program.instrs)


WRITER = register_writer(Writer("scaling", issue, check, line_limit))  # Note [repro forms]
