"""Tensors created from SymInt sizes: arange, zeros, ones, empty, full, new_full."""

from __future__ import annotations

import hypothesis.strategies as st
import torch

from shapefuzz.ir import SYMINT, ProgramError, VType
from shapefuzz.ops.base import Op, expect_int, expect_tensor, register
from shapefuzz.ops.choices import sampled_from
from shapefuzz.ops.layout import expect_ints, tup

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


def _fill_type(fill) -> str:
    """The dtype torch.full infers from its fill value: an int (or SymInt) fill makes int64."""
    if fill == SYMINT or (isinstance(fill, int) and not isinstance(fill, bool)):
        return "int"
    if isinstance(fill, float):
        return "float"
    raise ProgramError(f"fill value must be an int, a float or a SymInt, got {fill!r}")


def _pick_fill(ctx, draw, dtype: str):
    if dtype == "float":
        return draw(sampled_from([0.0, 1.5, -2.0]))
    if dtype == "bool":
        return None
    return ctx.pick_int(draw, -2, 8) if draw(st.booleans()) else draw(st.integers(-2, 8))


def _check_sizes(s, size) -> None:
    for n in size:  # check_size_nonnegative, as torch.empty
        s.check(s.sym(n) >= 0, lambda n=n: f"Trying to create tensor with negative dimension {n}")


@register
class Full(Op):
    """torch.full(size, fill) with SymInt sizes; an int or SymInt fill makes an int64 tensor."""

    name, family = "full", "factory"

    def out_types(self, args, n_out):
        size, fill = args
        expect_ints(size, "size")
        return (VType.tensor(_fill_type(fill), len(size)),)

    def eager(self, args, n_out):
        return (torch.full(args[0], args[1]),)

    def source(self, args):
        return f"torch.full({tup(args[0])}, {args[1]})"

    def symbolic(self, args, n_out, s):
        size, fill = args
        _check_sizes(s, size)
        return (s.tensor(size, _fill_type(fill if isinstance(fill, (int, float)) else SYMINT)),)

    def generate(self, ctx, draw):
        rank = draw(st.integers(1, ctx.settings.max_rank))
        size = tuple(ctx.pick_int(draw, 0, ctx.settings.max_size, prefer_sym=True) for _ in range(rank))
        ctx.emit(self.name, (size, _pick_fill(ctx, draw, draw(sampled_from(["float", "int"])))))


@register
class NewFull(Op):
    """x.new_full(size, fill): x's dtype, SymInt sizes."""

    name, family = "new_full", "factory"
    weight = 1

    def out_types(self, args, n_out):
        x, size, fill = args
        t = expect_tensor(x, "x", ("float", "int"))
        expect_ints(size, "size")
        _fill_type(fill)
        return (VType.tensor(t.dtype, len(size)),)

    def eager(self, args, n_out):
        x, size, fill = args
        return (x.new_full(size, fill),)

    def source(self, args):
        x, size, fill = args
        return f"{x}.new_full({tup(size)}, {fill})"

    def symbolic(self, args, n_out, s):
        x, size, _fill = args
        _check_sizes(s, size)
        return (s.tensor(size, x.dtype),)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, dtypes=("float", "int"))
        if x is None:
            return
        rank = draw(st.integers(1, ctx.settings.max_rank))
        size = tuple(ctx.pick_int(draw, 0, ctx.settings.max_size, prefer_sym=True) for _ in range(rank))
        ctx.emit(self.name, (x, size, _pick_fill(ctx, draw, ctx.type(x).dtype)))
