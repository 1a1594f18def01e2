"""`compile` system: torch.compile run as a *sequence of calls* (Note [call sequence]).

Note [call sequence]: the program's source (codegen) becomes a real Python function, compiled
once per program after torch._dynamo.reset(), then called on the program's inputs, on each
fresh variant (same shapes with other data, then other sizes, 0 and 1 included) and on the
program's inputs again. Every call is compared with eager (oracles 1 and 2: the first call is
the artifact, the others are replays). A recording backend wraps the real one (eager /
aot_eager / inductor), so for each call we know which graphs were compiled and which ran, and
each graph keeps its ShapeEnv and fake inputs. Before a graph runs, its own facts are checked
on the real arguments (Note [graph facts]): a graph that runs where they fail was reused by a
guard that should have rejected the input (a critical finding even if the values happen to
agree). When a call compiles although an earlier graph's facts accept its inputs, that is an
extra recompile (by design or not: a low-severity finding of the recompile oracle).

Note [graph facts]: what a compiled graph assumed, read from its own ShapeEnv, never from the
guard code torch generated (that code is what is under test): static sizes equal, dims that
share a symbol (duck sizing) equal, every recorded guard true, 0/1 specialization (a backed
symbol whose range starts at 2 is not 0 or 1), deferred asserts over input sizes true. Facts
over symbols the arguments do not bind are skipped, so the check can only under-report."""

from __future__ import annotations

import contextlib
import re
import time
import traceback
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any

import sympy
import torch
import torch._dynamo
from torch.utils._sympy.symbol import SymT, symbol_is_type

from shapefuzz import interp
from shapefuzz.codegen import HEADER, function_source
from shapefuzz.observation import Observation, Outcome, ReplayRecord, RunResult, compare_runs
from shapefuzz.program import InputSpec, Program
from shapefuzz.systems.common import (
    DecisionRecorder,
    capture,
    classify,
    first_line,
    shape_env_facts,
    torch_frame,
)
from shapefuzz.systems.compile_settings import CallRecord, CompileSettings, settings_of
from shapefuzz.systems.torch_toggles import applied, fresh_fake_caches, toggles

__all__ = ["CompileSystem", "GraphLog", "call_sequence", "classify_call", "facts_reject", "program_function"]


def program_function(program: Program, name: str = "f"):
    """The program as a real Python function (our generated, validated source; codegen only
    emits registered op names and numeric literals, tests/cover/test_hostile.py)."""
    g: dict[str, Any] = {}
    exec(compile(HEADER + function_source(program, name), f"<shapefuzz program {name}>", "exec"), g)  # noqa: S102
    return g[name]


@dataclass
class Graph:
    """One compiled graph: its ShapeEnv (whose tracked fakes are every input Dynamo wrapped
    while tracing the frame, pruned ones included) and the call that compiled it."""

    gid: int
    se: Any
    call: int

    def tracked(self) -> list[tuple[str, Any]]:
        return [(tf.source.name, tf.fake) for tf in getattr(self.se, "tracked_fakes", None) or ()]

    def input_tensors(self, n_inputs: int | None = None) -> list[tuple[int, str, Any]]:
        """(input index, source, fake) of the tracked fakes that are whole program inputs (not
        one of their sizes, not an intermediate of a graph break)."""
        out = []
        for src, f in self.tracked():
            m = _SOURCE.match(src)
            if m and m.group(2) is None and isinstance(f, torch.Tensor) and (
                    n_inputs is None or int(m.group(1)) < n_inputs):
                out.append((int(m.group(1)), src, f))
        return out


@dataclass
class GraphLog:
    """A backend that records every graph compiled and every graph run (Note [call sequence])."""

    backend: str
    graphs: list[Graph] = field(default_factory=list)
    runs: list[int] = field(default_factory=list)  # graph ids, in the order they ran
    call: int = 0

    def __call__(self, gm, example_inputs):
        from torch._guards import detect_fake_mode

        mode = detect_fake_mode(example_inputs)
        g = Graph(len(self.graphs), mode.shape_env if mode is not None else None, self.call)
        self.graphs.append(g)
        inner = _inner_backend(self.backend)(gm, example_inputs)

        def run(*args):
            self.runs.append(g.gid)
            return inner(*args)

        return run


