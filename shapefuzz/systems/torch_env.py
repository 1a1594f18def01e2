"""`torch-env` system: torch's own ShapeEnv driven directly by a shape-question program
(shapefuzz.program.questions), under the torch configs of torch_toggles.

Each instruction maps to the torch API a tracer would use (docs/explanation/torch-internals.md):
  backed(h)     create_symbol(h, ConstantSource("v<k>"), DUCK) + create_symintnode; 0/1 hints
                become plain ints under 0/1 specialization, as they do for tensor sizes
  unbacked(x)   create_unbacked_symint(); x is never told to torch (it is the ground truth the
                binding and the truth oracle use)
  binop         SymInt arithmetic; torch.sym_max / torch.sym_min
  check         torch._check(a cmp b)
  check_is_size torch._check_is_size(a)
  constrain_range  torch's range constraint on a symbol (Note [facts torch is given]):
                _constrain_range_for_size (what torch._constrain_as_size does when traced) for
                a lower bound >= 0, constrain_range below that
  ask           bool / guard_or_false / guard_or_true / statically_known_true / not statically_known_false /
                guard_size_oblivious on (a cmp b)

Note [how a question was answered]: one Decision per ask reached. `guard` if the ask appended to
se.guards, `assert` if it added a deferred runtime assert; otherwise `fallback` if the mode has a
fallback, the answer is that fallback, and static evaluation does not give the same answer (it
cannot decide, or it would have decided the other way, as with aggressive_guard_free_semantics=2
or a stale lru_cache entry of evaluate_expr); else `static`. A `bool` (or size-oblivious) ask torch
cannot decide raises GuardOnDataDependentSymNode: the outcome is `dde` and the run stops there.
"""

from __future__ import annotations

import operator
import re
import time
import warnings
from dataclasses import replace
from functools import lru_cache
from typing import Any

import sympy
import torch
import torch.fx.experimental._config as fxx
from torch._dynamo.source import ConstantSource
from torch.fx.experimental.symbolic_shapes import (
    DimDynamic,
    ShapeEnv,
    _constrain_range_for_size,
    constrain_range,
    guard_or_false,
    guard_or_true,
    statically_known_false,
    statically_known_true,
)
from torch.utils._sympy.symbol import SymT, symbol_is_type

from shapefuzz.program import Ref
from shapefuzz.program.questions import COMPARE, FALLBACK, QInstr, QProgram
from shapefuzz.systems import evidence, question_history
from shapefuzz.systems.claims import dde_check, final_backed_ranges, hint_sanity, question_checks
from shapefuzz.systems.common import classify, expr_str, shape_env_facts, sym_str
from shapefuzz.systems.evidence.truth import QuestionReplays
from shapefuzz.systems.observation import Decision, Observation, Outcome, SmtCheck
from shapefuzz.systems.prover import DEFAULT_SETTINGS, SmtSettings, parse
from shapefuzz.systems.qreplay import qvariants, replay_questions, value_under
from shapefuzz.systems.torch_toggles import applied

__all__ = ["ASKERS", "BINOPS", "TorchEnvSystem"]

BINOPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
          "%": operator.mod, "max": torch.sym_max, "min": torch.sym_min, "**": operator.pow}


def _size_oblivious(cond: Any) -> bool:
    # guard_size_oblivious() minus its FutureWarning (it is deprecated, not removed)
    if isinstance(cond, torch.SymBool):
        return cond.node.guard_size_oblivious("", 0)
    return bool(cond)


def _not_known_false(cond: Any) -> bool:
    """The value of cond its caller acts on (Note [statically_known_false])."""
    return not statically_known_false(cond)


ASKERS = {"bool": bool, "guard_or_false": guard_or_false, "guard_or_true": guard_or_true,
          "statically_known_true": statically_known_true, "statically_known_false": _not_known_false,
          "size_oblivious": _size_oblivious}


