"""View and layout ops that keep the dims: reshape, view, flip, narrow, select, slice (those
that add, drop, reorder or repeat dims are in dims.py), and the helpers both share."""

from __future__ import annotations

import hypothesis.strategies as st
import torch

from shapefuzz.ir import ProgramError, VType
from shapefuzz.ops.base import Op, expect_dim, expect_int, expect_tensor, register
from shapefuzz.ops.choices import sampled_from

__all__ = ["infer_size", "pick_tensor_dim", "tup"]


def tup(xs) -> str:
    return "(" + ", ".join(map(str, xs)) + ("," if len(xs) == 1 else "") + ")"


def expect_ints(xs, what: str) -> None:
    if not isinstance(xs, tuple):
        raise ProgramError(f"{what} must be a list")
    for k, x in enumerate(xs):
        expect_int(x, f"{what}[{k}]")


def expect_perm(p, rank: int) -> None:
    if not isinstance(p, tuple) or sorted(p) != list(range(rank)):
        raise ProgramError(f"dims must be a permutation of range({rank}), got {p!r}")


def pick_tensor_dim(ctx, draw, pred=None, **kw):
    """A tensor of rank >= 1 and one of its dims, or (None, None)."""
    x = ctx.pick_tensor(draw, min_rank=1, **kw)
    if x is None:
        return None, None
    dims = [d for d in range(ctx.type(x).rank) if pred is None or pred(ctx.val(x).shape[d])]
    return (x, draw(sampled_from(dims))) if dims else (None, None)


def infer_size(s, shape, numel) -> tuple:
    """torch._prims_common.infer_size: the -1 dim is numel // (product of the others)."""
    dim, newsize = None, s.sym(1)
    for i, d in enumerate(shape):
        if s.guard_or_false(s.sym(d) == -1):
            if dim is not None:
                s.fail("only one dimension can be inferred")
            dim = i
        else:
            s.check(s.sym(d) >= 0, lambda d=d: f"invalid shape dimension {d}")
            newsize = newsize * d
    if dim is None:
        s.check(numel == newsize, lambda: f"shape is invalid for input of size {numel}")
        return tuple(shape)
    s.check(newsize != 0, lambda: f"shape is invalid for input of size {numel}")
    s.check(numel % newsize == 0, lambda: f"shape is invalid for input of size {numel}")
    out = list(shape)
    out[dim] = numel // newsize
    s.check(out[dim] >= 0)
    return tuple(out)


def _slice_index(s, size, index):
    """fake_impls._compute_slice_index: a start/end clamped into [0, size], or None when the
    env cannot tell which case applies."""
    if s.guard_or_false(index >= 0) and s.guard_or_false(index <= size):
        return index
    if s.guard_or_false(index < 0) and s.guard_or_false(index >= -size):
        return index + size
    if s.guard_or_false(index < -size):
        return s.sym(0)
    if s.guard_or_false(index > size):
        return size
    if s.guard_or_false(index >= 0):
        return s.min(index, size)
    if s.guard_or_false(index < 0):
        return s.max(index + size, 0)
    return None


def _sliced(s, x, d, start, end):
    """fake_impls.slice_forward (step 1): the size is end - start when that is known to be
    >= 0, 0 when known <= 0, else max(end - start, 0); a fresh unbacked size in [0, n] when an
    index cannot be resolved."""
    n = x.shape[d]
    lo = s.sym(0) if start is None else _slice_index(s, n, s.sym(start))
    hi = n if end is None else _slice_index(s, n, s.sym(end))
    if lo is None or hi is None:
        size = s.unbacked()
        s.check(size >= 0)
        s.check(size <= n)
    elif s.guard_or_false(hi >= lo):
        size = hi - lo
    elif s.guard_or_false(lo >= hi):
        size = s.sym(0)
    else:
        size = s.max(hi - lo, 0)
    return s.tensor(x.shape[:d] + (size,) + x.shape[d + 1:], x.dtype)


class _Reshape(Op):
    family = "reshape"
    method = "reshape"

    def out_types(self, args, n_out):
        x, shape = args
        t = expect_tensor(x, "x")
        expect_ints(shape, "shape")
        return (VType.tensor(t.dtype, len(shape)),)

    def eager(self, args, n_out):
        x, shape = args
        return (getattr(x, self.method)(shape),)

    def source(self, args):
        return f"{args[0]}.{self.method}{tup(args[1])}"

    def symbolic(self, args, n_out, s):
        x, shape = args
        return (s.tensor(infer_size(s, shape, s.numel(x)), x.dtype),)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, pred=lambda t: self.method != "view" or t.is_contiguous())
        if x is None:
            return
        t = ctx.val(x)
        numel, rank = t.numel(), t.dim()
        reshape = draw(sampled_from(["flatten", "keep_first", "by_k", "unit", "merge"]))
        if reshape == "flatten":
            shape = (-1,)
        elif reshape == "keep_first" and rank >= 1:
            shape = (ctx.emit("size", (x, 0))[0], -1)
        elif reshape == "by_k" and numel > 0:
            ks = [k for k in (1, 2, 3, 4) if numel % k == 0]
            k = draw(sampled_from(ks))
            shape = (-1, k) if draw(st.booleans()) else (k, -1)
        elif reshape == "merge" and rank >= 2:
            i = draw(st.integers(0, rank - 2))
            a, b = ctx.emit("size", (x, i))[0], ctx.emit("size", (x, i + 1))[0]
            ab = ctx.emit("binop", ("*", a, b))[0]
            sizes = [ctx.emit("size", (x, j))[0] if j not in (i, i + 1) else None for j in range(rank)]
            shape = tuple(s for s in sizes[:i]) + (ab,) + tuple(s for s in sizes[i + 2:])
        else:
            shape = tuple(ctx.emit("size", (x, j))[0] for j in range(rank)) + (1,)
        ctx.emit(self.name, (x, shape))


