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
import time
import traceback
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

import torch
import torch._dynamo
import torch._dynamo.guards as dynamo_guards

from shapefuzz.ops import op_where
from shapefuzz.program import InputSpec, Program, interp
from shapefuzz.program.codegen import HEADER, function_lines, function_source
from shapefuzz.program.variants import variants
from shapefuzz.systems import evidence
from shapefuzz.systems.common import (
    DecisionRecorder,
    capture,
    classify,
    exception_chain,
    first_line,
    reference_run,
    shape_env_facts,
    torch_frame,
)
from shapefuzz.systems.compile_settings import (
    CHEAP_INDUCTOR,
    CallRecord,
    CompileSettings,
    settings_of,
)
from shapefuzz.systems.evidence.recompile import CallSequence
from shapefuzz.systems.graph_facts import (
    GraphLog,
    _mark,
    _reusable,
    _silent_specialization,
    _stayed_static,
    facts_reject,
)
from shapefuzz.systems.observation import (
    Observation,
    Outcome,
    ReplayRecord,
    RunResult,
    compare_runs,
)
from shapefuzz.systems.patching import patched
from shapefuzz.systems.torch_toggles import applied, fresh_fake_caches, toggles

__all__ = ["CompileSystem", "GraphLog", "call_sequence", "classify_call", "facts_reject", "mark_user_line", "program_function"]


def program_function(program: Program, name: str = "f"):
    """The program as a real Python function (our generated, validated source; codegen only
    emits registered op names and numeric literals, tests/cover/test_hostile.py)."""
    g: dict[str, Any] = {}
    exec(compile(HEADER + function_source(program, name), _filename(name), "exec"), g)
    return g[name]


def _filename(name: str) -> str:
    return f"<shapefuzz program {name}>"


def mark_user_line(exc: BaseException, program: Program, name: str = "f") -> None:
    """Mark `exc` with the instruction Dynamo was tracing when it raised.

    Note [user line]: Dynamo runs program_function's source, not interp, so no instruction
    marks an exception it raises (Note [root cause]); Dynamo itself records the user frames it
    was tracing (`real_stack`, "from user code: ... line N" in its message). The line names the
    instruction, which becomes the exception's `shapefuzz_at`, as interp would have set it: the
    same bug then has the same `at=` through torch.compile and strict export as through make_fx
    and non-strict export (row 1 of reports/torch-2.13 through Dynamo had none)."""
    chain = list(exception_chain(exc))
    if any(hasattr(x, "shapefuzz_at") for x in chain):
        return
    frames = [f for x in chain for f in (getattr(x, "real_stack", None) or ()) if f.filename == _filename(name)]
    if not frames or frames[-1].lineno is None:
        return
    k = frames[-1].lineno - HEADER.count("\n") - 1
    lines = function_lines(program, name)
    pos = lines[k][0] if 0 <= k < len(lines) else None
    if pos is not None:
        interp.mark_at(exc, pos, program.instrs[pos].op)


# ---- Note [graph facts] ----------------------------------------------------------------------


# ---- classifying a call's failure -------------------------------------------------------------


def classify_call(e: BaseException) -> Outcome:
    """common.classify, and Dynamo's own data-dependent refusals (an Unsupported or UserError
    that names a data-dependent operation without a DDE behind it) as DDEs."""
    o = classify(e)
    if o.status == "error" and "data-dependent" in str(e) and type(e).__name__ in ("UserError", "Unsupported"):
        return Outcome("dde", o.exc_type, o.message, o.frame)
    return o


def _during_compile(e: BaseException) -> bool:
    return any(fs.filename.endswith(("_dynamo/convert_frame.py", "_dynamo/symbolic_convert.py"))
               for fs in traceback.extract_tb(e.__traceback__))


def _is_rejection(e: BaseException) -> bool:
    return str(e).startswith("Runtime assertion failed") or "Runtime assertion failed" in first_line(e)


# ---- marks ------------------------------------------------------------------------------------


# ---- references (Note [branch contract]) --------------------------------------------------------


def _soft_branches(program: Program) -> list[int]:
    return [pos for pos, ins in enumerate(program.instrs) if ins.op == "branch" and ins.args[0] != "if"]


def reference_for(program: Program, specs, result: RunResult, undefined: frozenset[int]) -> RunResult:
    """Eager, with some guard_or_* branches sent to their general arm when that is what the
    compiled call computed: which arm Dynamo took is not observable from outside, so every
    subset (at most 16) is tried and the first that agrees is the reference."""
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
    status: str  # ok | rejected | dde | constraint | error
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
    same = [v for v in variants(program, N_VARIANTS, 0) if _shapes(v) == _shapes(program.inputs)]
    resized = [v for v in variants(program, N_VARIANTS, 0) if _shapes(v) != _shapes(program.inputs)]
    resized.sort(key=lambda v: (any(n < 2 for s in v for n in s.shape), -sum(sum(s.shape) for s in v)))
    return [program.inputs, *same, *resized, program.inputs]