class TorchEnvSystem:
    name = "torch-env"

    def observe(self, program: Any, config: str = "default", variants: Any = ()) -> Observation:
        t0 = time.perf_counter()
        if not isinstance(program, QProgram):
            return Observation(self.name, config, Outcome(
                "error", "Unsupported", f"torch-env runs question programs (QProgram), not "
                f"{type(program).__name__}; use make_fx/export for tensor programs"))
        with applied(config) as cfg:  # an unknown config name is our bug: it raises
            run = _Run(ShapeEnv(**cfg.env_kwargs), bool(fxx.backed_size_oblivious))
            outcome = run.execute(program)
            obs = run.observation(self.name, config, outcome)
            obs = replace(obs, axioms=tuple((at, k, sym_str(e)) for at, k, e in run.axioms))
            smt, replays = _SAME_RUN.evidence(program, obs, lambda: (
                run.checks(program, outcome), run.replays(program) if outcome.status == "ok" else None))
            obs = replace(obs, smt=smt)
            if replays is not None:
                obs = evidence.record(obs, QuestionReplays(replays))
            obs = evidence.record(obs, question_history.replay(
                program, run.live(), lambda: _Run(ShapeEnv(**cfg.env_kwargs), run.bso)))
        log = (f"slow paths run: {dict(sorted(cfg.counts.items()))}",) if cfg.counts else ()
        return replace(obs, elapsed_s=time.perf_counter() - t0, log=log)

    def answers(self, program: QProgram, config: str = "default") -> Observation:
        """The run alone: its outcome, decisions and values, without the evidence `observe` adds
        (Note [echo runs], program/kinds.py)."""
        with applied(config) as cfg:
            run = _Run(ShapeEnv(**cfg.env_kwargs), bool(fxx.backed_size_oblivious))
            return run.observation(self.name, config, run.execute(program))


# Note [one analysis per run state]: a program's runs under torch-env's configs mostly end in the
# same state (14% distinct over 150 generated programs under the 16 default configs): the same
# answers, facts, ranges and values. The z3 checks of the answers and the replays of the guards
# under other values read only that state (as text-equal sympy), so a config whose run ends where
# an earlier config's did reuses their result. The history replays run torch again under the
# config's own patches, so they are never reused. One program at a time: the configs of a program
# are observed one after another.
class _SameRun:
    """The evidence of each run state of the program observed last: Note [one analysis per run state]."""

    def __init__(self) -> None:
        self.program = ""
        self.seen: dict[tuple, tuple] = {}

    def evidence(self, program: QProgram, obs: Observation, compute) -> tuple:
        text = program.dumps()
        if text != self.program:
            self.program, self.seen = text, {}
        key = (obs.outcome, obs.decisions, obs.guards, obs.asserts, obs.replacements, obs.ranges,
               obs.out_exprs, obs.binding, obs.out_eval, obs.axioms)
        if key not in self.seen:
            self.seen[key] = compute()
        return self.seen[key]


_SAME_RUN = _SameRun()


def raiser(ins: QInstr) -> str:
    """The Outcome.op of a DDE raised by `ins`: `ask:<mode>` for a question, else the op."""
    return f"ask:{ins.args[0]}" if ins.op == "ask" else ins.op


