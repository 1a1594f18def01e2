"""Tensors created from SymInt sizes: arange, zeros, ones, empty."""

from __future__ import annotations

import hypothesis.strategies as st
import torch

from shapefuzz.ops.base import Op, expect_int, register
from shapefuzz.ops.layout import expect_ints, tup
from shapefuzz.program import VType

__all__: list[str] = []


@register
class Arange(Op):
    name, family = "arange", "factory"
    weight = 2

    def out_types(self, args, n_out):
        (end,) = args
        expect_int(end, "end")
        return (VType.tensor("int", 1),)

    def eager(self, args, n_out):
        return (torch.arange(args[0]),)

    def source(self, args):
        return f"torch.arange({args[0]})"

    def symbolic(self, args, n_out, s):
        # torch._refs.arange(0, end, 1) with integer arguments
        end = s.sym(args[0])
        s.check(end >= 0, "upper bound and lower bound inconsistent with step sign")
        return (s.tensor(((end - 0 + 1 - 1) // 1,), "int"),)

    def generate(self, ctx, draw):
        ctx.emit(self.name, (ctx.pick_int(draw, 0, ctx.settings.max_size, prefer_sym=True),))


class _Fill(Op):
    family = "factory"
    fn: str

    def out_types(self, args, n_out):
        (size,) = args
        expect_ints(size, "size")
        return (VType.tensor("float", len(size)),)

    def eager(self, args, n_out):
        return (getattr(torch, self.fn)(args[0]),)

    def source(self, args):
        return f"torch.{self.fn}{tup(args[0])}"

    def symbolic(self, args, n_out, s):
        for n in args[0]:  # check_size_nonnegative
            s.check(s.sym(n) >= 0, lambda n=n: f"Trying to create tensor with negative dimension {n}")
        return (s.tensor(args[0], "float"),)

    def generate(self, ctx, draw):
        rank = draw(st.integers(1, ctx.settings.max_rank))
        size = tuple(ctx.pick_int(draw, 0, ctx.settings.max_size, prefer_sym=True) for _ in range(rank))
        ctx.emit(self.name, (size,))


@register
class Zeros(_Fill):
    name, fn = "zeros", "zeros"


@register
class Ones(_Fill):
    name, fn = "ones", "ones"


@register
class Empty(_Fill):
    name, fn = "empty", "empty"
    weight = 1
    undefined_data = True