def _shapes(specs) -> tuple:
    return tuple(s.shape for s in specs)


# Note [no guard latency profile]: once a frame's guards are built, Dynamo times one evaluation of
# them for its compile metrics (torch._dynamo.guards.profile_guard_manager), flushing the CPU caches
# first: 23 ms a graph, 28% of this system's CPU on generated programs (benchmarks/RESULTS.md). The
# number feeds a debug log line and a metric no oracle reads; the check that decides ("guard failed
# on the same frame it was created") runs before it and is left alone. So an observation runs with
# a profile that reports 0 us. A torch without the name runs as it is.
def _no_guard_latency_profile():
    if not hasattr(dynamo_guards, "profile_guard_manager"):
        return contextlib.nullcontext()
    return patched(dynamo_guards, "profile_guard_manager", _zero_latency)


def _zero_latency(*_args) -> float:
    return 0.0


def _inductor_settings(s: CompileSettings):
    if s.backend != "inductor":
        return contextlib.nullcontext()
    import torch._inductor.config

    return torch._inductor.config.patch(dict(CHEAP_INDUCTOR))  # Note [cheap Inductor] (compile_settings.py)


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
            with (applied(s.toggles, frontend="compile") as cfg, torch._dynamo.config.patch(**dict(s.dynamo)),
                  _inductor_settings(s), _no_guard_latency_profile()):
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
        call = self._run(cf, real, rec if i == 0 else None, program)
        new = log.graphs[n_graphs:]
        runs = tuple(log.runs[n_runs:])
        fresh = interp.make_inputs(specs)
        reusable, why = (-1, "")
        if new and s.fullgraph and call.status in ("ok", "rejected"):
            reusable, why = _reusable(log.graphs, fresh, n_graphs)
        violation = ""
        if call.status != "rejected":  # an assert that fired is the graph refusing the input
            violation = next((f"graph {g}: {w}" for g in dict.fromkeys(runs)
                              if (w := facts_reject(log.graphs[g], fresh))), "")
        record = CallRecord(
            i, tuple(tuple(x.shape) for x in specs), call.status,
            call.result.error if not call.result.ok else "", len(new), runs, violation,
            reusable, why, _silent_specialization(new, marked) if call.status == "ok" else "",
            _stayed_static(new, specs, first_shapes, s) if call.status in ("ok", "rejected") else "",
            marked, tuple(str(r)[:300] for r in guard_failures.get(fn.__code__, ())[n_fail:]))
        return call, record

    @staticmethod
    def _run(cf, real, rec, program) -> _Call:
        try:
            with rec.active() if rec is not None else contextlib.nullcontext():
                out = cf(*real)
        except Exception as e:
            msg = f"{type(e).__name__}: {first_line(e)}"
            if _is_rejection(e):
                return _Call("rejected", RunResult(False, msg))
            mark_user_line(e, program)
            o = classify_call(e)
            at_compile = _during_compile(e)
            status = o.status if o.status in ("dde", "constraint") else "error"
            return _Call(status, RunResult(False, msg, (), torch_frame(e), op_where(o.op)), o, at_compile)
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        return _Call("ok", RunResult(True, "", tuple(capture(v) for v in outs)))

    def _observation(self, program, config, sequence, calls, rec, facts, t0) -> Observation:
        undefined = program.undefined_outputs()
        (first, _), records = calls[0], tuple(r for _, r in calls)
        decisions = tuple(rec.decisions)
        if first.status in ("dde", "constraint") or (first.status == "error" and first.at_compile):
            return evidence.record(Observation(self.name, config, first.outcome, decisions,
                                               elapsed_s=time.perf_counter() - t0), CallSequence(records))
        replays = []
        bso = toggles(settings_of(config).toggles).backed_size_oblivious
        for specs, (c, _r) in zip(sequence[1:], calls[1:]):
            # under backed_size_oblivious, sizes 0/1 in a dim that may be symbolic are outside
            # the contract (torch_toggles.small_sizes_outside_contract)
            small = bso and any(n < 2 and n != n0 for s, s0 in zip(specs, program.inputs)
                                for n, n0, k in zip(s.shape, s0.shape, s.dims) if k != "static")
            accepted = c.status in ("ok", "error") and not small
            ref = reference_for(program, specs, c.result, undefined)
            # what the graph did outside its contract is the contract oracle's to judge
            outside = "size-oblivious: a new size 0/1 under backed_size_oblivious" if small else ""
            replays.append(ReplayRecord(specs, accepted, ref, c.result, outside))
        facts = facts or {"guards": (), "asserts": (), "replacements": (), "ranges": ()}
        return evidence.record(Observation(
            self.name, config, Outcome("ok"), decisions, facts["guards"], facts["asserts"],
            facts["replacements"], facts["ranges"],
            reference=reference_for(program, program.inputs, first.result, undefined),
            artifact=first.result, replays=tuple(replays),
            elapsed_s=time.perf_counter() - t0), CallSequence(records))