def _inner_backend(name: str):
    if name == "eager":
        return lambda gm, ex: gm.forward
    from torch._dynamo.backends.registry import lookup_backend

    return lookup_backend(name)


# ---- Note [graph facts] ----------------------------------------------------------------------


def bind_inputs(g: Graph, real: list[torch.Tensor], strides: bool = False) -> tuple[dict, str]:
    """The binding of g's input symbols to these program inputs, or why they cannot be bound
    (a static size differs, two dims that share a symbol differ). Tracked fakes whose source is
    not a program input (graph breaks) are skipped."""
    binding: dict[sympy.Symbol, int] = {}
    for src, f in g.tracked():
        m = _SOURCE.match(src)
        if not m or int(m.group(1)) >= len(real):
            continue
        t = real[int(m.group(1))]
        v = t if m.group(2) is None else int(t.shape[int(m.group(2))])
        why = _bind(f, v, binding, src)
        if why:
            return binding, why
    if strides:
        return binding, _strides_differ(g, real, binding)
    return binding, ""


def _strides_differ(g: Graph, real: list[torch.Tensor], binding: dict) -> str:
    """Strides are guarded too (a size-0 dim changes a contiguous tensor's strides)."""
    for i, src, f in g.input_tensors(len(real)):
        t = real[i]
        if f.dim() != t.dim():
            continue
        for d, (fs, n) in enumerate(zip(f.stride(), t.stride())):
            e = fs.node.expr if isinstance(fs, torch.SymInt) else sympy.Integer(int(fs))
            v = e.xreplace({k: sympy.Integer(x) for k, x in binding.items()})
            if v.is_Integer and int(v) != n:
                return f"{src}.stride()[{d}] = {n}, the graph assumed {e} = {v}"
    return ""


def facts_reject(g: Graph, real: list[torch.Tensor], strides: bool = False) -> str:
    """Why graph g's own facts reject these program inputs ("" when they accept)."""
    if g.se is None:
        return ""
    binding, why = bind_inputs(g, real, strides)
    if why:
        return why
    se = g.se
    for guard in se.guards:
        e = guard.expr
        if e.free_symbols and e.free_symbols <= set(binding):
            val = _eval(e, binding)
            if val is False:
                return f"guard {e} is false for {_show(binding, e.free_symbols)}"
    for sym, n in binding.items():
        vr = se.var_to_range.get(sym)
        if symbol_is_type(sym, SymT.SIZE) and vr is not None and vr.lower >= 2 and n in (0, 1):
            return f"{sym} = {n}, but the graph assumed {sym} >= 2 (0/1 specialization)"
    return ""


def asserts_reject(g: Graph, binding: dict) -> str:
    for ras in g.se.deferred_runtime_asserts.values():
        for ra in ras:
            e = ra.expr
            if e.free_symbols and e.free_symbols <= set(binding) and _eval(e, binding) is False:
                return f"runtime assert {e}"
    return ""


def _bind(f, v, binding: dict, src: str) -> str:
    if isinstance(f, torch.SymInt):
        return _bind_one(f, v, binding, src)
    if isinstance(f, torch.Tensor) and isinstance(v, torch.Tensor):
        if f.dim() != v.dim():
            return f"{src}: rank {v.dim()}, the graph assumed {f.dim()}"
        for d, (s, n) in enumerate(zip(f.shape, v.shape)):
            why = _bind_one(s, n, binding, f"{src}.size()[{d}]")
            if why:
                return why
    return ""


def _bind_one(s, n, binding: dict, where: str) -> str:
    n = int(n)
    if not isinstance(s, torch.SymInt):
        return "" if int(s) == n else f"{where}: size {n}, the graph was compiled for {int(s)}"
    e = s.node._expr  # the raw symbol: replacements are facts checked below via guards
    if isinstance(e, sympy.Symbol):
        if e in binding and binding[e] != n:
            return f"{where}: {e} = {n} here but {binding[e]} elsewhere (the graph assumed them equal)"
        binding[e] = n
        return ""
    if isinstance(e, sympy.Integer) and int(e) != n:
        return f"{where}: size {n}, the graph was compiled for {int(e)}"
    return ""


