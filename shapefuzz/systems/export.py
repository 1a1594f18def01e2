"""`export` system: torch.export with Dim.DYNAMIC on dynamic dims (config "default",
non-strict); "strict" traces with Dynamo; "dim-auto" declares Dim.AUTO; "named-dims" a named
Dim per dim with min 2 and a max above the traced size (replays outside [min, max] are rejected
by ep.module(), as torch does); every torch_toggles config (ShapeEnv optimizations and settings)
applies to the default export.

torch 2.13's export has no way to declare an *input* dim unbacked (mark_unbacked is ignored
next to dynamic_shapes), so unbacked input dims are exported as Dim.DYNAMIC; unbacked symbols
still come from item(), nonzero() and masked_select inside the program.

"decomposed" and "named-dims+decomposed" also run `ep.run_decompositions()` and replay the
decomposed program (its own range constraints and asserts) instead of the exported one.

Note [export contract]: an input outside the exported program's contract (its range
constraints, its guards, the >= 2 that 0/1 specialization assumed for a dynamic dim, judged by
graph_facts.contract_violation, the facts the compile system judges reused graphs by) is still
run through ep.module(): a clean rejection (a guard or assert failure) is correct, anything it
returns is recorded (ReplayRecord.outside) for the contract oracle (oracles/contract.py). A
dim declared Dim.DYNAMIC or with a named Dim that the trace made constant without a constraint
violation is recorded as the specialization oracle's evidence (oracles/specialization.py); Dim.AUTO may
specialize by design (docs/explanation/torch-internals.md), so dim-auto records none."""

from __future__ import annotations

from dataclasses import replace

import torch
from torch.export import Dim, export

from shapefuzz.program import interp
from shapefuzz.systems.compile import mark_user_line, program_function, reference_for
from shapefuzz.systems.configs import EXPORT_FRONT_ENDS, config_of
from shapefuzz.systems.evidence.specialization import Specialization, SpecializedDim
from shapefuzz.systems.graph_facts import bind_tensors, constant_dims, contract_violation
from shapefuzz.systems.torch_toggles import CONFIGS as TOGGLE_CONFIGS
from shapefuzz.systems.torch_toggles import (
    TorchToggles,
    applied,
    fresh_fake_caches,
    small_sizes_outside_contract,
)
from shapefuzz.systems.traced import Trace, observe_trace

__all__ = ["ExportSystem", "export_config_names"]


def export_config_names() -> tuple[str, ...]:
    """export's configs as torch_toggles knows them (tests check them against the registry's):
    its front ends (systems/configs.py), then every torch_toggles config on the default one."""
    return EXPORT_FRONT_ENDS + tuple(c for c in TOGGLE_CONFIGS if c != "default")


