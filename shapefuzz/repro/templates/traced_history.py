"""Issue-form pieces of a history finding on a tensor program (shapefuzz/repro/history_tensor_form.py
puts them together with known_to / fresh_answer of shapefuzz/systems/tensor_history.py,
the functions the campaign asked the fresh env with; Note [repro templates], Note [tensor history
replay]): the public call that traces the program stands where `TRACE()` is; each time the live
ShapeEnv falls back on (or raises on) the finding's expression, what it knew is recorded; then a
fresh ShapeEnv gets only that and is asked the same question: two ShapeEnvs side by side."""

from __future__ import annotations

import contextlib
import sys
import traceback
import unittest.mock
from typing import TYPE_CHECKING

from torch.fx.experimental import symbolic_shapes as ss
from torch.fx.experimental.symbolic_shapes import (
    GuardOnDataDependentSymNode,
    ShapeEnv,
    guard_or_false,
    guard_or_true,
    guard_size_oblivious,
    statically_known_false,
    statically_known_true,
)

if TYPE_CHECKING:
    from shapefuzz.repro.templates._slots import ASK, EXPR, LIVE, TRACE, fresh_answer, known_to

#: the public calls ASK names (history_tensor_form.ASKERS): the script imports the one it uses
ASKERS = (guard_or_false, guard_or_true, guard_size_oblivious, statically_known_false, statically_known_true)


def fallbacks():
    """Trace, recording what the live env knew each time guard_or_* answered EXPR by its fallback LIVE."""
    live, evaluate_expr = [], ShapeEnv.evaluate_expr
    def on_eval(se, e, *a, **kw):
        r = evaluate_expr(se, e, *a, **kw)  # then what se knew, when it answered EXPR by the fallback LIVE
        return live.extend([(known_to(se), e)] if str(e) == EXPR and str(kw.get("fallback_value")) == str(bool(r)) == LIVE else []) or r
    with unittest.mock.patch.object(ShapeEnv, "evaluate_expr", on_eval), contextlib.suppress(Exception):
        TRACE()  # what the trace raises after the question is not the point
    return live


def undecided():
    """Trace, recording what the live env knew each time static evaluation left EXPR undecided
    (statically_known_true; guard_or_* under backed_size_oblivious)."""
    live, static_eval = [], ss._static_eval_sym_bool
    def on_static(x):  # static evaluation, then what the env knew when it left EXPR undecided
        return live.extend([(known_to(x.node.shape_env), x.node.expr)] if (r := static_eval(x)) is None and str(x.node.expr) == EXPR else []) or r
    with unittest.mock.patch.object(ss, "_static_eval_sym_bool", on_static), contextlib.suppress(Exception):
        TRACE()  # what the trace raises after the question is not the point
    return live


def dde():
    """Trace; at its data-dependent error on EXPR, what the raising ShapeEnv knew (its frame)."""
    try:
        TRACE()
        live = []
    except Exception as e:  # a DDE, or what wraps one
        err = next((x for x in (e, e.__cause__, e.__context__) if isinstance(x, GuardOnDataDependentSymNode)), None) or sys.exit(print(f"no verdict: {e!r}") or 2)
        frame = [fr for fr, _ in traceback.walk_tb(err.__traceback__) if isinstance(fr.f_locals.get("self"), ShapeEnv)][-1]
        live = [(known_to(frame.f_locals["self"]), frame.f_locals["expr"])] if str(frame.f_locals["expr"]) == EXPR else []
    return live


def compare(live):
    """Each recorded question asked again in a fresh ShapeEnv holding only what the live one knew."""
    for known, expr in live or sys.exit(print(f"OK: the live env no longer falls back on (or raises on) {EXPR}") or 0):
        fresh = fresh_answer(known, ASK, expr, LIVE)
        print(f"expected (a fresh ShapeEnv, same facts, no earlier question): {fresh}\ngot (live ShapeEnv): {LIVE or 'a data-dependent error'}")
        if fresh[1] not in ("fallback", "dde"):
            sys.exit(print("BUG: the live answer depends on the questions asked before it, not only on the facts") or 1)
    print("OK: the live env answers as sharply as a fresh one")
