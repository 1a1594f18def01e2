"""Data-dependent output shapes: nonzero, masked_select, unique, index_select, and the masks they eat."""

from __future__ import annotations

import sys

import hypothesis.strategies as st
import torch

from shapefuzz.ir import ProgramError, VType
from shapefuzz.ops.base import Op, expect_choice, expect_dim, expect_tensor, register
from shapefuzz.ops.choices import sampled_from
from shapefuzz.ops.layout import pick_tensor_dim
from shapefuzz.ops.pointwise import broadcast_shapes
from shapefuzz.ops.scalar import COMPARE

__all__: list[str] = []


@register
class Nonzero(Op):
    name, family = "nonzero", "datadep"
    weight = 4

    def out_types(self, args, n_out):
        (m,) = args
        expect_tensor(m, "mask", ("bool", "int"), min_rank=1)
        return (VType.tensor("int", 2),)

    def eager(self, args, n_out):
        return (torch.nonzero(args[0]),)

    def source(self, args):
        return f"torch.nonzero({args[0]})"

    def symbolic(self, args, n_out, s):
        (m,) = args
        return (s.tensor((_data_dependent_count(s, m, nonzero=True), m.rank), "int"),)

    def generate(self, ctx, draw):
        m = ctx.pick_tensor(draw, dtypes=("bool",), min_rank=1)
        if m is None:
            m = _emit_mask(ctx, draw)
        if m is not None and ctx.type(m).rank >= 1:
            ctx.emit(self.name, (m,))


@register
class Mask(Op):
    """x <cmp> c for a literal c: a bool mask that follows the data."""

    name, family = "mask", "datadep"
    weight = 1

    def out_types(self, args, n_out):
        x, cmp, c = args
        t = expect_tensor(x, "x", ("float", "int"))
        expect_choice(cmp, COMPARE, "comparison")
        if isinstance(c, bool) or not isinstance(c, (int, float)):
            raise ProgramError(f"mask constant must be a number, got {c!r}")
        return (VType.tensor("bool", t.rank),)

    def eager(self, args, n_out):
        x, cmp, c = args
        return (COMPARE[cmp](x, c),)

    def source(self, args):
        return f"({args[0]} {args[1]} {args[2]})"

    def symbolic(self, args, n_out, s):
        return (s.tensor(args[0].shape, "bool"),)

    def generate(self, ctx, draw):
        _emit_mask(ctx, draw)


@register
class Unique(Op):
    """torch.unique(x), sorted and flat, or along one dim (hand-written programs only): its count is
    data-dependent, as nonzero's, from fake_impls._unique: 0 when numel is statically 0, else a fresh size-like
    unbacked SymInt up to the counted extent where that is static (sys.maxsize - 1 where not)."""

    name, family = "unique", "datadep"
    weight = 2

    def out_types(self, args, n_out):
        x, dim = args
        t = expect_tensor(x, "x", ("int", "bool", "float"))
        if dim is None:
            return (VType.tensor(t.dtype, 1),)
        expect_dim(dim, t.rank)
        if t.dtype == "bool":
            raise ProgramError("unique along a dim takes an int or float tensor")
        return (t,)

    def eager(self, args, n_out):
        x, dim = args
        return (torch.unique(x) if dim is None else torch.unique(x, dim=dim),)

    def source(self, args):
        x, dim = args
        return f"torch.unique({x})" if dim == "None" else f"torch.unique({x}, dim={dim})"

    def symbolic(self, args, n_out, s):
        x, dim = args
        if s.static(s.numel(x)) == 0:
            count = 0  # no unbacked symbol: it would be refined to 0 at once (torch's comment)
        else:
            hi = s.static(s.numel(x) if dim is None else x.shape[dim])
            count = s.unbacked(0, sys.maxsize - 1 if hi is None else hi, size_like=True)
        shape = (count,) if dim is None else (*x.shape[:dim], count, *x.shape[dim + 1:])
        return (s.tensor(shape, x.dtype),)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, dtypes=("int", "bool", "float"))
        if x is None:
            return
        # flat only: along a dim, eager refuses a tensor with another dim of size 0 where the fake
        # rule returns a shape (torch's own inconsistency, met on every replay resized to 0)
        ctx.emit(self.name, (x, None))


