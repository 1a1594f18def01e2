"""Answering shape questions and running torch._check: the reference's evaluate_expr and
guard_or_defer_runtime_assert.

A question is answered, in this order:
  1. static: the replaced expression is a constant, or the fast comparison path (a sum of
     non-negative terms >= 0), or a static proof (axioms, then range analysis) decides it;
  2. guard-free modes (guard_or_false/true) may stop early: under backed_size_oblivious after
     the static proof; for hint-less expressions at aggressive_guard_free_semantics 1 (range
     analysis only) and 2 (nothing, not even the fast path);
  3. size_oblivious: assume every size-like unbacked symbol is >= 2 (Note [size-oblivious]);
  4. a hint-less expression (an unbacked symbol survives replacement): the mode's fallback, or
     a data-dependent error;
  5. otherwise guard on the hint: record the guard and learn it as a fact.

Note [size-oblivious]: an answer that holds only under the size-oblivious assumption (size-like
symbols are >= 2) is not a proof: the program must be right for 0 and 1 too, exactly like a
guard_or_false fallback. It is recorded with how="fallback" so that every claim (static, guard)
stays a statement about this run that the truth oracle can check.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from shapefuzz.program.questions import FALLBACK
from shapefuzz.systems.observation import Outcome
from shapefuzz.systems.ref.env import Node, RefEnv
from shapefuzz.systems.ref.exprs import expr_str
from shapefuzz.systems.ref.facts import axiom_lookup, negate, record_assert, record_guard
from shapefuzz.systems.ref.ranges import Interval, decide

__all__ = [
    "Answer",
    "CheckFailed",
    "DataDependentError",
    "ask",
    "check",
    "fast_compare",
    "outcome_of",
    "range_only",
    "should_skip_static_eval",
    "static_eval",
]


class DataDependentError(Exception):
    """bool() on an expression the env can neither prove nor guard (torch's
    GuardOnDataDependentSymNode)."""

    def __init__(self, expr: sympy.Basic, size_like: list[str]):
        self.expr = expr
        super().__init__(f"Could not guard on data-dependent expression {expr} (unhinted: {expr})."
                         f"  (Size-like symbols: {', '.join(size_like) or 'none'})")


class CheckFailed(Exception):
    """torch._check on something the env proves or guards False (torch raises RuntimeError)."""

    def __init__(self, expr: sympy.Basic, how: str):
        self.expr = expr
        super().__init__(f"Expected cond to be True, but got False: {expr} is False ({how})")


def outcome_of(failure: Exception | None) -> Outcome:
    """A reference run's outcome as torch reports it: `failure` raised (None: it finished)."""
    if failure is None:
        return Outcome("ok")
    if isinstance(failure, DataDependentError):
        return Outcome("dde", "GuardOnDataDependentSymNode", str(failure), "",
                       expr_str(failure.expr))
    if isinstance(failure, CheckFailed):
        return Outcome("error", "RuntimeError", str(failure))
    return Outcome("error", type(failure).__name__, str(failure))


@dataclass(frozen=True, slots=True)
class Answer:
    value: bool
    how: str  # static | guard | fallback
    expr: sympy.Basic


def _const(expr: sympy.Basic) -> bool | None:
    if expr is sympy.true:
        return True
    if expr is sympy.false:
        return False
    return None


# ---- static reasoning --------------------------------------------------------------------------
def fast_compare(env: RefEnv, expr: sympy.Basic) -> bool | None:
    """torch's _maybe_fast_eval_comparison: `sum >= 0` where every term is visibly
    non-negative (a non-negative constant, a symbol whose range starts at >= 0, a product of
    those). Returns True or None, reading only the symbols' ranges."""
    env.stats["fast_compare"] += 1
    total = _nonneg_side(expr)
    if total is None:
        return None
    terms = total.args if total.is_Add else (total,)
    return True if all(_nonneg(env, t) for t in terms) else None


def _nonneg(env: RefEnv, t: sympy.Basic) -> bool:
    if t.is_Integer:
        return t >= 0
    if t.is_Symbol:
        return env.range_of(t).lo >= 0
    if t.is_Mul:
        return all(_nonneg(env, f) for f in t.args)
    return False


def static_eval(env: RefEnv, expr: sympy.Basic, size_oblivious: bool = False) -> bool | None:
    """A proof from the facts: axioms first (a fact or its consequence asked again), then range
    analysis (Note [sound ranges])."""
    env.stats["static_eval"] += 1
    c = _const(expr)
    if c is not None:
        return c
    r = axiom_lookup(env, expr)
    if r is not None:
        return r
    if size_oblivious:
        return decide(expr, lambda s: _size_oblivious_range(env, s))
    return decide(expr, env.range_of)


