"""A shape condition used as a value: int(c), torch.sym_ite(c, ...), sym_not(c), float(c),
torch.tensor(c), torch.where(mask, x, c).

Note [conditions as values]: unlike a branch (Note [branch contract]), these ops never pick an
arm: the condition `a CMP b` flows on as a value. Traced, it is a SymBool: int(c) guards on it
(a data-dependent error when unbacked), sym_ite / sym_not / torch.where keep it symbolic, and
float(c) / torch.tensor(c) must turn it into a number or a tensor. Eager sees a Python bool, so
every form has exactly one meaning and a tracer that decides c wrongly, or cannot take it as a
value, disagrees with eager. sym_ite's two results are literals: torch.sym_ite requires both of
the same type, and a SymInt-or-int operand depends on how the tracer sized the dims.
"""

from __future__ import annotations

import hypothesis.strategies as st
import torch

from shapefuzz.ir import SYMINT, ProgramError, VType
from shapefuzz.ops.base import Op, expect_choice, expect_int, expect_tensor, register
from shapefuzz.ops.choices import sampled_from
from shapefuzz.ops.scalar import COMPARE, sym_compare

__all__ = ["COND_INT_MODES", "COND_TENSOR_MODES"]

COND_INT_MODES = ("int", "sym_ite", "sym_not")
COND_TENSOR_MODES = ("float", "tensor", "where")


def _cond_source(cmp, a, b, negate=False) -> str:
    c = f"{a} {cmp} {b}"
    return f"torch.sym_not({c})" if negate else f"({c})"


def _expect_cond(cmp, a, b) -> None:
    expect_choice(cmp, COMPARE, "comparison")
    expect_int(a, "lhs")
    expect_int(b, "rhs")


def _pick_cond(ctx, draw):
    """(cmp, a, b) over a SymInt and a boundary literal, so that either outcome is reachable
    on replays with other sizes; None when the program has no SymInt to compare."""
    a = ctx.pick_sym(draw, prefer_unbacked=True)
    if a is None:
        return None
    v = ctx.val(a)
    b = draw(sampled_from([v - 1, v, v + 1, 0, 1, 2]))
    return draw(sampled_from(sorted(COMPARE))), a, b


@register
class CondInt(Op):
    """int(a CMP b), or torch.sym_ite([sym_not](a CMP b), t, f) with literal t, f."""

    name, family = "cond_int", "symbool"
    weight = 2

    def out_types(self, args, n_out):
        mode, cmp, a, b, t, f = args
        expect_choice(mode, COND_INT_MODES, "cond_int mode")
        _expect_cond(cmp, a, b)
        for v, what in ((t, "then value"), (f, "else value")):
            if isinstance(v, bool) or not isinstance(v, int):
                raise ProgramError(f"{what} must be an int literal, got {v!r}")
        return (SYMINT,)

    def eager(self, args, n_out):
        mode, cmp, a, b, t, f = args
        c = COMPARE[cmp](a, b)
        if mode == "int":
            return (int(c),)
        return (torch.sym_ite(torch.sym_not(c) if mode == "sym_not" else c, t, f),)

    def source(self, args):
        mode, cmp, a, b, t, f = args
        if mode == "int":
            return f"int({a} {cmp} {b})"
        return f"torch.sym_ite({_cond_source(cmp, a, b, mode == 'sym_not')}, {t}, {f})"

    def symbolic(self, args, n_out, s):
        mode, cmp, a, b, _t, _f = args
        if mode != "int":  # the reference has no if-then-else SymInt (torch: a Piecewise)
            raise NotImplementedError
        return (s.sym(int(s.expect(sym_compare(s, cmp, a, b)))),)

    def generate(self, ctx, draw):
        cond = _pick_cond(ctx, draw)
        if cond is None:
            return
        mode = draw(sampled_from(COND_INT_MODES))
        t, f = (1, 0) if mode == "int" else (draw(st.integers(0, 4)), draw(st.integers(0, 4)))
        ctx.emit(self.name, (mode, *cond, t, f))


@register
class CondTensor(Op):
    """x * float(a CMP b), torch.tensor(a CMP b), or torch.where(mask, x, a CMP b)."""

    name, family = "cond_tensor", "symbool"
    weight = 1

    def out_types(self, args, n_out):
        mode, cmp, a, b, x, m = args
        expect_choice(mode, COND_TENSOR_MODES, "cond_tensor mode")
        _expect_cond(cmp, a, b)
        if mode == "tensor":
            return (VType.tensor("bool", 0),)
        t = expect_tensor(x, "x", ("float", "int") if mode == "float" else ())
        if mode == "where":
            mt = expect_tensor(m, "mask", ("bool",))
            if mt.rank != t.rank:
                raise ProgramError(f"where mask rank {mt.rank} must equal x rank {t.rank}")
        return (VType.tensor("float" if mode == "float" else t.dtype, t.rank),)

    def eager(self, args, n_out):
        mode, cmp, a, b, x, m = args
        c = COMPARE[cmp](a, b)
        if mode == "float":
            return (x * float(c),)
        if mode == "tensor":
            return (torch.tensor(c),)
        return (torch.where(m, x, c),)

    def source(self, args):
        mode, cmp, a, b, x, m = args
        if mode == "float":
            return f"{x} * float({a} {cmp} {b})"
        if mode == "tensor":
            return f"torch.tensor({a} {cmp} {b})"
        return f"torch.where({m}, {x}, {a} {cmp} {b})"

    def symbolic(self, args, n_out, s):
        mode, _cmp, _a, _b, x, _m = args
        if mode != "where":  # float(SymBool) / torch.tensor(SymBool): no rule to mirror
            raise NotImplementedError
        return (s.tensor(x.shape, x.dtype),)  # the SymBool is passed on, never asked

    def generate(self, ctx, draw):
        cond = _pick_cond(ctx, draw)
        if cond is None:
            return
        mode = draw(sampled_from(COND_TENSOR_MODES))
        if mode == "tensor":
            ctx.emit(self.name, (mode, *cond, None, None))
            return
        x = ctx.pick_tensor(draw, dtypes=("float", "int"))
        if x is None:
            return
        m = None
        if mode == "where":
            m = ctx.emit("mask", (x, draw(sampled_from(sorted(COMPARE))), draw(st.integers(-1, 2))))[0]
        ctx.emit(self.name, (mode, *cond, x, m))
