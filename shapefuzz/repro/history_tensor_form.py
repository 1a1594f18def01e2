"""The writer of the history oracle's form on tensor programs (Note [repro forms]; oracle
shapefuzz.oracles.history, Note [tensor history replay]): the program traced with the finding's public call (the marked
fake inputs of make_fx, export's dynamic_shapes, as shapefuzz/repro/traced.py writes them) while
each fallback on the finding's expression records what the live ShapeEnv knew; then a fresh
ShapeEnv gets only that (known_to / fresh_answer, pasted from
shapefuzz/systems/tensor_history.py: the campaign's own code) and is asked the same question."""

from __future__ import annotations

from dataclasses import replace

from shapefuzz.oracles.forms import ReproForm
from shapefuzz.program.codegen import function_source
from shapefuzz.repro import common
from shapefuzz.repro.forms import Writer, register_writer, template_of
from shapefuzz.repro.tracing import plan_of, trace_call, trace_imports, trace_setup
from shapefuzz.systems import tensor_history

__all__ = ["ASKERS", "WRITER", "issue"]

#: the public call of each recorded mode, as the script names it
ASKERS = {"guard_or_false": "guard_or_false", "guard_or_true": "guard_or_true", "int": "int", "bool": "bool",
          "statically_known_true": "statically_known_true", "size_oblivious": "guard_size_oblivious"}
_EXITS = ("Exits 1 while a fresh ShapeEnv holding what the live one knew answers sharper than the "
          "live one did, 0 once they agree (or the trace no longer meets the question), 2 for no verdict.")


def issue(case, torch_version: str = "", form: ReproForm | None = None) -> str:
    """repro.py of the history oracle's form `form` (its values: EXPR, MODE, LIVE)."""
    f, p = case.finding, case.program
    plan, s = plan_of(case), common.settings_of(f.system, f.config)
    if f.system == "make_fx":  # static dims as make_fx's fake mode traces them: marked only when needed
        plan = replace(plan, marked=bool(s.env_kwargs) or {d for x in p.inputs for d in x.dims} != {"static"})
    values = form.values(case)
    mode, expr, live = values["MODE"], values["EXPR"], values["LIVE"]
    if mode not in ASKERS:
        raise ValueError(f"a tensor history finding names no recorded call ({mode!r}): re-run the campaign")
    template = template_of(form)
    static = mode == "statically_known_true" or (mode.startswith("guard_or") and s.fx.get("backed_size_oblivious"))
    block = "dde" if not live else "undecided" if static else "fallbacks"
    parts = [function_source(p, "f"), common.inputs_line(p.inputs), *common.fx_lines(common.fx_switches(case, s.fx)),
             *trace_setup(case, plan, s),
             f"EXPR, ASK, LIVE = {expr!r}, {ASKERS[mode]}, {live!r}  # the question, its call, the live answer\n",
             *[common.function(tensor_history, n) for n in ("known_to", "fresh_answer")],
             common.block(template, block, trace_call(case, plan, s, bind=False)),
             common.block(template, "compare")]
    imports = [*trace_imports(), *common.imports_of(tensor_history), *common.imports_of(template)]
    lines = (common.safe(f.detail.split("\n")[0], 600),)
    return common.script(common.doc(case, torch_version, lines, exits=_EXITS), imports, parts)


def _reduction(case) -> str:
    return "raise"  # (Note [issue form reduction]) the shortest prefix that still fails keeps the earlier question


WRITER = register_writer(Writer("fresh-env-trace", issue, None, lambda case, form=None: 60, _reduction))
