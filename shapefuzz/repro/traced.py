"""Repro scripts for make_fx / export findings on tensor programs.

The issue form traces the program with the one public call the finding is about (make_fx on
inputs whose dims are marked as the finding's; torch.export.export and `ep.module()`), then
shows the bug: the trace raises where eager succeeds; the artifact's outputs differ from eager's
on the traced inputs or on the new input the finding recorded (make_fx: its guards evaluated and
its deferred asserts inserted by hand, as make_fx does neither); or an output's symbolic shape
evaluates to another shape than the graph returns. check.py is the full harness
(templates/traced_check.py)."""

from __future__ import annotations

from shapefuzz.oracles.base import Compares
from shapefuzz.oracles.forms import ReproForm
from shapefuzz.program.codegen import function_source, inputs_source
from shapefuzz.repro import common
from shapefuzz.repro.forms import Writer, choose, register_writer, template_of
from shapefuzz.repro.templates import traced_check, traced_dde, traced_issue
from shapefuzz.repro.tracing import Plan, plan_of, trace_call, trace_imports, trace_setup

__all__ = ["WRITER", "check", "issue", "line_limit", "reduction"]

_DDE_EXITS = ("Exits 1 while the data-dependent error is raised and z3 decides its expression from the "
              "facts torch held, 0 once it traces or they do not decide it, 2 for no verdict.")


def reduction(case) -> str:
    """How trial.py reduces the issue form (Note [issue form reduction]): a trace that raises by
    the instruction that raised (a spurious DDE's too: a cut that drops the fact deciding it
    exits 0, and the full form stays), an output check by its outputs (a history finding's form
    is the history oracle's: shapefuzz/repro/history_tensor_form.py)."""
    return "raise" if plan_of(case).check == "raises" else "outputs"


def line_limit(case, form: ReproForm | None = None) -> int:
    """30 lines for a finding the public artifact shows as it is (a trace that raises); 60 where
    the check needs a helper (marked fake inputs, guards or range constraints by hand, symbolic
    shapes evaluated, settings patched: a torch.fx.experimental._config switch is a private
    name, checked first, Note [private names in scripts] in common.py)."""
    plan = plan_of(case)
    proof = common.compares(case.finding) == Compares.PROOF  # the z3 proof is a helper
    s = common.settings_of(case.finding.system, case.finding.config)
    switched = bool(common.fx_switches(case, s.fx))
    return 30 if plan.check == "raises" and not (plan.marked or plan.patch_env or proof or switched) else 60


def issue(case, torch_version: str = "", form: ReproForm | None = None) -> str:
    """repro.py; of an oracle's form (writer "traced"): the program traced by the finding's
    public call, then the form's values and its template's `check` block over the artifact."""
    f, p = case.finding, case.program
    plan = plan_of(case)
    s = common.settings_of(f.system, f.config)
    lines = _doc_lines(case, plan)
    parts = [function_source(p, "f"), common.inputs_line(p.inputs)]
    if plan.replay:
        parts.append(common.inputs_line(case.replay_inputs, "new_inputs"))
    parts += common.fx_lines(common.fx_switches(case, s.fx))
    parts += trace_setup(case, plan, s)
    if plan.check == "raises":
        if common.compares(f) == Compares.PROOF:  # the DDE, then z3 on the facts torch held
            parts += [common.function(traced_dde, "to_z3", docstring=False),
                      common.block(traced_dde, "dde_proof", trace_call(case, plan, s, bind=False))]
            return common.script(common.doc(case, torch_version, lines, exits=_DDE_EXITS),
                                 [*trace_imports(), *common.imports_of(traced_dde)], parts)
        parts.append(common.block(traced_issue, "raises", trace_call(case, plan, s, bind=False)))
        return common.script(common.doc(case, torch_version, lines), trace_imports(), parts)
    template = template_of(form) if form is not None else None
    # a form's template may trace on its own terms: the specialization form's export may raise the
    # constraint violation its contract asks for
    traced_by = template if template is not None and hasattr(template, "trace") else traced_issue
    parts.append(common.block(traced_by, "trace", trace_call(case, plan, s)))
    if template is not None:  # the oracle's own check of the artifact (Note [repro forms]): its `check` block
        parts += [common.bindings(form.values(case)), common.block(template, "check")]
        return common.script(common.doc(case, torch_version, lines), [*trace_imports(), *common.imports_of(template)],
                             parts)
    parts.append(_args_line(case, plan))
    parts += _acceptance(case, plan)
    if plan.check == "symbolic":
        if f.system == "export":
            parts.append(common.block(traced_issue, "export_shape_env"))
        parts += [common.function(traced_issue, "traced_shapes"), common.block(traced_issue, "symbolic")]
        return common.script(common.doc(case, torch_version, lines), trace_imports(), parts)
    parts += _reference(case)
    if plan.check == "accepts-invalid":
        parts.append(common.block(traced_issue, "accepts_invalid"))
        return common.script(common.doc(case, torch_version, lines), trace_imports(), parts)
    parts.append(common.block(traced_issue, "run_traced"))
    undefined = sorted(p.undefined_outputs())
    if undefined:
        parts += [f"undefined = {set(undefined)!r}  # outputs of torch.empty\n",
                  common.block(traced_issue, "shapes_only")]
    parts.append(common.block(traced_issue, "assert_same"))
    return common.script(common.doc(case, torch_version, lines), trace_imports(), parts)


