"""`export` system: torch.export (non-strict) with Dim.DYNAMIC on dynamic dims.

torch 2.13's export has no way to declare an *input* dim unbacked (mark_unbacked is ignored
next to dynamic_shapes), so unbacked input dims are exported as Dim.DYNAMIC; unbacked symbols
still come from item(), nonzero() and masked_select inside the program."""

from __future__ import annotations

import torch
from torch.export import Dim, export

from shapefuzz import interp
from shapefuzz.systems.traced import Trace, observe_trace

__all__ = ["ExportSystem"]


class _Program(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def within_ranges(ep, fakes, real) -> tuple[bool, str]:
    import sympy

    for i, (f, r) in enumerate(zip(fakes, real)):
        for d, (s, n) in enumerate(zip(f.shape, r.shape)):
            if isinstance(s, torch.SymInt) and isinstance(s.node.expr, sympy.Symbol):
                vr = ep.range_constraints.get(s.node.expr)
                if vr is not None and not (vr.lower <= n <= vr.upper):
                    return False, f"Guard failed: input {i} dim {d} = {n} is outside the range constraint {vr}"
    return True, ""


class ExportSystem:
    name = "export"

    def observe(self, program, config: str, variants):
        return observe_trace(self.name, config, program, variants, lambda hook: self._trace(program, hook))

    def _trace(self, program, on_branch) -> Trace:
        real = interp.make_inputs(program.inputs)
        # A size-0/1 example is 0/1-specialized by export: declaring it Dim.DYNAMIC is a user
        # error, so such dims are left static, as a user would have to.
        specs = tuple({d: Dim.DYNAMIC for d, (kind, n) in enumerate(zip(s.dims, s.shape))
                       if kind != "static" and n >= 2} or None for s in program.inputs)
        ep = export(_Program(interp.program_fn(program, on_branch=on_branch)), tuple(real),
                    dynamic_shapes=(specs,), strict=False)
        phs = [n for n in ep.graph.nodes if n.op == "placeholder"]
        fakes = [n.meta["val"] for n in phs]
        se = fakes[0].fake_mode.shape_env if fakes and hasattr(fakes[0], "fake_mode") else None
        out_vals = [o.meta["val"] if isinstance(o, torch.fx.Node) else o
                    for o in ep.graph.output_node().args[0]]
        mod = ep.module()
        # ep.module() checks guards and runs the graph's asserts itself (TORCH_NOTES 6), but not
        # the lower bound 2 that tracing assumed for a dynamic dim (0/1 specialization): such an
        # input is outside the program's range constraints, and so outside its contract.
        return Trace(se, mod, fakes, out_vals, lambda r: within_ranges(ep, fakes, r), lambda r: mod(*r))
