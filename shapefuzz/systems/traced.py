"""What make_fx and export share once they hold a graph: running it while recording the value
of every unbacked symbol, replaying it on fresh inputs against the reference semantics, and the
z3 checks of what the trace decided, each counter-model replayed through the graph
(shapefuzz.systems.claims, Note [counterexample replay])."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sympy
import torch
import torch.fx.experimental._config as fxx
from torch.fx.experimental import symbolic_shapes as ss

from shapefuzz.ops import get_op
from shapefuzz.program import InputSpec, Program, interp
from shapefuzz.systems import evidence, tensor_history
from shapefuzz.systems.claims import (
    check_claims,
    dde_check,
    final_backed_ranges,
    hint_sanity,
    replay_bounds,
)
from shapefuzz.systems.common import (
    DecisionRecorder,
    capture,
    classify,
    eval_exprs,
    exception_chain,
    expr_str,
    first_line,
    raising_env,
    reference_run,
    run_safely,
    shape_env_facts,
    torch_frame,
)
from shapefuzz.systems.counterexample import input_axioms, model_inputs, size_axioms
from shapefuzz.systems.evidence.specialization import Specialization
from shapefuzz.systems.observation import (
    Observation,
    Outcome,
    ReplayRecord,
    RunResult,
    SmtCheck,
    compare_runs,
)
from shapefuzz.systems.prover import DEFAULT_SETTINGS, SmtSettings

__all__ = ["BindingRecorder", "Trace", "branch_recorder", "dde_facts", "observe_trace", "raising_env", "run_values",
           "tensor_checks", "tensor_dde"]


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
    #: the artifact checks its own contract (ep.module()): run it on inputs outside it too and
    #: record what it did (Note [export contract] in systems/export.py)
    runs_outside: bool = False
    specialized: Specialization | None = None  # declared-dynamic dims the trace made constant (export)


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
    asked: list = []  # Note [tensor history replay]: the fallbacks and the DDE, with their facts
    try:
        with rec.active(), interp.recording() as envs:
            tr = tensor_history.run_with(lambda: trace_fn(on_branch), asked)
    except Exception as e:
        # oracle 7: was the DDE deserved, by the facts torch held when it raised?
        env, forced, outcome = envs[-1] if envs else None, fallbacks(), classify(e)
        real = eager_run(program, forced)  # the run every check below pairs the trace with
        axioms, smt = tensor_dde(program, e, env, forced, real=real)
        values = run_values(program, env, forced, real=real)
        history = tensor_history.replay(asked, values)
        # Note [root cause]: an instruction before the one that raised may already be wrong
        diverges = first_divergence(program, env, values, forced, real=real) if outcome.status == "error" else ()
        return evidence.record(Observation(system, config, outcome, tuple(rec.decisions), axioms=axioms, smt=smt,
                                           diverges=diverges, elapsed_s=time.perf_counter() - t0), history)
    forced = fallbacks()
    real = interp.make_inputs(program.inputs)
    binder = BindingRecorder(tr.gm, tr.se)
    accepted, why = tr.accepts(real)
    # Guards must hold at the trace's own inputs (else: a finding); an assert that rejects them
    # is torch's documented contract for unbacked symbols (see oracles.agreement).
    artifact = run_safely(lambda: _flat(binder.run(*real))) if accepted else RunResult(False, why)
    binding = {**input_binding(tr.fakes, real), **binder.binding}
    facts = shape_env_facts(tr.se)
    traced_env = envs[-1] if envs else None
    replays = tuple(_replay(tr, program, forced, v, traced_env) for v in variants)
    # oracles 3 and 4: z3 over the decisions, counter-models replayed (systems.claims)
    axioms, smt = tensor_checks(program, rec, tr, binding, lambda v: _replay(tr, program, forced, v))
    return _recorded(Observation(
        system, config, Outcome("ok"), tuple(rec.decisions), facts["guards"], facts["asserts"],
        facts["replacements"], facts["ranges"],
        out_exprs=tuple(expr_str(v) for v in tr.out_vals),
        binding=tuple(sorted((str(k), v) for k, v in binding.items())),
        out_eval=eval_exprs(tr.out_vals, binding),
        fallback_branches=tuple(sorted(forced)),
        diverges=first_divergence(program, traced_env, binding, forced),
        reference=reference_run(program, program.inputs, forced),
        artifact=artifact, replays=replays, axioms=axioms, smt=smt,
        elapsed_s=time.perf_counter() - t0), tensor_history.replay(asked, binding), tr.specialized)


def _recorded(obs: Observation, *values) -> Observation:
    """`obs` with each evidence value recorded (None: the system had none to record)."""
    for v in values:
        obs = obs if v is None else evidence.record(obs, v)
    return obs


def eager_run(program: Program, forced) -> list | None:
    """Every value of the program's eager run on its own inputs, the trace's fallbacks forced;
    None when eager fails (the eager-agreement oracle judges that outcome)."""
    try:
        return interp.run(program, interp.make_inputs(program.inputs), forced)
    except Exception:
        return None


def first_divergence(program: Program, traced_env: list | None, binding: dict, forced,
                     real: list | None = None) -> tuple[str, ...]:
    """Note [root cause]: (op, family, symbolic expr, its value under the binding, eager's) of
    the first instruction whose symbolic result differs from eager's on the program's inputs
    (eager with the trace's fallbacks forced; `real`: that run, when the caller has it), or ()
    when none does or eager fails."""
    if traced_env is None:
        return ()
    real = real if real is not None else eager_run(program, forced)
    if real is None:
        return ()
    owner = [ins for ins in program.instrs for _ in range(ins.n_out)]
    base, undefined = len(program.inputs), program.undefined_data()
    then = traced_env.then if isinstance(traced_env, interp.RecordedEnv) else traced_env  # Note [root cause at the time]
    for k, (sym, val) in enumerate(zip(then[base:], real[base:])):
        if base + k in undefined:  # torch.empty's data: each run reads other values
            continue
        got = eval_exprs([sym], binding)[0]
        want = _concrete(val)
        if got and want and got != want:
            ins = owner[k]
            return ins.op, get_op(ins.op).family, expr_str(sym), got, want
    return ()


def _concrete(v: Any) -> str:
    if isinstance(v, torch.Tensor):
        return "[" + ", ".join(str(int(n)) for n in v.shape) + "]"
    return str(int(v)) if isinstance(v, int) and not isinstance(v, bool) else ""


def _flat(outs: Any) -> tuple:
    return tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)


def _replay(tr: Trace, program: Program, forced, specs: tuple[InputSpec, ...],
            traced_env: list | None = None) -> ReplayRecord:
    ref = reference_run(program, specs, forced)
    real = interp.make_inputs(specs)
    accepted, why = tr.accepts(real)
    if not accepted and not tr.runs_outside:
        return ReplayRecord(specs, False, ref, RunResult(False, why))
    outside = "" if accepted else why
    try:
        outs = _flat(tr.call(real))
    except Exception as e:
        msg = f"{type(e).__name__}: {first_line(e)}"
        if _is_rejection(e):  # a runtime assert or guard fired: the input is outside the trace
            return ReplayRecord(specs, False, ref, RunResult(False, msg), outside)
        return ReplayRecord(specs, accepted, ref, RunResult(False, msg, (), torch_frame(e)), outside)
    art = RunResult(True, "", tuple(capture(v) for v in outs))
    diverges = ()
    if traced_env is not None and compare_runs(ref, art, program.undefined_outputs()) is not None:
        diverges = _replay_divergence(tr, program, forced, specs, traced_env)
    return ReplayRecord(specs, accepted, ref, art, outside, diverges)


def _replay_divergence(tr: Trace, program: Program, forced, specs: tuple[InputSpec, ...],
                       traced_env: list) -> tuple[str, ...]:
    """Note [root cause] on a replayed input the artifact gets wrong: the first instruction whose
    symbolic result, under this input's binding (unbacked symbols read off the graph's run),
    differs from eager's on it. So a squeeze met on a replay is bucketed where it is met on the
    traced inputs."""
    try:
        real = interp.make_inputs(specs)
        binder = BindingRecorder(tr.gm, tr.se)
        binder.run(*real)
        eager = interp.run(program, interp.make_inputs(specs), forced)
    except Exception:  # the replay's outcome is the finding; its bucket falls back to the symptom
        return ()
    binding = {**input_binding(tr.fakes, real), **binder.binding}
    return first_divergence(program, traced_env, binding, forced, real=eager)


def _is_rejection(e: Exception) -> bool:
    s = str(e)
    return s.startswith("Runtime assertion failed") or s.startswith("Guard failed")


# ---- z3 over the trace's decisions (shapefuzz.systems.claims) ----------------------------------
def tensor_checks(program, rec, tr, binding: dict, replay, settings: SmtSettings = DEFAULT_SETTINGS
                  ) -> tuple[tuple, tuple]:
    """(axioms as text, z3 checks) for a successful trace. `rec` is the DecisionRecorder, `tr`
    the Trace, `replay(specs) -> ReplayRecord` runs eager and the artifact on an input."""
    se = tr.se
    gm = getattr(tr.gm, "graph", None) and tr.gm
    axioms = (input_axioms(program, tr.fakes, bool(fxx.backed_size_oblivious),
                           bool(getattr(se, "specialize_zero_one", True)))
              + (size_axioms(gm) if gm is not None else []) + rec.axioms_of(se))
    facts = [e for _, _, e in axioms]
    syms = set().union(*(getattr(e, "free_symbols", set()) for e in facts)) if facts else set()
    final = facts + final_backed_ranges(se, syms | set(binding))
    bounds = replay_bounds(syms, binding)
    undefined = program.undefined_outputs()

    def bind(specs):
        return _bind(tr, specs)

    def realize(k, claim, model):
        specs, note = model_inputs(program, tr.fakes, bind, model)
        if specs is None:
            return False, note, None, None
        r = replay(specs)
        if not r.accepted or r.artifact is None:
            return False, f"{note}; the artifact rejects the input ({r.artifact.error if r.artifact else ''})", r, None
        diff = compare_runs(r.reference, r.artifact, undefined)
        if diff is None:
            return False, f"{note}; eager and the artifact agree on it", r, None
        return True, f"{note}; {diff[0]}: {diff[2]}", r, None

    # decisions of another ShapeEnv (tracing a torch.cond branch...) are over other symbols
    foreign = {k for k, env in enumerate(rec.envs) if env != id(se)}
    checks = check_claims(rec.raw, axioms, final, rec.unchecked | foreign, bounds, settings, realize)
    checks += hint_sanity([g.expr for g in se.guards], binding)
    text = tuple((at, origin, str(e)) for at, origin, e in axioms)
    return text, tuple(checks)


def tensor_dde(program, exc, traced_env=None, forced=frozenset(),
               settings: SmtSettings = DEFAULT_SETTINGS, real: list | None = None) -> tuple[tuple, tuple]:
    """(facts, spurious-DDE check) when tracing stopped at a data-dependent error: the facts the
    ShapeEnv that raised held at that moment (dde_facts), and z3 on the expression it raised on,
    unhinted. No verdict when a fact is false at the run's own values (a wrong fact in torch is
    another bug, and from a false fact z3 proves anything)."""
    dde = next((x for x in exception_chain(exc) if isinstance(x, ss.GuardOnDataDependentSymNode)), None)
    se, expr = raising_env(dde) if dde is not None else (None, None)
    if se is None:
        return (), ()
    facts = dde_facts(se)
    text = tuple((0, origin, str(e)) for origin, e in facts)
    if not isinstance(expr, sympy.Basic):
        return text, ()
    values = run_values(program, traced_env, forced, real=real)
    wrong = next((e for _, e in facts if _false_at(e, values)), None)
    if wrong is not None:
        return text, (SmtCheck("spurious-dde", -1, str(expr), "unknown",
                               f"a fact is false at the run's values: {wrong}"),)
    c = dde_check(expr, [e for _, e in facts], settings)
    return text, ((c,) if c is not None else ())


def dde_facts(se: ss.ShapeEnv) -> list[tuple[str, sympy.Basic]]:
    """(origin, fact) for every fact the ShapeEnv holds (Note [facts torch is given] in
    shapefuzz/oracles/spurious_dde.py): its guards, deferred runtime asserts (torch._check,
    _check_is_size), replacements, and the finite bounds of its symbols' value ranges (a size's
    creation range, an unbacked size >= 0, item()'s and nonzero's ranges, what checks refined)."""
    out = [("guard", g.expr) for g in se.guards]
    out += [("assert", ra.expr) for ras in se.deferred_runtime_asserts.values() for ra in ras]
    out += [("replacement", sympy.Eq(k, v)) for k, v in se.replacements.items() if k != v]
    for sym, vr in se.var_to_range.items():
        out += [("range", sympy.Ge(sym, vr.lower))] if vr.lower.is_Integer else []
        out += [("range", sympy.Le(sym, vr.upper))] if vr.upper.is_Integer else []
    return [(k, e) for k, e in out if isinstance(e, sympy.Basic) and e.free_symbols]


def run_values(program, traced_env, forced, real: list | None = None) -> dict:
    """symbol -> its value in this run: each symbolic value the trace bound before it stopped,
    paired with eager's (the trace's fallbacks forced; `real`: that run, when the caller has
    it), SymInts and tensor sizes."""
    if traced_env is None:
        return {}
    real = real if real is not None else eager_run(program, forced)
    if real is None:
        return {}
    out = {}
    for sym, val in zip(traced_env, real):
        if isinstance(sym, torch.Tensor) and isinstance(val, torch.Tensor):
            if sym.dim() != val.dim():  # a wrong rank (a squeeze that kept a dim) pairs nothing
                continue
            pairs = zip(sym.shape, val.shape)
        else:
            pairs = [(sym, val)]
        for s, v in pairs:
            if isinstance(s, torch.SymInt) and isinstance(s.node.expr, sympy.Symbol):
                # the first value a symbol met is its binding (an input's size, an item()):
                # a later wrong result must not rebind it
                out.setdefault(s.node.expr, sympy.Integer(int(v)))
    return out


def _false_at(fact, values: dict) -> bool:
    try:
        return fact.xreplace(values) is sympy.false
    except (TypeError, ValueError, ZeroDivisionError):
        return False


def _bind(tr, specs) -> dict[str, int]:
    """Run the traced graph on inputs, reading off every symbol's value (as far as it gets)."""
    real = interp.make_inputs(specs)
    b = BindingRecorder(tr.gm, tr.se)
    try:
        b.run(*real)
    except Exception:  # an assert or kernel error: keep what was bound so far
        pass
    out = {str(k): int(v) for k, v in input_binding(tr.fakes, real).items()}
    out.update({str(k): int(v) for k, v in b.binding.items()})
    return out
