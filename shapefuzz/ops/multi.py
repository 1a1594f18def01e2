"""Ops with several tensor inputs or outputs: cat, split, chunk, unbind."""

from __future__ import annotations

import hypothesis.strategies as st
import torch

from shapefuzz.ops.base import Op, expect_dim, expect_int, expect_tensor, register
from shapefuzz.ops.layout import pick_tensor_dim
from shapefuzz.program import ProgramError, VType

__all__: list[str] = []


@register
class Cat(Op):
    name, family = "cat", "cat"
    weight = 4

    def out_types(self, args, n_out):
        xs, d = args
        if not isinstance(xs, tuple) or not xs:
            raise ProgramError("cat needs a non-empty list of tensors")
        ts = [expect_tensor(x, f"tensors[{k}]") for k, x in enumerate(xs)]
        rank = max(t.rank for t in ts)
        expect_dim(d, max(rank, 1))
        return (VType.tensor(ts[0].dtype, rank),)

    def eager(self, args, n_out):
        return (torch.cat(list(args[0]), args[1]),)

    def source(self, args):
        return f"torch.cat([{', '.join(args[0])}], {args[1]})"

    def generate(self, ctx, draw):
        x, d = pick_tensor_dim(ctx, draw)
        if x is None:
            return
        shape, dtype = ctx.val(x).shape, ctx.type(x).dtype

        def fits(t):
            return t.dim() == len(shape) and all(
                a == b for k, (a, b) in enumerate(zip(t.shape, shape)) if k != d)

        others = [r for r in ctx.refs_of(dtype=dtype, pred=fits)]
        n = draw(st.integers(1, 2))
        xs = (x,) + tuple(draw(st.sampled_from(others)) for _ in range(n))
        ctx.emit(self.name, (xs, d))


@register
class Split(Op):
    """torch.split by a chunk size or by a list of sizes; one value per piece."""

    name, family = "split", "split"
    weight = 4

    def out_types(self, args, n_out):
        x, spec, d = args
        t = expect_tensor(x, "x", min_rank=1)
        expect_dim(d, t.rank)
        for k, s in enumerate(spec if isinstance(spec, tuple) else (spec,)):
            expect_int(s, f"split size {k}")
        return (t,) * n_out

    def eager(self, args, n_out):
        x, spec, d = args
        return _exactly(torch.split(x, list(spec) if isinstance(spec, tuple) else spec, d), n_out)

    def source(self, args):
        x, spec, d = args
        return f"torch.split({x}, {('[' + ', '.join(spec) + ']') if isinstance(spec, tuple) else spec}, {d})"

    def generate(self, ctx, draw):
        x, d = pick_tensor_dim(ctx, draw, pred=lambda n: n <= 8)
        if x is None:
            return
        n = ctx.val(x).shape[d]
        if draw(st.booleans()):
            spec = ctx.pick_int(draw, 1, max(n, 1))
        else:
            size = ctx.emit("size", (x, d))[0]
            a = ctx.pick_int(draw, 0, n)
            spec = (a, ctx.emit("binop", ("-", size, a))[0])
        ctx.emit(self.name, (x, spec, d), n_out=None)


@register
class Chunk(Op):
    name, family = "chunk", "split"
    weight = 2

    def out_types(self, args, n_out):
        x, chunks, d = args
        t = expect_tensor(x, "x", min_rank=1)
        expect_dim(d, t.rank)
        if isinstance(chunks, bool) or not isinstance(chunks, int) or not 1 <= chunks <= 16:
            raise ProgramError(f"chunks must be an int literal in 1..16, got {chunks!r}")
        return (t,) * n_out

    def eager(self, args, n_out):
        x, chunks, d = args
        return _exactly(torch.chunk(x, chunks, d), n_out)

    def source(self, args):
        return f"torch.chunk({args[0]}, {args[1]}, {args[2]})"

    def generate(self, ctx, draw):
        x, d = pick_tensor_dim(ctx, draw)
        if x is not None:
            ctx.emit(self.name, (x, draw(st.integers(1, 4)), d), n_out=None)


@register
class Unbind(Op):
    name, family = "unbind", "split"
    weight = 3

    def out_types(self, args, n_out):
        x, d = args
        t = expect_tensor(x, "x", min_rank=1)
        expect_dim(d, t.rank)
        return (VType.tensor(t.dtype, t.rank - 1),) * n_out

    def eager(self, args, n_out):
        return _exactly(torch.unbind(args[0], args[1]), n_out)

    def source(self, args):
        return f"torch.unbind({args[0]}, {args[1]})"

    def generate(self, ctx, draw):
        x, d = pick_tensor_dim(ctx, draw, pred=lambda n: 1 <= n <= 4)
        if x is not None:
            ctx.emit(self.name, (x, d), n_out=None)


def _exactly(parts, n_out: int | None) -> tuple:
    """Multi-output ops bind a fixed number of names, as `a, b = torch.split(...)` does."""
    parts = tuple(parts)
    if n_out is not None and len(parts) != n_out:
        raise ValueError(f"not enough values to unpack (expected {n_out}, got {len(parts)})"
                         if len(parts) < n_out else f"too many values to unpack (expected {n_out})")
    return parts