def _eval(e, binding: dict):
    try:
        r = e.xreplace({k: sympy.Integer(v) for k, v in binding.items()})
        r = sympy.simplify(r) if not isinstance(r, (sympy.logic.boolalg.BooleanAtom, sympy.Integer)) else r
        if r in (sympy.true, True):
            return True
        if r in (sympy.false, False):
            return False
    except Exception:  # noqa: BLE001 (an expression we cannot evaluate decides nothing: under-report)
        return None
    return None


def _show(binding: dict, syms) -> str:
    return ", ".join(f"{s}={binding[s]}" for s in sorted(syms, key=str))


_SOURCE = re.compile(r"^L\['v(\d+)'\](?:\.size\(\)\[(\d+)\])?$")


def _reusable(graphs: list[Graph], real: list[torch.Tensor], before: int) -> tuple[int, str]:
    """An earlier graph whose facts (guards, ranges, asserts) all accept these inputs."""
    for g in graphs[:before]:
        if g.se is None or facts_reject(g, real, strides=True):
            continue
        binding, _ = bind_inputs(g, real)
        if asserts_reject(g, binding) or not _within_ranges(g, binding):
            continue
        return g.gid, f"graph {g.gid} (compiled at call {g.call}) accepts {_show(binding, binding) or 'these static shapes'}"
    return -1, ""


def _within_ranges(g: Graph, binding: dict) -> bool:
    for sym, n in binding.items():
        vr = g.se.var_to_range.get(sym)
        if vr is not None and not (vr.lower <= n <= vr.upper):
            return False
    return True


# ---- classifying a call's failure -------------------------------------------------------------


def classify_call(e: BaseException) -> Outcome:
    """common.classify, and Dynamo's own data-dependent refusals (an Unsupported or UserError
    that names a data-dependent operation without a DDE behind it) as DDEs."""
    o = classify(e)
    if o.kind == "error" and "data-dependent" in str(e) and type(e).__name__ in ("UserError", "Unsupported"):
        return Outcome("dde", o.exc_type, o.message, o.frame)
    return o


def _during_compile(e: BaseException) -> bool:
    return any(fs.filename.endswith(("_dynamo/convert_frame.py", "_dynamo/symbolic_convert.py"))
               for fs in traceback.extract_tb(e.__traceback__))


def _is_rejection(e: BaseException) -> bool:
    return str(e).startswith("Runtime assertion failed") or "Runtime assertion failed" in first_line(e)


# ---- marks ------------------------------------------------------------------------------------


def _mark(real: list[torch.Tensor], specs: tuple[InputSpec, ...], marks: str) -> tuple[tuple[int, int], ...]:
    """Apply the config's marks to fresh input tensors; returns the dims marked dynamic. Dims of
    size 0 or 1 are left alone: marking them dynamic is a user error by design."""
    dyn = []
    for i, (t, s) in enumerate(zip(real, specs)):
        for d, kind in enumerate(s.dims):
            want = {"program": {"static": "static", "dynamic": "dynamic", "unbacked": "unbacked"}[kind],
                    "": ""}.get(marks, "" if kind == "static" else marks)
            if want == "static":
                torch._dynamo.mark_static(t, d)
            elif want == "dynamic" and t.shape[d] >= 2:
                torch._dynamo.mark_dynamic(t, d)
                dyn.append((i, d))
            elif want == "unbacked":
                torch._dynamo.decorators.mark_unbacked(t, d)
    return tuple(dyn)


def _silent_specialization(graphs: list[Graph], marked: tuple[tuple[int, int], ...]) -> str:
    for g in graphs:
        for i, _, f in g.input_tensors():
            for j, d in marked:
                if j == i and d < f.dim():
                    s = f.shape[d]
                    e = s.node.expr if isinstance(s, torch.SymInt) else sympy.Integer(int(s))
                    if isinstance(e, sympy.Integer):
                        return f"input {i} dim {d} was marked dynamic; graph {g.gid} specialized it to {e}"
    return ""


