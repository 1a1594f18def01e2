"""History replays of a tensor trace (DESIGN oracle 10 on make_fx / export; the oracle is
shapefuzz.oracles.history, question programs replay in shapefuzz.systems.question_history).

Note [tensor history replay]: a tensor trace asks its ShapeEnv questions from torch's code and
from the program's own branches; the ones whose answer could have been sharper are recorded as
they are answered (`recording`): a guard_or_false / guard_or_true answered by its fallback, a
statically_known_true left undecided (under backed_size_oblivious guard_or_* takes that path
too), and the data-dependent error that stopped the trace. Each record (`Asked`, `snapshot`)
holds what its ShapeEnv knew at that moment: the symbols of the expression with their hints,
value ranges and size-like marks, the guards and the deferred runtime asserts, in the order
torch recorded them. After the trace, each is asked again (`fresh_answer`) through the same
public call in a fresh ShapeEnv (same settings, the config's patches still applied) that
receives only those facts, over the ints (facts over float symbols are left out), and none of the earlier questions. A fresh claim where the live env
fell back or raised is a history finding once it is also the concrete answer at the run's
values (`replay`: `concrete`; a wrong fresh claim is no sharper answer). The same functions are
pasted into the finding's issue form (shapefuzz/repro/history_tensor_form.py), so the repro asks the
fresh env exactly as the campaign did.

Cost: at most MAX_ASKED records per trace, one per (call, expression, ShapeEnv version); make_fx
observations grow by the replay's share measured in benchmarks/results.md.
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass
from typing import Any

import sympy
from torch._dynamo.source import ConstantSource
from torch.fx.experimental import symbolic_shapes as ss
from torch.fx.experimental.symbolic_shapes import DimDynamic, GuardOnDataDependentSymNode, ShapeEnv

from shapefuzz.systems.common import exception_chain, raising_env
from shapefuzz.systems.evidence.history import HistoryEvidence, HistoryRecord

__all__ = ["MAX_ASKED", "Asked", "dde_snapshot", "fresh_answer", "known_to", "recording", "replay", "run_with",
           "snapshot"]

MAX_ASKED = 16
_ASKERS = {"guard_or_false": ss.guard_or_false, "guard_or_true": ss.guard_or_true,
           "statically_known_true": ss.statically_known_true, "bool": bool,
           "size_oblivious": ss.guard_size_oblivious, "int": int}


@dataclass(frozen=True)
class Asked:
    """A question the live env answered by its fallback (or raised on), and what it knew then."""

    mode: str  # a key of _ASKERS: the public call that asked it
    expr: Any  # sympy, as the live env was asked it
    live: str  # its answer: the fallback ('False' / 'True'), or '' for a data-dependent error
    known: tuple  # known_to(the live env) at that moment


def known_to(se):  # what `se` knows now: (se, ranges, size-like marks, guards then deferred asserts as recorded)
    return se, dict(se.var_to_range), set(se.size_like), [g.expr for g in se.guards] + [a.expr for x in se.deferred_runtime_asserts.values() for a in x]


def fresh_answer(known, ask, expr, live):  # (answer, how) of ask(expr) in a fresh ShapeEnv given only `known` (facts over floats left out)
    env, ranges, size_like, facts = known
    facts = [f for f in facts if all(s.name[0] in "su" for s in f.free_symbols)]
    assert all(s.name[0] in "su" for s in expr.free_symbols), f"{expr}: a symbol that is not a size or an unbacked int"
    se, syms = ShapeEnv(**{k: getattr(env.settings, k) for k in type(env.settings).__dataclass_fields__}), expr.free_symbols.union(*(f.free_symbols for f in facts))
    to = {s: se.create_symbol(int(env.backed_var_to_val[s]), ConstantSource(str(s)), DimDynamic.DYNAMIC, do_not_specialize_zero_one=True) if s in env.backed_var_to_val else se.create_unbacked_symint().node.expr for s in sorted(syms, key=str)}
    se.var_to_range.update({t: ranges[s] for s, t in to.items() if s in ranges})
    se.size_like.update(t for s, t in to.items() if s in size_like)
    se._update_version_counter()  # the ranges set by hand are news to its caches
    [se.guard_or_defer_runtime_assert(f.xreplace(to), "a fact of the live run") for f in facts]
    q, n = expr.xreplace(to), len(se.guards) + se.num_deferred_runtime_asserts
    try:
        got = str(ask(se.create_symboolnode(q) if q.is_Relational or q.is_Boolean else se.create_symintnode(q, hint=None)))
    except GuardOnDataDependentSymNode:
        return "a data-dependent error", "dde"
    return got, "fallback" if got == live else "guard" if len(se.guards) + se.num_deferred_runtime_asserts > n else "static"


def snapshot(se, mode, expr, live) -> Asked:
    return Asked(mode, expr, live, known_to(se))


def _boolean(e) -> bool:
    """A question asked as a SymBool. Not isinstance(e, Boolean): a sympy Symbol is a Boolean
    subclass too, and an int(u0) error re-asked as bool(u0) is another question (a false
    stale-dde finding, reports/torch-2.13 third round). fresh_answer writes the same test inline:
    the repro scripts carry its source, which must stand alone."""
    return e.is_Relational or e.is_Boolean


def dde_snapshot(dde):
    """The Asked record of the data-dependent error `dde`: the ShapeEnv that raised it and its
    unhinted `expr` (raising_env, as the spurious-DDE oracle reads them); size-oblivious when a
    ShapeEnv frame of the traceback was evaluating size-obliviously."""
    se, expr = raising_env(dde)
    if se is None or not isinstance(expr, sympy.Basic):
        return None
    oblivious = any(tb.tb_frame.f_locals.get("size_oblivious") is True for tb in _walk(dde.__traceback__)
                    if isinstance(tb.tb_frame.f_locals.get("self"), ShapeEnv))
    mode = "size_oblivious" if oblivious else "bool" if _boolean(expr) else "int"
    return snapshot(se, mode, expr, "")


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


@contextlib.contextmanager
def recording(asked, limit=MAX_ASKED):
    """Record into `asked` every fallback answer the block's ShapeEnvs give (Note [tensor history
    replay]): ShapeEnv.evaluate_expr returning its fallback_value without a new guard or assert,
    and static evaluation left undecided by statically_known_true or _guard_or."""
    orig_eval, orig_static, depth, seen = ShapeEnv.evaluate_expr, ss._static_eval_sym_bool, [0], set()

    def note(se, mode, expr, live):
        key = (mode, expr, id(se), se._version_counter)
        if depth[0] == 0 and len(asked) < limit and key not in seen and getattr(expr, "free_symbols", None):
            seen.add(key)
            asked.append(snapshot(se, mode, expr, live))

    def evaluate_expr(se, orig_expr, *a, **kw):
        fallback = kw.get("fallback_value", a[3] if len(a) > 3 else None)
        n = len(se.guards) + se.num_deferred_runtime_asserts
        depth[0] += 1
        try:
            r = orig_eval(se, orig_expr, *a, **kw)
        finally:
            depth[0] -= 1
        if fallback is not None and r == fallback and len(se.guards) + se.num_deferred_runtime_asserts == n:
            note(se, f"guard_or_{str(bool(fallback)).lower()}", orig_expr, str(bool(fallback)))
        return r

    def static_eval(x):
        r = orig_static(x)
        caller = sys._getframe(1)
        name = caller.f_code.co_name
        if r is None and name in ("statically_known_true", "_guard_or"):
            default = bool(caller.f_locals.get("default", False))
            mode = name if name != "_guard_or" else f"guard_or_{str(default).lower()}"
            note(x.node.shape_env, mode, x.node.expr, str(default))
        return r

    ShapeEnv.evaluate_expr, ss._static_eval_sym_bool = evaluate_expr, static_eval
    try:
        yield asked
    finally:
        ShapeEnv.evaluate_expr, ss._static_eval_sym_bool = orig_eval, orig_static


def replay(asked, values) -> HistoryEvidence:
    """The history oracle's evidence: one HistoryRecord per Asked (Note [tensor history replay]); `values` maps each live symbol
    to its value in this run, for the concrete answer ('' where it is not known)."""
    out = []
    for k, a in enumerate(asked):
        try:
            (got, how), why = fresh_answer(a.known, _ASKERS[a.mode], a.expr, a.live), ""
        except Exception as e:  # the facts alone fail in a fresh env: nothing to compare
            got, how, why = "", "error", f"{type(e).__name__}: {str(e)[:200]}"
        live = (a.live, "fallback") if a.live else ("", "dde")
        out.append(HistoryRecord(k, str(a.expr), live, (got, how), why, _concrete(a.expr, values), a.mode))
    return HistoryEvidence(tuple(out))


def _concrete(expr, values) -> str:
    try:
        v = expr.xreplace({s: sympy.Integer(int(values[s])) for s in expr.free_symbols})
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return ""
    if v in (sympy.true, sympy.false):
        return str(bool(v))
    return str(int(v)) if isinstance(v, sympy.Integer) else ""


def run_with(trace, asked: list):
    """trace() under `recording(asked)`; the DDE that stops it is recorded too, then re-raised."""
    with recording(asked):
        try:
            return trace()
        except Exception as e:
            dde = next((x for x in exception_chain(e) if isinstance(x, ss.GuardOnDataDependentSymNode)), None)
            rec = dde_snapshot(dde) if dde is not None else None
            if rec is not None and len(asked) < MAX_ASKED + 1:
                asked.append(rec)
            raise
