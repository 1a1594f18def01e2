"""torch.cond with a shape-dependent predicate (seed 001).

Unlike `branch` (Note [branch contract]), both arms of a cond may compute different values: the
predicate is exact, traced as a SymBool and decided at run time by the artifact. A tracer that
decides a predicate statically (a wrong range, a stale cache) bakes one arm into the graph, and
eager agreement or replay on other sizes shows it.

Each arm is a fixed, named piece of code over the operand `t` (rank >= 1), given both as torch
source (repro.py) and as a Python function (the interpreter), side by side so they cannot drift.
"""

from __future__ import annotations

import hypothesis.strategies as st
import torch

from shapefuzz.ir import ProgramError, VType
from shapefuzz.ops.base import Op, expect_choice, expect_int, expect_tensor, register
from shapefuzz.ops.choices import sampled_from

__all__ = ["ARMS", "CMPS"]


def _halves(t):
    h = t.shape[0] // 2
    return torch.cat([t.narrow(0, 0, h), t.narrow(0, h, t.shape[0] - h)])


def _contiguous(arms: dict) -> dict:
    """torch.cond's contract: both arms return tensors with the same metadata, strides included
    (eager's cond does not check it; tracing raises "The sorted order of strides of the two
    branches' output doesn't match" when an arm keeps a transposed operand's strides and the
    other makes a contiguous copy). Each arm's output is made contiguous, so a generated program
    keeps the contract and the error stays a finding when torch raises it anyway."""
    return {name: (f"({ts}).contiguous()", lambda t, f=tf: f(t).contiguous(),
                   f"({fs}).contiguous()", lambda t, f=ff: f(t).contiguous())
            for name, (ts, tf, fs, ff) in arms.items()}


#: name -> (true arm source, true arm, false arm source, false arm); arms never return `t`
#: itself: cond forbids outputs aliasing its operands.
ARMS = _contiguous({
    "scale": ("t * 2", lambda t: t * 2, "t + 1", lambda t: t + 1),
    "flip": ("t.flip(0)", lambda t: t.flip(0), "t.clone()", lambda t: t.clone()),
    "halves": ("torch.cat([t.narrow(0, 0, t.shape[0] // 2), "
               "t.narrow(0, t.shape[0] // 2, t.shape[0] - t.shape[0] // 2)])", _halves,
               "t * 1", lambda t: t * 1),
})
CMPS = {">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "==": lambda a, b: a == b,
        "<": lambda a, b: a < b}


@register
class Cond(Op):
    """torch.cond(a CMP b, true arm, false arm, (x,)) with a, b SymInts or literals."""

    name, family = "cond", "control"
    weight = 2

    def out_types(self, args, n_out):
        x, a, cmp, b, arms = args
        t = expect_tensor(x, "x", ("float", "int"), min_rank=1)
        expect_int(a, "lhs")
        expect_int(b, "rhs")
        expect_choice(cmp, CMPS, "comparison")
        expect_choice(arms, ARMS, "arms")
        if n_out != 1:
            raise ProgramError("cond has one output")
        return (VType.tensor(t.dtype, t.rank),)

    def eager(self, args, n_out):
        x, a, cmp, b, arms = args
        _, true_fn, _, false_fn = ARMS[arms]
        return (torch.cond(CMPS[cmp](a, b), true_fn, false_fn, (x,)),)

    def symbolic(self, args, n_out, s):
        # torch.cond traces both arms and decides nothing at trace time (the predicate is a
        # graph input); every arm returns t's shape (halves: h + (n - h))
        x = args[0]
        return (s.tensor(x.shape, x.dtype),)

    def source(self, args):
        x, a, cmp, b, arms = args
        true_src, _, false_src, _ = ARMS[arms]
        return f"torch.cond({a} {cmp} {b}, lambda t: {true_src}, lambda t: {false_src}, ({x},))"

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, dtypes=("float", "int"), min_rank=1)
        if x is None:
            return
        if draw(st.booleans()):
            a = ctx.emit("size", (x, draw(st.integers(0, ctx.type(x).rank - 1))))[0]
        else:
            a = ctx.pick_sym(draw, prefer_unbacked=True)
            if a is None:
                return
        v = ctx.val(a)
        # the boundary values make both outcomes reachable across replays
        b = draw(sampled_from([v - 1, v, v + 1, 0, 1, 2]))
        ctx.emit(self.name, (x, a, draw(sampled_from(sorted(CMPS))), b,
                             draw(sampled_from(sorted(ARMS)))))
