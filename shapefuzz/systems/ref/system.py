"""`ref`: the reference ShapeEnv as a shape system. It runs question programs and tensor programs
(through each op's symbolic shape rule, shapefuzz/systems/ref/tensors.py) and reports what it
decided as an Observation (shapefuzz.systems.observation)."""

from __future__ import annotations

import math
import time
from dataclasses import replace

import sympy

from shapefuzz.program.questions import QProgram
from shapefuzz.systems.claims import dde_check, hint_sanity, question_checks
from shapefuzz.systems.observation import Decision, Observation
from shapefuzz.systems.prover import DEFAULT_SETTINGS, SmtSettings
from shapefuzz.systems.ref.claims import Z3_CONFIGS
from shapefuzz.systems.ref.env import Node, RefEnv, concrete
from shapefuzz.systems.ref.evaluate import DataDependentError, outcome_of
from shapefuzz.systems.ref.execute import Trace, run
from shapefuzz.systems.ref.exprs import expr_str, text
from shapefuzz.systems.ref.reuse import Reads, ReuseMemo, renamed
from shapefuzz.systems.ref.settings import settings_for

__all__ = ["RefSystem", "observation", "ref_checks"]


class RefSystem:
    name = "ref"

    def observe(self, program, config: str, variants=()) -> Observation:
        """`variants` (fresh inputs for replays) are not used: the reference has no artifact."""
        settings = settings_for(config)  # an unknown name is a usage error: raise
        t0 = time.perf_counter()
        obs = self._observe(program, config, settings)
        return _with_elapsed(obs, time.perf_counter() - t0)

    def observe_reusing(self, program, config: str, variants, scratch: dict) -> Observation:
        """`observe`, or an earlier config's observation of the same program where this config
        differs from it only in settings that run never read (Note [unread toggles]); `scratch`
        lives as long as the program's jobs (systems/jobs.py) and holds its ReuseMemo."""
        memo: ReuseMemo = scratch.setdefault("reuse", ReuseMemo())
        settings = settings_for(config)
        t0 = time.perf_counter()
        z3 = not isinstance(program, QProgram) and config in Z3_CONFIGS
        obs = memo.find(settings, z3)
        if obs is not None:
            return _with_elapsed(renamed(obs, config), time.perf_counter() - t0)
        reads = Reads(settings)
        obs = self._observe(program, config, reads)
        memo.add(settings, reads, z3, obs)
        return _with_elapsed(obs, time.perf_counter() - t0)

    def answers(self, program: QProgram, config: str = "default") -> Observation:
        """The run alone, without the z3 checks of its claims (Note [echo runs], program/kinds.py)."""
        return observation(self.name, config, program, run(program, settings_for(config)))

    def _observe(self, program, config: str, settings) -> Observation:
        if isinstance(program, QProgram):
            trace = run(program, settings)
            obs = observation(self.name, config, program, trace)
            axioms, smt = ref_checks(program, trace)  # z3 over its claims (systems.claims)
            return replace(obs, axioms=axioms, smt=smt)
        # a tensor program: each op's symbolic shape rule (shapefuzz/systems/ref/tensors.py)
        from shapefuzz.systems.ref.tensors import observe_tensors  # lazy: torch for tensors only

        return observe_tensors(self.name, config, program, settings)


def _with_elapsed(obs: Observation, elapsed: float) -> Observation:
    return replace(obs, elapsed_s=elapsed)


def observation(system: str, config: str, program: QProgram, trace: Trace) -> Observation:
    env = trace.env
    exprs = [_final_expr(env, n) for n in trace.nodes]
    binding = _binding(program, env)
    subs = {s: sympy.Integer(v) for s, v in binding.items()}
    return Observation(
        system, config, outcome_of(trace.failure),
        decisions=tuple(Decision(expr_str(a.expr), str(a.value), a.how) for a in trace.answers),
        guards=tuple(expr_str(g) for g in env.guards),
        asserts=tuple(expr_str(a) for a in env.asserts),
        replacements=tuple(sorted((str(k), expr_str(v)) for k, v in env.replacements.items())),
        ranges=tuple(sorted((str(k), str(r)) for k, r in env.ranges.items())),
        out_exprs=tuple(expr_str(e) for e in exprs),
        binding=tuple(sorted((str(s), v) for s, v in binding.items())),
        out_eval=tuple(_evaluate(e, subs) for e in exprs),
    )


def _final_expr(env: RefEnv, node: Node) -> sympy.Basic:
    try:
        return env.expr_of(node)
    except ZeroDivisionError:  # a replacement made a divisor 0: the program divided by zero
        return node.raw


def _binding(program: QProgram, env: RefEnv) -> dict[sympy.Symbol, int]:
    """Every symbol's value in this run: a backed symbol's hint, an unbacked symbol's value from
    the program (in creation order), which the env itself never saw."""
    values = [i.args[0] for i in program.instrs if i.op == "unbacked"]
    out = dict(env.backed_hints)
    out.update(zip(env.unbacked, values))
    return out


def _evaluate(expr: sympy.Basic, subs: dict) -> str:
    try:
        v = concrete(expr.xreplace(subs))
    except ZeroDivisionError:
        return ""
    return "" if v is None else str(v)


def ref_checks(program, trace, settings: SmtSettings = DEFAULT_SETTINGS) -> tuple[tuple, tuple]:
    """(axioms as text, z3 checks) for the reference ShapeEnv on a question program
    (shapefuzz.systems.claims)."""
    env = trace.env
    axioms = list(trace.axioms)
    final = [e for _, _, e in axioms]
    for sym in env.backed_hints:  # final backed ranges: what produce_guards would check
        r = env.ranges.get(sym)
        if r is not None and r.lo not in (-math.inf, math.inf):
            final.append(sympy.Ge(sym, int(r.lo)))
        if r is not None and r.hi not in (-math.inf, math.inf):
            final.append(sympy.Le(sym, int(r.hi)))
    shown = tuple((at, origin, text(e)) for at, origin, e in axioms)
    f = trace.failure
    if f is not None:
        expr = getattr(f, "expr", None)
        if isinstance(f, DataDependentError) and expr is not None:
            c = dde_check(expr, final, settings)
            return shown, ((c,) if c is not None else ())
        return shown, ()
    defs = [v for _, v in program.definitions()]
    leaves = [env.expr_of(trace.nodes[v]) for ins, v in zip(program.instrs, defs)
              if ins.op in ("backed", "unbacked")]
    decisions = [(a.expr, a.value, a.how) for a in trace.answers]
    binding = _binding(program, env)
    return shown, tuple(question_checks(program, decisions, axioms, final, leaves, binding, settings)
                       + hint_sanity(env.guards, binding))