@register
class Reshape(_Reshape):
    name, method = "reshape", "reshape"
    weight = 3


@register
class View(_Reshape):
    name, method = "view", "view"
    weight = 2


@register
class Flip(Op):
    name, family = "flip", "layout"
    weight = 2

    def out_types(self, args, n_out):
        x, dims = args
        t = expect_tensor(x, "x", min_rank=1)
        if not isinstance(dims, tuple) or not dims or len(set(dims)) != len(dims):
            raise ProgramError("flip dims must be a non-empty list of distinct dims")
        for d in dims:
            expect_dim(d, t.rank)
        return (t,)

    def eager(self, args, n_out):
        return (torch.flip(args[0], args[1]),)

    def source(self, args):
        return f"torch.flip({args[0]}, {tup(args[1])})"

    def symbolic(self, args, n_out, s):
        return (args[0],)  # prims.rev: same sizes, no question

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, min_rank=1)
        if x is not None:
            rank = ctx.type(x).rank
            dims = draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True))
            ctx.emit(self.name, (x, tuple(dims)))


@register
class Narrow(Op):
    name, family = "narrow", "layout"
    weight = 4

    def out_types(self, args, n_out):
        x, d, start, length = args
        t = expect_tensor(x, "x", min_rank=1)
        expect_dim(d, t.rank)
        expect_int(start, "start")
        expect_int(length, "length")
        return (t,)

    def eager(self, args, n_out):
        x, d, start, length = args
        return (x.narrow(d, start, length),)

    def source(self, args):
        return f"{args[0]}.narrow({args[1]}, {args[2]}, {args[3]})"

    def symbolic(self, args, n_out, s):
        # aten::narrow (C++), then slice from start to start + length
        x, d, start, length = args
        n, start, length = x.shape[d], s.sym(start), s.sym(length)
        s.check(length >= 0, "narrow(): length must be non-negative.")
        s.check(-n <= start, lambda: f"start out of range (expected to be in range of [-{n}, {n}])")
        s.check(start <= n, lambda: f"start out of range (expected to be in range of [-{n}, {n}])")
        if s.guard_or_false(start < 0):
            start = start + n
        s.check(start <= n - length, "start + length exceeds dimension size")
        return (_sliced(s, x, d, start, start + length),)

    def generate(self, ctx, draw):
        x, d = pick_tensor_dim(ctx, draw)
        if x is None:
            return
        n = ctx.val(x).shape[d]
        start = ctx.pick_int(draw, 0, n)
        length = ctx.pick_int(draw, 0, n - ctx.val(start))
        ctx.emit(self.name, (x, d, start, length))


@register
class Select(Op):
    name, family = "select", "layout"

    def out_types(self, args, n_out):
        x, d, i = args
        t = expect_tensor(x, "x", min_rank=1)
        expect_dim(d, t.rank)
        expect_int(i, "index")
        return (VType.tensor(t.dtype, t.rank - 1),)

    def eager(self, args, n_out):
        x, d, i = args
        return (x.select(d, i),)

    def source(self, args):
        return f"{args[0]}.select({args[1]}, {args[2]})"

    def symbolic(self, args, n_out, s):
        # torch._subclasses.fake_impls.meta_select
        x, d, i = args
        n, i = x.shape[d], s.sym(i)
        if s.guard_or_false(i >= n) or s.guard_or_false(i < -n):
            s.fail(f"select(): index {s.expr(i)} out of range for tensor of size {n} at "
                   f"dimension {d}", "IndexError")
        if not s.guard_or_false(i >= 0):
            s.guard_or_false(i < 0)  # which storage offset: asked, it changes no size
        return (s.tensor(x.shape[:d] + x.shape[d + 1:], x.dtype),)

    def generate(self, ctx, draw):
        x, d = pick_tensor_dim(ctx, draw, pred=lambda n: n > 0)
        if x is not None:
            n = ctx.val(x).shape[d]
            ctx.emit(self.name, (x, d, ctx.pick_int(draw, -n, n - 1)))


@register
class Slice(Op):
    """Python slicing x[..., a:b]: out-of-range bounds clamp, None means open."""

    name, family = "slice", "layout"
    weight = 3

    def out_types(self, args, n_out):
        x, d, start, end = args
        t = expect_tensor(x, "x", min_rank=1)
        expect_dim(d, t.rank)
        for v, what in ((start, "start"), (end, "end")):
            if v is not None:
                expect_int(v, what)
        return (t,)

    def eager(self, args, n_out):
        x, d, start, end = args
        return (x[(slice(None),) * d + (slice(start, end),)],)

    def source(self, args):
        x, d, start, end = args
        lo = "" if start == "None" else start
        hi = "" if end == "None" else end
        return f"{x}[{':, ' * int(d)}{lo}:{hi}]"

    def symbolic(self, args, n_out, s):
        x, d, start, end = args
        return (_sliced(s, x, d, start, end),)

    def generate(self, ctx, draw):
        x, d = pick_tensor_dim(ctx, draw)
        if x is None:
            return
        n = ctx.val(x).shape[d]
        # bounds up to twice out of range (they clamp): a symbolic bound past the end at run
        # time, undecided against the size in the trace, is what the slice rule's sym_min /
        # sym_max arm is for; with bounds up to n + 1 a symbol had to be worth n + 1 exactly
        start = ctx.pick_int(draw, -2 * n - 2, 2 * n + 2) if draw(st.booleans()) else None
        end = ctx.pick_int(draw, -2 * n - 2, 2 * n + 2) if draw(st.booleans()) else None
        ctx.emit(self.name, (x, d, start, end))
