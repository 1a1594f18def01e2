"""Ops with several tensor inputs or outputs: cat, split, chunk, unbind."""

from __future__ import annotations

import hypothesis.strategies as st
import torch

from shapefuzz.ir import ProgramError, VType
from shapefuzz.ops.base import Op, expect_dim, expect_int, expect_tensor, get_op, register
from shapefuzz.ops.choices import sampled_from
from shapefuzz.ops.layout import pick_tensor_dim

__all__ = ["split_by", "split_with_sizes"]


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

    def symbolic(self, args, n_out, s):
        # torch._refs.cat: 1-D inputs known to be empty are dropped (legacy), the others must
        # agree on every dim but the cat dim (prims.cat checks it), which adds up
        xs, d = args
        rank = max(x.rank for x in xs)
        kept = []
        for k, x in enumerate(xs):
            if x.rank != rank:
                if not s.guard_or_false(x.shape[0] == 0):
                    s.fail(f"Number of dimensions of tensors must match.  Expected {rank}-D "
                           f"tensors, but got 1-D for tensor number {k} in the list")
            elif not (x.rank == 1 and s.guard_or_false(x.shape[0] == 0)):
                kept.append(x)
        if not kept:
            return (s.tensor((0,), xs[0].dtype),)
        first = kept[0]
        total = first.shape[d]
        for x in kept[1:]:
            for j in range(rank):
                if j != d:
                    s.check(x.shape[j] == first.shape[j], lambda: f"Sizes of tensors must match except "
                            f"in dimension {d}")
            total = total + x.shape[d]
        return (s.tensor(first.shape[:d] + (total,) + first.shape[d + 1:], first.dtype),)

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
        xs = (x,) + tuple(draw(sampled_from(others)) for _ in range(n))
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

    def symbolic(self, args, n_out, s):
        x, spec, d = args
        if isinstance(spec, tuple):
            return split_with_sizes(s, x, spec, d)
        return split_by(s, x, s.sym(spec), d)

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

    def symbolic(self, args, n_out, s):
        # aten::chunk (C++): pieces of ceil(n / chunks), through split
        x, chunks, d = args
        n = x.shape[d]
        size = (n + chunks - 1) // chunks
        if bool(size == 0) and bool(n == 0):
            sizes = [size] * chunks
            sizes[-1] = size - (size * chunks - n)
            return split_with_sizes(s, x, sizes, d)
        return split_by(s, x, size, d)

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

    def symbolic(self, args, n_out, s):
        # aten::unbind (C++): one select per index, so the size is specialized (int())
        x, d = args
        select = get_op("select")
        return tuple(select.symbolic((x, d, i), 1, s)[0] for i in range(s.int_of(x.shape[d])))

    def generate(self, ctx, draw):
        x, d = pick_tensor_dim(ctx, draw, pred=lambda n: 1 <= n <= 4)
        if x is not None:
            ctx.emit(self.name, (x, d), n_out=None)


def split_by(s, x, k, d) -> tuple:
    """aten::split (C++): ceil(n / k) pieces (int(): a guard, or a data-dependent error for an
    unbacked size), each a narrow of x."""
    n = x.shape[d]
    if not bool(k >= 0):
        s.fail(f"split expects split_size be non-negative, but got split_size={s.expr(k)}")
    if not (bool(k > 0) or bool(n == 0)):
        s.fail("split_size can only be 0 if dimension size is 0")
    num = max(s.int_of((n + k - 1) // k), 1) if bool(k != 0) else 1
    last = k - (k * num - n)
    narrow = get_op("narrow")
    return tuple(narrow.symbolic((x, d, k * i, k if i < num - 1 else last), 1, s)[0]
                 for i in range(num))


def split_with_sizes(s, x, sizes, d) -> tuple:
    """aten::split_with_sizes (C++): a narrow per size; the sizes must add up to the dim."""
    narrow = get_op("narrow")
    start, out = s.sym(0), []
    for length in sizes:
        s.check(s.sym(length) >= 0, "split_with_sizes expects split_sizes have only "
                "non-negative entries")
        out.append(narrow.symbolic((x, d, start, length), 1, s)[0])
        start = start + length
    s.check(start == x.shape[d],
            lambda: f"split_with_sizes expects split_sizes to sum exactly to {x.shape[d]}")
    return tuple(out)


def _exactly(parts, n_out: int | None) -> tuple:
    """Multi-output ops bind a fixed number of names, as `a, b = torch.split(...)` does."""
    parts = tuple(parts)
    if n_out is not None and len(parts) != n_out:
        raise ValueError(f"not enough values to unpack (expected {n_out}, got {len(parts)})"
                         if len(parts) < n_out else f"too many values to unpack (expected {n_out})")
    return parts

