"""Repro scripts for front-end differential findings: the program traced by the two front-ends
the finding compares (oracles/frontends.PAIRS), each the way its system does it, and their
outcome classes (ok / dde / constraint / error) side by side. Exits 1 while they differ."""

from __future__ import annotations

from shapefuzz.oracles.frontends import pair_of
from shapefuzz.program.codegen import function_source, inputs_source
from shapefuzz.repro import common
from shapefuzz.repro.forms import Writer, register_writer
from shapefuzz.repro.templates import frontends_check, frontends_issue, traced_issue

__all__ = ["WRITER", "check", "issue", "line_limit"]

_DIM = {"static": "DimDynamic.STATIC", "dynamic": "DimDynamic.DUCK", "unbacked": "DimDynamic.UNBACKED"}
#: (system, config) -> the template function that traces the program that way
_SIDES = {("make_fx", "default"): "make_fx_default", ("make_fx", "no-duck-shape"): "make_fx_no_duck_shape",
          ("export", "default"): "export_default", ("export", "strict"): "export_strict",
          ("compile", "mark-dynamic"): "compile_mark_dynamic"}


def line_limit(case) -> int:
    """Two public calls and the classification of their outcomes: a helper."""
    return 60


def _sides(case) -> list[tuple[str, str]]:
    sides = [tuple(s) for s in pair_of(case.finding)]
    unknown = [s for s in sides if s not in _SIDES]
    if unknown or len(sides) != 2:
        raise ValueError(f"front-end pair {sides!r} of {common.key_of(case.finding)!r}: expected two of "
                         f"{sorted(_SIDES)}")
    return sides


def _dynamic(spec) -> dict[int, int]:
    return {d: n for d, (k, n) in enumerate(zip(spec.dims, spec.shape)) if k != "static" and n >= 2}


def issue(case, torch_version: str = "") -> str:
    p = case.program
    sides = _sides(case)
    names = [_SIDES[s] for s in sides]
    data = []
    if any(n.startswith("make_fx") for n in names):
        sizes = ", ".join("[" + ", ".join(_DIM[d] for d in spec.dims) + "]" for spec in p.inputs)
        data.append(f"dynamic_sizes = [{sizes}]  # how make_fx traces each input dim\n")
    if any(n.startswith("export") for n in names):
        specs = ["{" + ", ".join(f"{d}: Dim.DYNAMIC" for d in _dynamic(s)) + "}" if _dynamic(s) else "None"
                 for s in p.inputs]
        data += [f"dynamic_shapes = ({', '.join(specs)}{',' if len(specs) == 1 else ''})"
                 "  # export: Dim.DYNAMIC on the dims traced dynamic\n", common.block(traced_issue, "module")]
    if "compile_mark_dynamic" in names:
        marked = [(i, d) for i, s in enumerate(p.inputs) for d in _dynamic(s)]
        data.append(f"marked = {marked!r}  # (input, dim) marked dynamic for torch.compile\n")
    parts = [function_source(p, "f"), common.inputs_line(p.inputs), *data,
             *[common.function(frontends_issue, n) for n in dict.fromkeys(names)],
             common.function(frontends_issue, "outcome"),
             "sides = [" + ", ".join(f"({s[0] + ':' + s[1]!r}, {n})" for s, n in zip(sides, names)) + "]\n",
             common.block(frontends_issue, "compare_sides")]
    imports = [*common.imports_of(frontends_issue), *common.imports_of(traced_issue)]
    return common.script(common.doc(case, torch_version), imports, parts)


def check(case, torch_version: str = "") -> str:
    p = case.program
    imports, code = common.harness(frontends_check)
    data = [function_source(p, "f"), "\n", inputs_source(p.inputs, "inputs"),
            f"DIMS = {[list(s.dims) for s in p.inputs]!r}\n", f"SIDES = {[tuple(s) for s in _sides(case)]!r}\n",
            "\n\n", code]
    imports = [*imports, *common.imports_of(traced_issue)]
    return common.script(common.doc(case, torch_version, signature=True), imports, data)


WRITER = register_writer(Writer("frontends", issue, check, line_limit))  # Note [repro forms]
