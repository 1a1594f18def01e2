"""Issue-form pieces of a history finding on a question program (shapefuzz/repro/questions.py
puts them together; Note [repro templates]): the program written once as a function of how an
earlier question is met, run twice: in a live ShapeEnv, where every question is asked (`asked`),
and in a fresh ShapeEnv that gets only the guards and asserts each earlier question added there,
in the same order (`facts_of`), then the last question in both (Note [history replay] in
shapefuzz/systems/question_history.py)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import torch
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

if TYPE_CHECKING:
    from shapefuzz.repro.templates._slots import PROGRAM, added, answer, se


def asserts():
    return [ra.expr for ras in se.deferred_runtime_asserts.values() for ra in ras]


def asked(q, call):  # live env: question q is asked; the guards and asserts it adds are facts
    g, a = len(se.guards), asserts()
    call()
    added.append(([x.expr for x in se.guards[g:]], [x for x in asserts() if x not in a]))


def facts_of(q, call):  # fresh env: in place of question q, the facts it added in the live env
    for g in added[q][0]:
        se.evaluate_expr(g)
    for a in added[q][1]:
        se.guard_or_defer_runtime_assert(a, "a fact of the live run")


def answer_of(call, c, fallback):  # (answer, is it a claim: no undecided fallback, no DDE)
    n = len(se.guards) + len(asserts())
    try:
        got = call()
    except GuardOnDataDependentSymNode:
        return "data-dependent error", False
    static = se._maybe_evaluate_static(c.node.expr) if isinstance(c, torch.SymBool) else c
    return got, got != fallback or static is not None or len(se.guards) + len(asserts()) > n


def compare():
    """The fresh env knows no more than the live one: it must not answer sharper."""
    live, fresh = program(asked), program(facts_of)
    print(f"expected (a fresh ShapeEnv, same facts, no earlier question): {fresh}\ngot (live ShapeEnv): {live}")
    bug = fresh[1] and live[0] != fresh[0]
    print("BUG: the live answer depends on the questions asked before it, not only on the facts"
          if bug else "OK: the live env answers as sharply as a fresh one")
    sys.exit(1 if bug else 0)


def program(earlier):  # earlier(k, ask): how earlier question k is met
    global se
    PROGRAM()  # (under a slow-path config, in its `with`: the finding's question too)
    return answer