def range_only(env: RefEnv, expr: sympy.Basic) -> bool | None:
    """aggressive_guard_free_semantics=1: range analysis alone, no axioms."""
    env.stats["range_only"] += 1
    return decide(expr, env.range_of)


def _size_oblivious_range(env: RefEnv, s: sympy.Symbol) -> Interval:
    r = env.range_of(s)
    if s in env.size_like and max(2, r.lo) <= r.hi:
        return Interval(max(2, r.lo), r.hi)
    return r


# ---- questions ---------------------------------------------------------------------------------
def ask(env: RefEnv, mode: str, rel: Node) -> Answer:
    expr = env.expr_of(rel)
    c = _const(expr)
    if c is not None:
        return Answer(c, "static", expr)
    level = env.settings.aggressive_guard_free_semantics
    if level < 2 and fast_compare(env, expr):
        return Answer(True, "static", expr)
    if mode.startswith("statically_known_"):  # never guards, whatever the hints say
        r = static_eval(env, expr)
        return Answer(r, "static", expr) if r is not None else Answer(FALLBACK[mode], "fallback", expr)
    fallback = FALLBACK[mode]
    hintless = env.has_unbacked(expr)
    if fallback is not None:
        early = _guard_free(env, expr, hintless, level)
        if early is _GIVE_UP:
            return Answer(fallback, "fallback", expr)
        if early is not None:
            return Answer(early, "static", expr)
    r = static_eval(env, expr)
    if r is not None:
        return Answer(r, "static", expr)
    if mode == "size_oblivious" and any(s in env.size_like for s in expr.free_symbols):
        r = static_eval(env, expr, size_oblivious=True)
        if r is not None:
            return Answer(r, "fallback", expr)  # Note [size-oblivious]
    if hintless:
        if fallback is not None:
            return Answer(fallback, "fallback", expr)
        raise DataDependentError(expr, sorted(str(s) for s in env.size_like))
    return _guard(env, expr, rel)


_GIVE_UP = object()  # _guard_free: "take the fallback"


def _guard_free(env: RefEnv, expr: sympy.Basic, hintless: bool, level: int):
    """guard_or_false/true's early exits: True/False (a claim), _GIVE_UP, or None (go on)."""
    if env.settings.backed_size_oblivious:  # torch's _guard_or: static evaluation, never a guard
        r = static_eval(env, expr)
        return _GIVE_UP if r is None else r
    if not hintless or level == 0:
        return None
    if level == 2:
        return _GIVE_UP
    r = range_only(env, expr)
    return _GIVE_UP if r is None else r


def _guard(env: RefEnv, expr: sympy.Basic, rel: Node) -> Answer:
    hint = env.hint_of(rel)
    if hint is None:  # e.g. a node built before a replacement made its expression backed
        hint = env.size_hint(expr)
    if hint is None:
        raise AssertionError(f"ref bug: no hint for the backed expression {expr}")
    record_guard(env, expr if hint else negate(expr))
    return Answer(bool(hint), "guard", expr)


# ---- torch._check ------------------------------------------------------------------------------
def should_skip_static_eval(env: RefEnv, expr: sympy.Basic) -> bool:
    """Optimization 7: `u >= 0` (or `0 <= u`) for an unbacked u whose range is still (-oo, oo)
    cannot be proved (nothing is known about u yet), so check() need not try."""
    sym = _nonneg_side(expr)
    return sym is not None and sym.is_Symbol and env.is_unbacked(sym) and env.range_of(sym).is_unbounded()


def check(env: RefEnv, rel: Node) -> None:
    """torch._check(rel): nothing if provable, a guard if backed, else a deferred runtime
    assert; raises CheckFailed when it is provably or (on the hints) false."""
    expr = env.expr_of(rel)
    c = _const(expr)
    if c is not None:
        if not c:
            raise CheckFailed(expr, "static")
        return
    if fast_compare(env, expr):
        return
    if not (env.settings.skip_static_eval_unbounded and should_skip_static_eval(env, expr)):
        r = static_eval(env, expr)
        if r is False:
            raise CheckFailed(expr, "static")
        if r:
            return
    if not env.has_unbacked(expr) and not env.settings.prefer_deferred_runtime_asserts_over_guards:
        if not _guard(env, expr, rel).value:
            raise CheckFailed(expr, "guard on the hints")
        return
    record_assert(env, expr)
    for s in expr.free_symbols:  # a check that showed s >= 0 makes s size-like
        if env.is_unbacked(s) and env.range_of(s).lo >= 0:
            env.size_like.add(s)


def _nonneg_side(expr: sympy.Basic) -> sympy.Basic | None:
    """x for a relational `x >= 0` or `0 <= x`, else None."""
    if isinstance(expr, sympy.Ge) and expr.rhs == 0:
        return expr.lhs
    if isinstance(expr, sympy.Le) and expr.lhs == 0:
        return expr.rhs
    return None