class _Run:
    """One program on one ShapeEnv."""

    def __init__(self, se: ShapeEnv, backed_size_oblivious: bool) -> None:
        self.se = se
        self.bso = backed_size_oblivious
        self.values: list[Any] = []
        self.binding: dict[sympy.Symbol, sympy.Integer] = {}
        self.raw: list[tuple[Any, bool, str]] = []  # (expr, answer, how): printed at the end
        self.axioms: list[tuple[int, str, Any]] = []  # Note [axioms] (systems.claims)
        self._asserts_seen: set = set()
        self.ask_facts: list[tuple[list, list]] = []  # (guards, asserts) each question added
        self.stopped: int | None = None  # the instruction that raised a DDE, if one did

    def execute(self, program: QProgram) -> Outcome:
        for pos, ins in enumerate(program.instrs):
            try:
                self.step(ins)
            except Exception as e:
                outcome = classify(e)
                self.stopped = pos if outcome.status == "dde" else None
                if outcome.status == "dde":  # which instruction raised (Note [guard-free questions])
                    outcome = replace(outcome, op=raiser(ins))
                return outcome
        return Outcome("ok")

    def live(self) -> question_history.Live:
        """What the history replay needs from this run (shapefuzz.systems.question_history)."""
        return question_history.Live(tuple((sym_str(e), sym_str(a), how) for e, a, how in self.raw),
                            tuple(self.ask_facts), self.stopped)

    def arg(self, a: Any) -> Any:
        return self.values[a.index] if isinstance(a, Ref) else a

    def step(self, ins: QInstr) -> None:
        a = ins.args
        if ins.op == "backed":
            self.values.append(self.backed(a[0]))
        elif ins.op == "unbacked":
            self.values.append(self.unbacked(a[0]))
        elif ins.op == "binop":
            self.values.append(BINOPS[a[0]](self.arg(a[1]), self.arg(a[2])))
        elif ins.op == "check":
            cond = COMPARE[a[0]](self.arg(a[1]), self.arg(a[2]))
            n_guards, n_asserts = len(self.se.guards), self.se.num_deferred_runtime_asserts
            torch._check(cond)
            self.learn(n_guards, n_asserts, cond.node.expr if isinstance(cond, torch.SymBool) else None)
        elif ins.op == "check_is_size":
            v, n_guards, n_asserts = self.arg(a[0]), len(self.se.guards), self.se.num_deferred_runtime_asserts
            with warnings.catch_warnings():  # torch 2.13 deprecates it; the op stands for that API
                warnings.simplefilter("ignore", FutureWarning)
                torch._check_is_size(v)
            self.learn(n_guards, n_asserts, sympy.Ge(v.node.expr, 0) if isinstance(v, torch.SymInt) else None)
        elif ins.op == "constrain_range":
            self.constrain(self.arg(a[0]), a[1], a[2])
        else:
            self.ask(a[0], COMPARE[a[1]](self.arg(a[2]), self.arg(a[3])))

    def constrain(self, v: Any, lo: int, hi: int) -> None:
        """A range constraint; an axiom only where torch takes it (Note [facts torch is given])."""
        if not isinstance(v, torch.SymInt):
            constrain_range(v, min=lo, max=hi)  # an int: checked, as eager checks it
            return
        expr = v.node.expr
        if lo >= 0 and isinstance(expr, sympy.Symbol):
            _constrain_range_for_size(v, min=lo, max=hi)
        else:
            constrain_range(v, min=lo, max=hi)  # a non-symbol expression: torch ignores it
        if isinstance(expr, sympy.Symbol) or expr.is_Integer:
            at = len(self.raw)
            self.axioms += [(at, "range", sympy.Ge(expr, lo)), (at, "range", sympy.Le(expr, hi))]

    def backed(self, hint: int) -> Any:
        se, src = self.se, ConstantSource(f"v{len(self.values)}")
        # as torch sizes tensors (create_symbolic_sizes_strides_storage_offset): under
        # backed_size_oblivious no 0/1 specialization, and the symbol is size-like
        sym = se.create_symbol(hint, source=src, dynamic_dim=DimDynamic.DUCK,
                               do_not_specialize_zero_one=self.bso)
        if isinstance(sym, sympy.Symbol):
            self.binding[sym] = sympy.Integer(hint)
            # the creation range, from the 0/1 policy, not from torch's var_to_range
            low = 2 if se.specialize_zero_one and not self.bso else 0
            self.axioms.append((len(self.raw), "range", sympy.Ge(sym, low)))
            if self.bso:
                se.size_like.add(sym)
        return se.create_symintnode(sym, hint=hint, source=src)

    def unbacked(self, value: int) -> torch.SymInt:
        u = self.se.create_unbacked_symint()
        self.binding[u.node.expr] = sympy.Integer(value)
        # no tensor op will claim the symbol; an unclaimed pending symbol is an error for FakeTensor
        self.se.pending_fresh_unbacked_symbols.clear()
        return u

    def ask(self, mode: str, cond: Any) -> None:
        se = self.se
        expr = cond.node.expr if isinstance(cond, torch.SymBool) else bool(cond)
        n_guards, n_asserts = len(se.guards), se.num_deferred_runtime_asserts
        answer = bool(ASKERS[mode](cond))  # a DDE propagates: execute() stops the run
        if len(se.guards) > n_guards:
            how = "guard"
        elif se.num_deferred_runtime_asserts > n_asserts:
            how = "assert"
        elif FALLBACK[mode] is not None and answer == FALLBACK[mode] and not self.static_says(expr, answer):
            how = "fallback"
        else:
            how = "static"
        self.raw.append((expr, answer, how))
        self.ask_facts.append(([g.expr for g in se.guards[n_guards:]], self._new_asserts(n_asserts)))
        self.learn(n_guards, n_asserts, None)

    def _new_asserts(self, n_asserts: int) -> list:
        if self.se.num_deferred_runtime_asserts == n_asserts:
            return []
        return [ra.expr for ras in self.se.deferred_runtime_asserts.values() for ra in ras
                if ra.expr not in self._asserts_seen]

    def learn(self, n_guards: int, n_asserts: int, checked: Any) -> None:
        """Guards, asserts and checked conditions, known from the next question on."""
        at, se = len(self.raw), self.se
        self.axioms += [(at, "guard", g.expr) for g in se.guards[n_guards:]]
        if se.num_deferred_runtime_asserts > n_asserts:
            for ra in (ra for ras in se.deferred_runtime_asserts.values() for ra in ras):
                if ra.expr not in self._asserts_seen:
                    self._asserts_seen.add(ra.expr)
                    self.axioms.append((at, "assert", ra.expr))
        if checked is not None:
            self.axioms.append((at, "check", checked))

    def static_says(self, expr: Any, answer: bool) -> bool:
        """Static evaluation (no guard) gives `answer` (Note [how a question was answered])."""
        if isinstance(expr, (bool, sympy.logic.boolalg.BooleanAtom)):
            return bool(expr) == answer
        try:
            r = self.se._maybe_evaluate_static(expr)
        except Exception:
            return False
        return r is not None and bool(r) == answer

    def checks(self, program: QProgram, outcome: Outcome,
               settings: SmtSettings = DEFAULT_SETTINGS) -> tuple[SmtCheck, ...]:
        """z3 verdicts on this run (shapefuzz.systems.claims): its answers against the axioms it
        recorded (Note [axioms]), plus the final backed ranges produce_guards checks."""
        se = self.se
        final = [e for _, _, e in self.axioms] + final_backed_ranges(se, self.binding)
        if outcome.status == "dde":
            c = dde_check(parse(unhinted(outcome)), final, settings)
            return (c,) if c is not None else ()
        if outcome.status != "ok":
            return ()
        leaves = [v for ins, v in zip(program.instrs, _defined(program, self.values))
                  if ins.op in ("backed", "unbacked")]
        leaf_exprs = [v.node.expr if hasattr(v, "node") else sympy.Integer(int(v)) for v in leaves]
        return tuple(question_checks(program, self.raw, self.axioms, final, leaf_exprs, self.binding,
                                     settings) + hint_sanity([g.expr for g in se.guards], self.binding))

    def replays(self, program: QProgram):
        """Guards (with the ranges produce_guards would check for backed symbols) and deferred
        asserts, evaluated under other values (shapefuzz.systems.qreplay)."""
        se = self.se
        leaves = [v for ins, v in zip(program.instrs, _defined(program, self.values))
                  if ins.op in ("backed", "unbacked")]
        guards = [g.expr for g in se.guards]
        for sym in self.binding:
            if symbol_is_type(sym, SymT.SIZE):
                vr = se.var_to_range.get(sym)
                if vr is not None and vr.lower.is_finite:
                    guards.append(sympy.Ge(sym, vr.lower))
                if vr is not None and vr.upper.is_finite:
                    guards.append(sympy.Le(sym, vr.upper))
        asserts = [ra.expr for ras in se.deferred_runtime_asserts.values() for ra in ras]
        return replay_questions(program, _variants(program), [_expr(v) for v in leaves], guards,
                                asserts, [_expr(v) for v in self.values])

    def observation(self, system: str, config: str, outcome: Outcome) -> Observation:
        names = {s: sym_str(s) for s in self.binding}
        return Observation(
            system, config, outcome,
            decisions=tuple(Decision(sym_str(e), sym_str(a), how) for e, a, how in self.raw),
            **shape_env_facts(self.se),
            out_exprs=tuple(expr_str(v) for v in self.values),
            binding=tuple((names[s], int(v)) for s, v in self.binding.items()),
            out_eval=tuple(_evaluate(v, self.binding) for v in self.values),
        )