def _stayed_static(graphs: list[Graph], specs, first_shapes, s: CompileSettings) -> str:
    """Automatic dynamic: a dim whose size differs from the first compile's (both >= 2) must be
    compiled with a symbol. One that a branch pinned is a replaced symbol, not a raw constant,
    and is fine (seed 002: the guard s0 == 4 specializes it)."""
    if not (s.automatic_dynamic and s.fullgraph and s.marks in ("", "dynamic", "unbacked")):
        return ""
    for g in graphs:
        for j, _, f in g.input_tensors():
            now, then = specs[j].shape, first_shapes[j]
            for d, sz in enumerate(f.shape):
                if d >= len(now) or len(now) != len(then) or now[d] == then[d] or min(now[d], then[d]) < 2:
                    continue
                raw = sz.node._expr if isinstance(sz, torch.SymInt) else sympy.Integer(int(sz))
                if isinstance(raw, sympy.Integer):
                    return (f"input {j} dim {d}: size {then[d]} at the first compile, {now[d]} now, "
                            f"yet graph {g.gid} was compiled with it static ({raw})")
    return ""


# ---- references (Note [branch contract]) --------------------------------------------------------


def _soft_branches(program: Program) -> list[int]:
    return [pos for pos, ins in enumerate(program.instrs) if ins.op == "branch" and ins.args[0] != "if"]


def reference_for(program: Program, specs, result: RunResult, undefined: frozenset[int]) -> RunResult:
    """Eager, with some guard_or_* branches sent to their general arm when that is what the
    compiled call computed: which arm Dynamo took is not observable from outside, so every
    subset (at most 16) is tried and the first that agrees is the reference."""
    from shapefuzz.systems.common import reference_run

    ref = reference_run(program, specs, frozenset())
    if compare_runs(ref, result, undefined) is None:
        return ref
    soft = _soft_branches(program)
    if len(soft) > 4:
        return ref
    for k in range(1, len(soft) + 1):
        for sub in combinations(soft, k):
            alt = reference_run(program, specs, frozenset(sub))
            if compare_runs(alt, result, undefined) is None:
                return alt
    return ref


# ---- the system --------------------------------------------------------------------------------


@dataclass
class _Call:
    kind: str  # ok | rejected | dde | constraint | error
    result: RunResult
    outcome: Outcome | None = None  # the failure, classified
    at_compile: bool = False


#: fresh inputs per call sequence. The sequence depends on the program alone (not on the
#: variants a campaign passes), so shrinking, `shapefuzz replay` and repro.py replay the same calls.
N_VARIANTS = 8


def call_sequence(program: Program) -> list[tuple[InputSpec, ...]]:
    """The program's inputs; new data at the same shapes; new sizes, largest first (automatic
    dynamic then compiles its symbolic graph at a large hint, so every size guard it records
    bounds the sizes from below and the smaller calls that follow test it), sizes 0 and 1
    last; the program's inputs again (the cache after all that must still be right)."""
    from shapefuzz.variants import variants

    same = [v for v in variants(program, N_VARIANTS, 0) if _shapes(v) == _shapes(program.inputs)]
    resized = [v for v in variants(program, N_VARIANTS, 0) if _shapes(v) != _shapes(program.inputs)]
    resized.sort(key=lambda v: (any(n < 2 for s in v for n in s.shape), -sum(sum(s.shape) for s in v)))
    return [program.inputs, *same, *resized, program.inputs]


def _shapes(specs) -> tuple:
    return tuple(s.shape for s in specs)


