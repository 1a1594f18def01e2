"""`make_fx` system: symbolic tracing with fake inputs whose dims are static, dynamic (duck
sized, as make_fx does by default) or unbacked, as the program marks them."""

from __future__ import annotations

from dataclasses import replace

import torch
from torch._dynamo.source import LocalSource
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext
from torch.fx.passes.runtime_assert import insert_deferred_runtime_asserts

from shapefuzz.program import interp
from shapefuzz.systems.evidence import record
from shapefuzz.systems.evidence.performance import ScalingEvidence
from shapefuzz.systems.scaling import measure, wanted
from shapefuzz.systems.torch_toggles import (
    TorchToggles,
    applied,
    fresh_fake_caches,
    small_sizes_outside_contract,
)
from shapefuzz.systems.traced import Trace, input_binding, observe_trace

__all__ = ["MakeFxSystem", "fakeify"]

DIM_DYNAMIC = {"static": DimDynamic.STATIC, "dynamic": DimDynamic.DUCK, "unbacked": DimDynamic.UNBACKED}


def fakeify(mode: FakeTensorMode, t: torch.Tensor, dims: tuple[str, ...], name: str):
    ctx = StatelessSymbolicContext(dynamic_sizes=[DIM_DYNAMIC[d] for d in dims],
                                   constraint_sizes=[None] * t.dim())
    return mode.from_tensor(t, symbolic_context=ctx, source=LocalSource(name))


def failing_guards(se, guards: list[str], real_inputs) -> list[str]:
    """The guards (python source over L['t0'] ...) that do not hold on these inputs."""
    def holds(code: str) -> bool:
        try:
            return bool(se.evaluate_guards_expression(code, real_inputs))
        except Exception:  # a guard that cannot be evaluated rejects the input
            return False

    if not guards or holds(" and ".join(f"({g})" for g in guards)):
        return []
    return [g for g in guards if not holds(g)]


def input_asserts_hold(se, fakes, real_inputs) -> tuple[bool, str]:
    """Deferred asserts over unbacked *input* dims. No graph node binds those symbols, so
    insert_deferred_runtime_asserts cannot place them; they are checks on the inputs, made here
    as torch makes them for mark_unbacked inputs."""
    import sympy

    binding = input_binding(fakes, real_inputs)
    for ras in se.deferred_runtime_asserts.values():
        for ra in ras:
            # an assert may name a symbol a later replacement renamed (u1 -> u0): the inputs
            # bind only the replacement, so read the assert through the replacements first
            expr = se.replace(ra.expr)
            if expr.free_symbols and expr.free_symbols <= set(binding):
                try:
                    holds = bool(sympy.sympify(expr.xreplace(binding)))
                except ZeroDivisionError:  # the inserted assert would raise on these inputs too
                    holds = False
                if not holds:
                    return False, f"Runtime assertion failed for expression {expr} (input dims)"
    return True, ""


class MakeFxSystem:
    """Configs: torch's defaults, and every torch_toggles config (the ShapeEnv optimizations of
    seed 000 switched to their slow paths, and the ShapeEnv settings)."""

    name = "make_fx"

    def observe(self, program, config: str, variants):
        fresh_fake_caches()
        with applied(config) as cfg:  # Note [user settings]: our own ShapeEnv
            obs = observe_trace(self.name, config, program, variants,
                                lambda hook: self._trace(program, hook, cfg.toggles))
            family = measure(program, cfg.env_kwargs) if wanted(program, obs) else None
        obs = record(obs, ScalingEvidence((family,))) if family is not None else obs
        return replace(obs, log=obs.log + (f"toggle counts: {dict(cfg.counts)}",))  # proof it ran

    def _trace(self, program, on_branch, toggles: TorchToggles | None = None) -> Trace:
        toggles = toggles or TorchToggles()
        se = ShapeEnv(**toggles.env_kwargs())  # as a user builds it (Note [user settings])
        mode = FakeTensorMode(shape_env=se)
        real = interp.make_inputs(program.inputs)
        fakes = [fakeify(mode, t, s.dims, s.name) for t, s in zip(real, program.inputs)]
        # Unbacked input dims are bound by the inputs themselves, not by a traced node.
        se.pending_fresh_unbacked_symbols.clear()
        gm = make_fx(interp.program_fn(program, on_branch=on_branch), tracing_mode="symbolic")(*fakes)
        out_node = gm.graph.output_node().args[0]
        outs = out_node if isinstance(out_node, (tuple, list)) else (out_node,)
        out_vals = [o.meta["val"] if isinstance(o, torch.fx.Node) else o for o in outs]
        # make_fx graphs carry no asserts and no guard checks (docs/explanation/torch-internals.md, "What each front end checks"): add both.
        insert_deferred_runtime_asserts(gm, se, "shapefuzz")
        gm.recompile()
        guards = se.produce_guards(fakes, [LocalSource(f"t{i}") for i in range(len(fakes))],
                                   ignore_static=False)
        unbacked_dims = [f"L['t{i}'].size()[{d}]" for i, spec in enumerate(program.inputs)
                         for d, dim_kind in enumerate(spec.dims) if dim_kind == "unbacked"]

        def accepts(real_inputs):
            outside = small_sizes_outside_contract(toggles, fakes, real_inputs, [s.shape for s in program.inputs])
            if outside:
                return False, outside
            bad = failing_guards(se, guards, real_inputs)
            if bad:
                # torch turns facts about an unbacked input dim into runtime asserts; with the
                # dim declared by symbolic context they surface here as guards. Either way they
                # reject the input the way an assert does, not as a broken guard.
                if any(u in g for g in bad for u in unbacked_dims):
                    return False, "Runtime assertion failed (guard on an unbacked input dim): " + bad[0]
                return False, "Guard failed: " + " and ".join(bad)
            return input_asserts_hold(se, fakes, real_inputs)

        return Trace(se, gm, fakes, out_vals, accepts, lambda r: gm(*r))