def _args_line(case, plan: Plan) -> str:
    if case.finding.oracle == "contract":
        return "args = new_inputs  # outside its contract: ep.module() must reject them or be right\n"
    if plan.replay:
        return "args = new_inputs  # a new input, its guards accept it\n"
    return "args = inputs  # checked on the inputs it was traced with\n"


def _acceptance(case, plan: Plan) -> list[str]:
    """Whether the trace accepts the checked input, where the artifact does not say so itself:
    make_fx's guards (and deferred asserts) on a new input, which may reject it; on the traced
    inputs, make_fx's guards and export's range constraints, which must accept them."""
    if plan.check == "symbolic":
        return []
    if case.finding.system == "export":
        return [] if plan.replay else [common.block(traced_issue, "ranges_hold")]
    if plan.replay:
        return [common.block(traced_issue, "guards_accept")]
    unbacked = [f"L['t{i}'].size()[{d}]" for i, spec in enumerate(case.program.inputs)
                for d, k in enumerate(spec.dims) if k == "unbacked"]
    if not unbacked:
        return [common.block(traced_issue, "guards_hold")]
    return [f"unbacked = {unbacked!r}  # the unbacked input dims, as the guards name them\n",
            common.block(traced_issue, "guards_hold_unbacked")]


def _doc_lines(case, plan: Plan) -> tuple[str, ...]:
    f = case.finding
    out = []
    if plan.check == "raises" and common.compares(f) == Compares.PROOF:
        out.append(common.safe(f.detail.replace("\n", "; "), 600))
    if plan.replay:
        out.append(f"new_inputs: {f.detail.splitlines()[0] if f.detail else ''}")
    s = common.settings_of(f.system, f.config)
    if s.slow:
        out.append(f"Config {f.config} is torch with shapefuzz's slow-path patches ({', '.join(s.slow)}); "
                   "this script runs torch as shipped (with the config's settings).")
    return tuple(out)


def _reference(case) -> list[str]:
    forced = frozenset(case.fallback_branches)
    if not forced:
        return ["f_ref = f  # the reference: eager (no branch was sent to its fallback arm)\n"]
    return ["# the reference: eager, with the branches the trace sent to their fallback arm\n",
            function_source(case.program, "f_ref", forced)]


# ---- check.py: the full harness ------------------------------------------------------------------


def check(case, torch_version: str = "") -> str:
    """Today's full harness: both traces written out, the trace's own acceptance of the input
    (guards, asserts, range constraints, 0/1 contract), outputs and symbolic shapes compared."""
    f, p = case.finding, case.program
    if choose(case).form is not None or common.compares(f) == Compares.PROOF:  # the issue form is the whole check
        return choose(case).issue(case, torch_version)  # (an oracle's own form: Note [repro forms])
    forced = frozenset(case.fallback_branches)
    s = common.settings_of(f.system, f.config)
    check_inputs = case.replay_inputs if case.replay_inputs is not None else p.inputs
    undefined = sorted(p.undefined_outputs())
    check = f.symptom if f.symptom in ("trace-error", "symbolic-shape") else (
        "contract" if f.oracle == "contract" else "compare")
    imports, code = common.harness(traced_check)
    ref = (["\n# the reference: eager, with the branches the trace sent to their fallback arm\n",
            function_source(p, "f_ref", forced)] if forced else
           ["f_ref = f  # the reference: eager (no branch was sent to its fallback arm)\n"])
    data = [function_source(p, "f"), *ref, "\n", inputs_source(p.inputs, "traced_inputs"),
            inputs_source(check_inputs, "check_inputs"),
            f"DIMS = {[list(x.dims) for x in p.inputs]!r}\n",
            f"UNDEFINED = {undefined!r}  # outputs of torch.empty: shapes only\n",
            f"SYSTEM = {f.system!r}\n", f"CHECK = {check!r}\n",
            f"ON_TRACED_INPUTS = {case.replay_inputs is None!r}\n",
            f"ENV_KWARGS = {s.env_kwargs!r}\n", f"FX_CONFIG = {common.fx_switches(case, s.fx)!r}\n",
            f"STRICT = {s.strict!r}\n", f"DIM_KIND = {s.dim_kind!r}\n",
            f"DECOMPOSE = {s.decomposed!r}\n",
            f"SMALL_STATIC = {s.small_static!r}\n", "\n\n", code]
    imports += common.imports_of(traced_issue)  # what the program's source may name
    return common.script(common.doc(case, torch_version, signature=True), imports, data, banner=False)


WRITER = register_writer(Writer("traced", issue, check, line_limit, reduction))  # Note [repro forms]