class CompileSystem:
    name = "compile"

    def observe(self, program: Program, config: str, variants) -> Observation:
        s = settings_of(config)
        t0 = time.perf_counter()
        fn = program_function(program)
        sequence = call_sequence(program)
        log = GraphLog(s.backend)
        rec = DecisionRecorder()
        fresh_fake_caches()
        torch._dynamo.reset()
        try:
            with applied(s.toggles, force_env=True) as cfg, torch._dynamo.config.patch(**dict(s.dynamo)):
                cf = torch.compile(fn, backend=log, fullgraph=s.fullgraph, dynamic=s.dynamic)
                first = tuple(x.shape for x in program.inputs)
                calls = [self._one_call(cf, fn, program, specs, i, s, log, rec, first)
                         for i, specs in enumerate(sequence)]
        finally:
            facts = shape_env_facts(log.graphs[0].se) if log.graphs and log.graphs[0].se is not None else None
            torch._dynamo.reset()
        obs = self._observation(program, config, sequence, calls, rec, facts, t0)
        return replace(obs, log=obs.log + (f"toggle counts: {dict(cfg.counts)}",))  # proof it ran

    def _one_call(self, cf, fn, program, specs, i, s: CompileSettings, log: GraphLog, rec, first_shapes):
        from torch._dynamo.utils import guard_failures

        real = interp.make_inputs(specs)
        marked = _mark(real, specs, s.marks)
        n_graphs, n_runs = len(log.graphs), len(log.runs)
        n_fail = len(guard_failures.get(fn.__code__, ()))
        log.call = i
        call = self._run(cf, real, rec if i == 0 else None)
        new = log.graphs[n_graphs:]
        runs = tuple(log.runs[n_runs:])
        fresh = interp.make_inputs(specs)
        reusable, why = (-1, "")
        if new and s.fullgraph and call.kind in ("ok", "rejected"):
            reusable, why = _reusable(log.graphs, fresh, n_graphs)
        violation = ""
        if call.kind != "rejected":  # an assert that fired is the graph refusing the input
            violation = next((f"graph {g}: {w}" for g in dict.fromkeys(runs)
                              if (w := facts_reject(log.graphs[g], fresh))), "")
        record = CallRecord(
            i, tuple(tuple(x.shape) for x in specs), call.kind,
            call.result.error if not call.result.ok else "", len(new), runs, violation,
            reusable, why, _silent_specialization(new, marked) if call.kind == "ok" else "",
            _stayed_static(new, specs, first_shapes, s) if call.kind in ("ok", "rejected") else "",
            marked, tuple(str(r)[:300] for r in guard_failures.get(fn.__code__, ())[n_fail:]))
        return call, record

    @staticmethod
    def _run(cf, real, rec) -> _Call:
        try:
            with rec.active() if rec is not None else contextlib.nullcontext():
                out = cf(*real)
        except Exception as e:  # noqa: BLE001 (the program under test failing is data)
            msg = f"{type(e).__name__}: {first_line(e)}"
            if _is_rejection(e):
                return _Call("rejected", RunResult(False, msg))
            o = classify_call(e)
            at_compile = _during_compile(e)
            kind = o.kind if o.kind in ("dde", "constraint") else "error"
            return _Call(kind, RunResult(False, msg, (), torch_frame(e)), o, at_compile)
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        return _Call("ok", RunResult(True, "", tuple(capture(v) for v in outs)))

    def _observation(self, program, config, sequence, calls, rec, facts, t0) -> Observation:
        undefined = program.undefined_outputs()
        (first, _), records = calls[0], tuple(r for _, r in calls)
        decisions = tuple(rec.decisions)
        if first.kind in ("dde", "constraint") or (first.kind == "error" and first.at_compile):
            return Observation(self.name, config, first.outcome, decisions, calls=records,
                               elapsed_s=time.perf_counter() - t0)
        replays = []
        bso = toggles(settings_of(config).toggles).backed_size_oblivious
        for specs, (c, r) in zip(sequence[1:], calls[1:]):
            # under backed_size_oblivious, sizes 0/1 in a dim that may be symbolic are outside
            # the contract (torch_toggles.small_sizes_outside_contract)
            small = bso and any(n < 2 and n != n0 for s, s0 in zip(specs, program.inputs)
                                for n, n0, k in zip(s.shape, s0.shape, s.dims) if k != "static")
            accepted = c.kind in ("ok", "error") and not small
            ref = reference_for(program, specs, c.result, undefined)
            replays.append(ReplayRecord(specs, accepted, ref, c.result))
        facts = facts or {"guards": (), "asserts": (), "replacements": (), "ranges": ()}
        return Observation(
            self.name, config, Outcome("ok"), decisions, facts["guards"], facts["asserts"],
            facts["replacements"], facts["ranges"],
            reference=reference_for(program, program.inputs, first.result, undefined),
            artifact=first.result, replays=tuple(replays), calls=records,
            elapsed_s=time.perf_counter() - t0)
