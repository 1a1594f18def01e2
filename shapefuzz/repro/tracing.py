"""The public trace of a make_fx / export finding, as its issue form writes it: the plan (what the
script checks, on which inputs), what comes before the trace and the traced call itself. The
issue forms of traced.py and history_tensor_form.py (a history finding, which traced.py hands over)
both trace this way, so it sits below both."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.oracles.base import Compares
from shapefuzz.repro import common
from shapefuzz.repro.templates import traced_issue

__all__ = ["Plan", "plan_of", "trace_call", "trace_imports", "trace_setup"]

_DIM = {"static": "DimDynamic.STATIC", "dynamic": "DimDynamic.DUCK", "unbacked": "DimDynamic.UNBACKED"}


@dataclass(frozen=True, slots=True)
class Plan:
    """What the issue form of a case does."""

    check: str  # raises | compare | accepts-invalid | symbolic
    marked: bool  # make_fx on fake inputs marked as the finding's dims (a ShapeEnv of its own)
    replay: bool  # checked on the recorded new input, not the traced inputs
    patch_env: bool  # export under ShapeEnv settings: every ShapeEnv gets them


def plan_of(case) -> Plan:
    f, p = case.finding, case.program
    s = common.settings_of(f.system, f.config)
    check = "raises" if common.compares(f) == Compares.PROOF else {
        "trace-error": "raises", "symbolic-shape": "symbolic", "accepts-invalid": "accepts-invalid"}.get(f.symptom, "compare")
    replay = case.replay_inputs is not None and check != "raises"
    dim_kinds = {d for spec in p.inputs for d in spec.dims}
    # make_fx checks no guards: every check but `raises` evaluates them, on marked fake inputs
    marked = f.system == "make_fx" and (check != "raises" or bool(s.env_kwargs)
                                        or len(dim_kinds) > 1 or "unbacked" in dim_kinds)
    return Plan(check, marked, replay, f.system == "export" and bool(s.env_kwargs))


def trace_imports() -> list[str]:
    return common.imports_of(traced_issue)


def trace_setup(case, plan: Plan, s: common.Settings) -> list[str]:
    """What comes before the trace: marked fake inputs (make_fx), the M wrapper (export)."""
    p = case.program
    if plan.marked:
        sizes = ", ".join("[" + ", ".join(_DIM[d] for d in spec.dims) + "]" for spec in p.inputs)
        return [f"shape_env = ShapeEnv({common.kwargs_text(s.env_kwargs)})\n",
                f"dynamic_sizes = [{sizes}]  # how each input dim is traced\n",
                common.block(traced_issue, "fakes_of")]
    if case.finding.system != "export":
        return []
    out = []
    if plan.patch_env:
        out += [f"env_kwargs = {s.env_kwargs!r}\n", common.block(traced_issue, "shape_env_settings")]
    return out + [common.block(traced_issue, "module")]


def trace_call(case, plan: Plan, s: common.Settings, bind: bool = True) -> str:
    """The public call that traces the program; `bind`: as `gm = ...`, the artifact to call."""
    if case.finding.system == "make_fx":
        dim_kinds = {d for spec in case.program.inputs for d in spec.dims}
        mode, args = ("symbolic", "fakes") if plan.marked else (
            ("fake", "inputs") if dim_kinds == {"static"} else ("symbolic", "inputs"))
        call = f'make_fx(f, tracing_mode="{mode}")(*{args})'
        return f"gm = {call}" if bind else call
    specs = [_dims_spec(i, spec, s.dim_kind) for i, spec in enumerate(case.program.inputs)]
    args = ["M()", "tuple(inputs)"]
    if any(x != "None" for x in specs):
        args.append(f"dynamic_shapes=({', '.join(specs)}{',' if len(specs) == 1 else ''})")
    if s.strict:
        args.append("strict=True")
    decompose = ".run_decompositions()" if s.decomposed else ""
    call = f"export({', '.join(args)}){decompose}"
    return f"ep = {call}\ngm = ep.module()" if bind else call


def _dims_spec(i: int, spec, dim_kind: str) -> str:
    """export's dynamic_shapes entry for one input: the non-static dims of size >= 2 (a size
    0/1 example is specialized by export, so declaring it dynamic would be a user error)."""
    def dim(d: int, n: int) -> str:
        if dim_kind == "auto":
            return "Dim.AUTO"
        if dim_kind == "named":
            return f"Dim({f'x{i}_{d}'!r}, min=2, max={max(4 * int(n), 16)})"
        return "Dim.DYNAMIC"

    dims = {d: dim(d, n) for d, (k, n) in enumerate(zip(spec.dims, spec.shape)) if k != "static" and n >= 2}
    return "{" + ", ".join(f"{d}: {v}" for d, v in dims.items()) + "}" if dims else "None"