def _dim(dim_kind: str, i: int, d: int, n: int):
    if dim_kind == "auto":
        return Dim.AUTO
    if dim_kind == "named":
        return Dim(f"x{i}_{d}", min=2, max=max(4 * n, 16))
    return Dim.DYNAMIC


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
        c = config_of(self.name, config)  # the front end and the toggles (systems/configs.py)
        fresh_fake_caches()
        with applied(c.toggles, frontend="export") as cfg:
            obs = observe_trace(self.name, config, program, variants,
                                lambda hook: self._trace(program, hook, c.strict, c.dims, cfg.toggles, c.decomposed))
        obs = replace(obs, log=obs.log + (f"toggle counts: {dict(cfg.counts)}",))  # proof it ran
        return _with_branch_references(program, obs) if c.strict else obs

    def _trace(self, program, on_branch, strict: bool = False, dim_kind: str = "dynamic",
               toggles: TorchToggles | None = None, decompose: bool = False) -> Trace:
        toggles = toggles or TorchToggles()
        real = interp.make_inputs(program.inputs)
        # A size-0/1 example is 0/1-specialized by export: declaring it Dim.DYNAMIC is a user
        # error, so such dims are left static, as a user would have to.
        specs = tuple({d: _dim(dim_kind, i, d, n) for d, (k, n) in enumerate(zip(s.dims, s.shape))
                       if k != "static" and n >= 2} or None for i, s in enumerate(program.inputs))
        fn = interp.program_fn(program, on_branch=on_branch)
        if strict:  # Dynamo traces Python source; the interpreter's registry would graph-break
            fn = program_function(program)
        # a failure is classified by observe_trace (common.classify sees through Dynamo's
        # UserError around a DDE)
        try:
            ep = export(_Program(fn), tuple(real), dynamic_shapes=(specs,), strict=strict,  # Note [user settings]
                        prefer_deferred_runtime_asserts_over_guards=toggles.prefer_deferred_runtime_asserts_over_guards)
        except Exception as e:
            if strict:  # Note [user line] (shapefuzz/systems/compile.py)
                mark_user_line(e, program)
            raise
        if decompose:
            ep = ep.run_decompositions()
        # the user's inputs only: a tensor constant (torch.tensor(True)) is lifted to a
        # placeholder of its own, ahead of them
        phs = [n for n in ep.graph.nodes if n.op == "placeholder" and n.name in ep.graph_signature.user_inputs]
        fakes = [n.meta["val"] for n in phs]
        se = fakes[0].fake_mode.shape_env if fakes and hasattr(fakes[0], "fake_mode") else None
        out_vals = [o.meta["val"] if isinstance(o, torch.fx.Node) else o
                    for o in ep.graph.output_node().args[0]]
        mod = ep.module()
        # ep.module() checks guards and runs the graph's asserts itself (docs/explanation/torch-internals.md), but not
        # the lower bound 2 that tracing assumed for a dynamic dim (0/1 specialization): such an
        # input is outside the program's contract, run anyway (Note [export contract]).
        def accepts(r):
            return outside_contract(ep, se, toggles, fakes, r, program)

        declared = specs_dims(specs) if dim_kind != "auto" else []
        return Trace(se, mod, fakes, out_vals, accepts, lambda r: mod(*r), runs_outside=True,
                     specialized=specialized(fakes, declared, dim_kind))


def specs_dims(specs) -> list[list[int]]:
    """The dims each input's dynamic_shapes entry declares."""
    return [sorted(s) if s else [] for s in specs]


def specialized(fakes, declared: list[list[int]], dim_kind: str) -> Specialization:
    """Declared dims the trace made constant (it raised no constraint violation, or there
    would be no trace): Note [export contract]; the specialization oracle's evidence."""
    how = {"dynamic": "Dim.DYNAMIC", "named": "a named Dim"}.get(dim_kind, dim_kind)
    return Specialization(tuple(SpecializedDim(i, d, how, int(n))
                                for i, (f, dims) in enumerate(zip(fakes, declared)) if hasattr(f, "dim")
                                for d, n in constant_dims(f, dims)))


def outside_contract(ep, se, toggles, fakes, real, program) -> tuple[bool, str]:
    """(inside, "class: why"): the input against the exported program's own contract."""
    small = small_sizes_outside_contract(toggles, fakes, real, [s.shape for s in program.inputs])
    if small:
        return False, f"size-oblivious: {small}"
    binding, why = bind_tensors(fakes, real)
    if why:
        return False, f"shape: {why}"
    cls, why = contract_violation(se, binding, ranges=True) if se is not None else ("", "")
    if cls:
        return False, f"{cls}: {why}"
    ok, why = within_ranges(ep, fakes, real)
    return (True, "") if ok else (False, f"range: {why}")


def _with_branch_references(program, obs):
    """Dynamo traces the generated source, so which arm each guard_or_* branch took is not
    heard by the interpreter's hook: the reference is eager with whichever subset of those
    branches forced to the general arm agrees (compile.reference_for), per run."""
    from dataclasses import replace

    if obs.outcome.status != "ok" or obs.artifact is None:
        return obs
    und = program.undefined_outputs()
    replays = tuple(r if r.artifact is None or not (r.accepted or r.outside) else
                    replace(r, reference=reference_for(program, r.inputs, r.artifact, und))
                    for r in obs.replays)
    return replace(obs, reference=reference_for(program, program.inputs, obs.artifact, und),
                   replays=replays)