def _data_dependent_count(s, t, nonzero: bool = False):
    """The number of selected elements (torch's fake nonzero / masked_select): an unbacked,
    size-like SymInt in [0, upper bound of numel]; a statically empty nonzero gives 0."""
    numel = s.numel(t)
    n = s.static(numel)
    if nonzero and n == 0:
        return 0
    hi = n if n is not None else s.env.bound(s.expr(numel)).hi
    if not nonzero and hi <= 2:  # masked_select only uses a bound above 2
        hi = float("inf")
    return s.unbacked(0, hi, size_like=True)


def _emit_mask(ctx, draw):
    x = ctx.pick_tensor(draw, dtypes=("float", "int"))
    if x is None:
        return None
    return ctx.emit("mask", (x, draw(sampled_from(sorted(COMPARE))), draw(st.integers(-1, 2))))[0]


@register
class MaskedSelect(Op):
    name, family = "masked_select", "datadep"
    weight = 3

    def out_types(self, args, n_out):
        x, m = args
        t = expect_tensor(x, "x")
        expect_tensor(m, "mask", ("bool",))
        return (VType.tensor(t.dtype, 1),)

    def eager(self, args, n_out):
        return (torch.masked_select(args[0], args[1]),)

    def source(self, args):
        return f"torch.masked_select({args[0]}, {args[1]})"

    def symbolic(self, args, n_out, s):
        x, m = args
        shape = broadcast_shapes(s, x.shape, m.shape)
        return (s.tensor((_data_dependent_count(s, s.tensor(shape, "bool")),), x.dtype),)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw)
        if x is None:
            return
        shape = ctx.val(x).shape
        masks = ctx.refs_of(dtype="bool", pred=lambda t: t.shape == shape)
        m = draw(sampled_from(masks)) if masks and draw(st.booleans()) else None
        if m is None:
            cmp = draw(sampled_from(sorted(COMPARE)))
            if ctx.type(x).dtype == "bool":
                return
            m = ctx.emit("mask", (x, cmp, draw(st.integers(-1, 2))))[0]
        ctx.emit(self.name, (x, m))


@register
class IndexSelect(Op):
    name, family = "index_select", "datadep"
    weight = 2

    def out_types(self, args, n_out):
        x, d, idx = args
        t = expect_tensor(x, "x", min_rank=1)
        expect_dim(d, t.rank)
        expect_tensor(idx, "index", ("int",))
        return (t,)

    def eager(self, args, n_out):
        x, d, idx = args
        return (x.index_select(d, idx),)

    def source(self, args):
        return f"{args[0]}.index_select({args[1]}, {args[2]})"

    def symbolic(self, args, n_out, s):
        x, d, idx = args
        if idx.rank > 1:
            s.fail("index_select(): Index is supposed to be a vector", "IndexError")
        n = s.numel(idx)
        return (s.tensor(x.shape[:d] + (n,) + x.shape[d + 1:], x.dtype),)

    def generate(self, ctx, draw):
        x, d = pick_tensor_dim(ctx, draw)
        if x is None:
            return
        n = ctx.val(x).shape[d]

        def in_range(t):
            return t.dim() == 1 and (t.numel() == 0 or (int(t.min()) >= 0 and int(t.max()) < n))

        cands = ctx.refs_of(dtype="int", pred=in_range)
        if cands and draw(st.booleans()):
            idx = draw(sampled_from(cands))
        elif n > 0 and draw(st.booleans()):
            mask = ctx.emit("mask", (ctx.emit("arange", (ctx.emit("size", (x, d))[0],))[0],
                                     draw(sampled_from(["<", ">", "!="])), draw(st.integers(0, 2))))[0]
            idx = ctx.emit("select", (ctx.emit("nonzero", (mask,))[0], 1, 0))[0]
        else:
            idx = ctx.emit("arange", (ctx.pick_int(draw, 0, n),))[0]
        ctx.emit(self.name, (x, d, idx))
