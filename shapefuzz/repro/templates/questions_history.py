"""Issue-form pieces of a history finding on a question program (shapefuzz/repro/questions.py
puts them together; Note [repro templates]): the program in a live ShapeEnv, every question
asked, then in a fresh ShapeEnv that gets the same facts in the same order (an earlier
question's guards and asserts in its place) and only the last question (Note [history replay]
in shapefuzz/systems/history.py)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import torch
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

if TYPE_CHECKING:
    from shapefuzz.repro.templates._slots import added, se


def _asserts():
    return [ra.expr for ras in se.deferred_runtime_asserts.values() for ra in ras]


def asked(call):
    """An earlier question in the live env; the guards and asserts it adds are facts."""
    g, a = len(se.guards), _asserts()
    call()
    added.append(([x.expr for x in se.guards[g:]], [x for x in _asserts() if x not in a]))


def facts_of(q):
    """In the fresh env, in place of earlier question q: the facts it added in the live run."""
    for g in added[q][0]:
        se.evaluate_expr(g)
    for a in added[q][1]:
        se.guard_or_defer_runtime_assert(a, "a fact of the live run")


def answer_of(call, c, fallback):
    """(answer, is it a claim): a claim is not an undecided fallback; a DDE is no claim."""
    n = len(se.guards) + len(_asserts())
    try:
        got = call()
    except GuardOnDataDependentSymNode:
        return "data-dependent error", False
    static = se._maybe_evaluate_static(c.node.expr) if isinstance(c, torch.SymBool) else c
    return got, got != fallback or static is not None or len(se.guards) + len(_asserts()) > n


def compare(live_answer, fresh_answer):
    """The fresh env, which knows no more than the live one, must not answer sharper."""
    print(f"live ShapeEnv: {live_answer}\nfresh ShapeEnv, same facts, no earlier question: {fresh_answer}")
    (a, _), (b, b_claims) = live_answer, fresh_answer
    if b_claims and a != b:
        print("BUG: the live answer depends on the questions asked before it, not only on the facts")
        sys.exit(1)
    print("OK: the live env answers as sharply as a fresh one")
