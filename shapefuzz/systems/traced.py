"""What make_fx and export share once they hold a graph: running it while recording the value
of every unbacked symbol, and replaying it on fresh inputs against the reference semantics."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sympy
import torch
from torch.fx.experimental import symbolic_shapes as ss

from shapefuzz import interp
from shapefuzz.observation import Observation, Outcome, ReplayRecord, RunResult
from shapefuzz.oracles.soundness import tensor_checks, tensor_dde
from shapefuzz.program import InputSpec, Program
from shapefuzz.systems.common import (DecisionRecorder, capture, classify, eval_exprs, expr_str,
                                      reference_run, run_safely, shape_env_facts, first_line,
                                      torch_frame)

__all__ = ["BindingRecorder", "Trace", "observe_trace", "branch_recorder"]


class BindingRecorder(torch.fx.Interpreter):
    """Runs a graph on real inputs and records the concrete value of every unbacked symbol the
    graph binds (from node.meta['unbacked_bindings'])."""

    def __init__(self, gm: torch.fx.GraphModule, se: ss.ShapeEnv):
        super().__init__(gm)
        self.se = se
        self.binding: dict[sympy.Symbol, int] = {}

    def run_node(self, n):
        r = super().run_node(n)
        b = n.meta.get("unbacked_bindings")
        if b:
            for sym, path in ss.resolve_unbacked_bindings(self.se, b).items():
                v = r
                for key in path:
                    v = key.get(v)
                self.binding[sym] = int(v)
        return r


@dataclass
class Trace:
    """A successful trace: the runnable artifact and what to evaluate it with."""

    se: ss.ShapeEnv
    gm: torch.fx.GraphModule  # interpreted to bind unbacked symbols
    fakes: list[Any]  # fake inputs, in program order
    out_vals: list[Any]  # fake outputs (meta vals)
    accepts: Callable[[list[torch.Tensor]], tuple[bool, str]]  # guards (and asserts) on inputs
    call: Callable[[list[torch.Tensor]], Any]  # the artifact as a user would call it


def branch_recorder(program: Program):
    """on_branch hook, and the set of fallback branches it saw (not plain `if`s)."""
    taken: dict[int, bool] = {}

    def on_branch(pos: int, fast: bool) -> None:
        taken[pos] = fast

    def fallbacks() -> frozenset[int]:
        return frozenset(p for p, fast in taken.items()
                         if not fast and program.instrs[p].args[0] != "if")

    return on_branch, fallbacks


def input_binding(fakes: list[Any], real: list[torch.Tensor]) -> dict[sympy.Symbol, int]:
    out = {}
    for f, r in zip(fakes, real):
        for s, n in zip(f.shape, r.shape):
            if isinstance(s, torch.SymInt) and isinstance(s.node.expr, sympy.Symbol):
                out[s.node.expr] = int(n)
    return out


def observe_trace(system: str, config: str, program: Program, variants, trace_fn) -> Observation:
    """Run `trace_fn(on_branch) -> Trace`, then the artifact on the program's inputs and on each
    variant. Every failure of the program under test becomes part of the observation."""
    t0 = time.perf_counter()
    rec = DecisionRecorder()
    on_branch, fallbacks = branch_recorder(program)
    try:
        with rec.active():
            tr = trace_fn(on_branch)
    except Exception as e:
        axioms, smt = tensor_dde(program, rec, e)  # oracle 7: was the DDE deserved?
        return Observation(system, config, classify(e), tuple(rec.decisions), axioms=axioms, smt=smt,
                           elapsed_s=time.perf_counter() - t0)
    forced = fallbacks()
    real = interp.make_inputs(program.inputs)
    binder = BindingRecorder(tr.gm, tr.se)
    accepted, why = tr.accepts(real)
    # Guards must hold at the trace's own inputs (else: a finding); an assert that rejects them
    # is torch's documented contract for unbacked symbols (see oracles.agreement).
    artifact = run_safely(lambda: _flat(binder.run(*real))) if accepted else RunResult(False, why)
    binding = {**input_binding(tr.fakes, real), **binder.binding}
    facts = shape_env_facts(tr.se)
    replays = tuple(_replay(tr, program, forced, v) for v in variants)
    # oracles 3 and 4: z3 over the decisions, counter-models replayed (oracles.soundness)
    axioms, smt = tensor_checks(program, rec, tr, binding, lambda v: _replay(tr, program, forced, v))
    return Observation(
        system, config, Outcome("ok"), tuple(rec.decisions), facts["guards"], facts["asserts"],
        facts["replacements"], facts["ranges"],
        out_exprs=tuple(expr_str(v) for v in tr.out_vals),
        binding=tuple(sorted((str(k), v) for k, v in binding.items())),
        out_eval=eval_exprs(tr.out_vals, binding),
        fallback_branches=tuple(sorted(forced)),
        reference=reference_run(program, program.inputs, forced),
        artifact=artifact, replays=replays, axioms=axioms, smt=smt, elapsed_s=time.perf_counter() - t0)


def _flat(outs: Any) -> tuple:
    return tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)


def _replay(tr: Trace, program: Program, forced, specs: tuple[InputSpec, ...]) -> ReplayRecord:
    ref = reference_run(program, specs, forced)
    real = interp.make_inputs(specs)
    accepted, why = tr.accepts(real)
    if not accepted:
        return ReplayRecord(specs, False, ref, RunResult(False, why))
    try:
        outs = _flat(tr.call(real))
    except Exception as e:
        msg = f"{type(e).__name__}: {first_line(e)}"
        if _is_rejection(e):  # a runtime assert or guard fired: the input is outside the trace
            return ReplayRecord(specs, False, ref, RunResult(False, msg))
        return ReplayRecord(specs, True, ref, RunResult(False, msg, (), torch_frame(e)))
    return ReplayRecord(specs, True, ref, RunResult(True, "", tuple(capture(v) for v in outs)))


def _is_rejection(e: Exception) -> bool:
    s = str(e)
    return s.startswith("Runtime assertion failed") or s.startswith("Guard failed")