def _evaluate(v: Any, binding: dict[sympy.Symbol, sympy.Integer]) -> str:
    """A value's expression under the binding, as text ("" when it does not evaluate to an int).
    Not common.eval_exprs: an expression can divide by zero under the binding (after a false
    torch._check taught torch a wrong replacement), or be one of torch's functions that refuses
    its operands (Mod asserts they are non-negative: an unbacked value of -1), and that must not
    escape observe(); qreplay.value_under returns "" there."""
    if isinstance(v, torch.SymInt):
        return value_under(v.node.expr, binding)
    return str(v) if isinstance(v, int) else ""


def unhinted(outcome: Outcome) -> str:
    """torch prints a DDE's expression with backed hints substituted; the symbolic form (the
    one a proof must decide) follows "unhinted:" in its message."""
    m = re.search(r"\(unhinted: (.*?)\)\.  \(Size-like", outcome.message)
    return m.group(1) if m else outcome.expr


@lru_cache(maxsize=64)
def _variants(program: QProgram) -> list[tuple[int, ...]]:
    """The replay assignments of a program, made once for all its configs (they depend on the
    program alone). Callers only read the list."""
    return qvariants(program, 8)


def _expr(v: Any) -> Any:
    return v.node.expr if isinstance(v, torch.SymInt) else sympy.Integer(int(v))


def _defined(program: QProgram, values: list) -> list:
    """values[k] for each instruction that defines one, None for the others (aligned)."""
    return [values[v] if v is not None else None for _, v in program.definitions()]
