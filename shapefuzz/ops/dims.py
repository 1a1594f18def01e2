"""Ops that add, drop, reorder, repeat or pad dims: expand, squeeze, unsqueeze, permute,
transpose, repeat, pad (the view ops that keep the dims are in layout.py)."""

from __future__ import annotations

import math

import hypothesis.strategies as st
import torch

from shapefuzz.ir import ProgramError, VType
from shapefuzz.ops.base import Op, expect_dim, expect_tensor, register
from shapefuzz.ops.layout import expect_ints, expect_perm, pick_tensor_dim, tup

__all__: list[str] = []


@register
class Expand(Op):
    name, family = "expand", "layout"
    weight = 2

    def out_types(self, args, n_out):
        x, sizes = args
        t = expect_tensor(x, "x")
        expect_ints(sizes, "sizes")
        if len(sizes) < t.rank:
            raise ProgramError("expand needs at least as many sizes as the tensor has dims")
        return (VType.tensor(t.dtype, len(sizes)),)

    def eager(self, args, n_out):
        return (args[0].expand(args[1]),)

    def source(self, args):
        return f"{args[0]}.expand{tup(args[1])}"

    def symbolic(self, args, n_out, s):
        # inferExpandGeometry: -1 keeps a size, a size-1 dim broadcasts, others must match
        x, sizes = args
        offset = len(sizes) - x.rank
        out = []
        for i, size in enumerate(sizes):
            have = x.shape[i - offset] if i >= offset else None
            if s.static(size) == -1:
                if have is None:
                    s.fail(f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                           f"non-existing dimension {i}")
                out.append(have)
                continue
            s.check(s.sym(size) >= 0, lambda size=size: f"expand: the size {size} must be non-negative")
            if have is not None and s.backed_size_oblivious:  # torch._refs.expand: specialize
                a, b = s.hint(have), s.hint(size)  # to 1 where only broadcasting fits the hints
                if a == 1 and b is not None and b != 1:
                    s.check(have == 1)
            if have is not None and not s.guard_or_false(have == 1):
                # Note [expand that can only broadcast]: torch._refs.expand checks have == size
                # when have == 1 is undecided, and raises at trace time when the facts already
                # say have != size (an unbacked min(1, u0) expanded to 3), although the program
                # is valid exactly when have is 1, which eager then broadcasts. ref checks
                # have == 1 there and agrees with eager; torch's trace error is reported
                # against torch (eager agreement, the system differential), not against ref.
                match = have == 1 if s.statically_known_true(have != size) else have == size
                s.check(match, lambda size=size, have=have, i=i: (
                    f"The expanded size of the tensor ({size}) must match the existing size "
                    f"({have}) at non-singleton dimension {i}"))
            out.append(size)
        return (s.tensor(out, x.dtype),)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, max_rank=ctx.settings.max_rank - 1)
        if x is None:
            return
        shape = ctx.val(x).shape
        sizes = [ctx.pick_int(draw, 0, ctx.settings.max_size) if n == 1 and draw(st.booleans()) else -1
                 for n in shape]
        lead = [ctx.pick_int(draw, 0, 3)] if draw(st.booleans()) or not shape else []
        ctx.emit(self.name, (x, tuple(lead + sizes)))


@register
class Squeeze(Op):
    name, family = "squeeze", "layout"

    def out_types(self, args, n_out):
        x, d = args
        t = expect_tensor(x, "x", min_rank=1)
        expect_dim(d, t.rank)
        # Typed for the size-1 dim the generator picks; on other inputs squeeze is a no-op and
        # the real rank differs, which every system sees alike.
        return (VType.tensor(t.dtype, t.rank - 1),)

    def eager(self, args, n_out):
        x, d = args
        return (x.squeeze(d),)

    def source(self, args):
        return f"{args[0]}.squeeze({args[1]})"

    def symbolic(self, args, n_out, s):
        # Note [squeeze deviates from torch]: torch's meta keeps a dim it cannot prove to be 1
        # (guard_or_false), while the kernel squeezes it when it is 1 at run time: a wrong shape
        # claim (corpus/squeeze-unbacked-meta-make_fx). The reference decides instead: a backed
        # dim (under backed_size_oblivious) is guarded, an unbacked one is a data-dependent error.
        x, d = args
        n = x.shape[d]
        if s.guard_or_false(n == 1):
            return (s.tensor(x.shape[:d] + x.shape[d + 1:], x.dtype),)
        if s.statically_known_true(n != 1):
            return (x,)
        if s.hint(n) is None:
            s.data_dependent(n == 1, "squeeze() of a dim that may be 1")
        return (s.tensor(x.shape[:d] + x.shape[d + 1:], x.dtype),) if bool(n == 1) else (x,)

    def generate(self, ctx, draw):
        x, d = pick_tensor_dim(ctx, draw, pred=lambda n: n == 1)
        if x is not None:
            ctx.emit(self.name, (x, d))


@register
class Unsqueeze(Op):
    name, family = "unsqueeze", "layout"

    def out_types(self, args, n_out):
        x, d = args
        t = expect_tensor(x, "x")
        expect_dim(d, t.rank + 1)
        return (VType.tensor(t.dtype, t.rank + 1),)

    def eager(self, args, n_out):
        return (args[0].unsqueeze(args[1]),)

    def source(self, args):
        return f"{args[0]}.unsqueeze({args[1]})"

    def symbolic(self, args, n_out, s):
        x, d = args
        return (s.tensor(x.shape[:d] + (1,) + x.shape[d:], x.dtype),)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, max_rank=ctx.settings.max_rank - 1)
        if x is not None:
            ctx.emit(self.name, (x, draw(st.integers(0, ctx.type(x).rank))))


@register
class Permute(Op):
    name, family = "permute", "layout"

    def out_types(self, args, n_out):
        x, perm = args
        t = expect_tensor(x, "x")
        expect_perm(perm, t.rank)
        return (t,)

    def eager(self, args, n_out):
        return (args[0].permute(args[1]),)

    def source(self, args):
        return f"{args[0]}.permute{tup(args[1])}"

    def symbolic(self, args, n_out, s):
        x, perm = args
        return (s.tensor(tuple(x.shape[p] for p in perm), x.dtype),)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, min_rank=2)
        if x is not None:
            perm = draw(st.permutations(range(ctx.type(x).rank)))
            ctx.emit(self.name, (x, tuple(perm)))


@register
class Transpose(Op):
    name, family = "transpose", "layout"

    def out_types(self, args, n_out):
        x, a, b = args
        t = expect_tensor(x, "x", min_rank=1)
        expect_dim(a, t.rank)
        expect_dim(b, t.rank)
        return (t,)

    def eager(self, args, n_out):
        return (args[0].transpose(args[1], args[2]),)

    def source(self, args):
        return f"{args[0]}.transpose({args[1]}, {args[2]})"

    def symbolic(self, args, n_out, s):
        x, a, b = args
        shape = list(x.shape)
        shape[a], shape[b] = shape[b], shape[a]
        return (s.tensor(shape, x.dtype),)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, min_rank=2)
        if x is not None:
            r = ctx.type(x).rank
            ctx.emit(self.name, (x, draw(st.integers(0, r - 1)), draw(st.integers(0, r - 1))))


@register
class Repeat(Op):
    name, family = "repeat", "layout"

    def out_types(self, args, n_out):
        x, reps = args
        t = expect_tensor(x, "x")
        expect_ints(reps, "repeats")
        if len(reps) < t.rank:
            raise ProgramError("repeat needs at least as many repeats as the tensor has dims")
        return (VType.tensor(t.dtype, len(reps)),)

    def eager(self, args, n_out):
        return (args[0].repeat(args[1]),)

    def source(self, args):
        return f"{args[0]}.repeat{tup(args[1])}"

    def symbolic(self, args, n_out, s):
        # meta_repeat
        x, reps = args
        for i, r in enumerate(reps):
            s.check(s.sym(r) >= 0, lambda r=r, i=i: f"Repeats cannot be negative, found {r} at index {i}")
        padded = (1,) * (len(reps) - x.rank) + tuple(x.shape)
        return (s.tensor([s.sym(n) * r for n, r in zip(padded, reps)], x.dtype),)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, pred=lambda t: t.numel() <= 16)
        if x is None:
            return
        rank = ctx.type(x).rank
        extra = 1 if rank < ctx.settings.max_rank and draw(st.booleans()) else 0
        reps = tuple(ctx.pick_int(draw, 0, 3) for _ in range(rank + extra))
        if not reps or math.prod(ctx.val(r) for r in reps) > 8:
            return
        ctx.emit(self.name, (x, reps))


@register
class Pad(Op):
    """torch.nn.functional.pad(x, (l0, r0, l1, r1 ...)), constant 0: the last dims grow by their
    pads, and a negative pad cuts (torch's constant_pad_nd narrows first, then checks the new
    size is >= 0). Pads may be SymInts, so each sign is a question the trace asks. No reference
    rule (ref skips the program: Note [symbolic shape rules]): the refs' pad asks one question
    per sign, twice, in an order only its code keeps."""

    name, family = "pad", "layout"
    weight = 2

    def out_types(self, args, n_out):
        x, pads = args
        t = expect_tensor(x, "x", ("float", "int"), min_rank=1)
        expect_ints(pads, "pads")
        if not pads or len(pads) % 2 or len(pads) // 2 > t.rank:
            raise ProgramError("pad takes an even, non-empty list of at most two pads per dim")
        return (t,)

    def eager(self, args, n_out):
        return (torch.nn.functional.pad(args[0], list(args[1])),)

    def source(self, args):
        return f"torch.nn.functional.pad({args[0]}, {tup(args[1])})"

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, dtypes=("float", "int"), min_rank=1)
        if x is None:
            return
        shape = ctx.val(x).shape
        pads = []
        for d in range(min(len(shape), draw(st.integers(1, 2)))):
            n = shape[-1 - d]  # pads run from the last dim backwards
            pads += [ctx.pick_int(draw, -(n // 2), 3), ctx.pick_int(draw, -(n // 2), 3)]
        ctx.emit(self.name, (x, tuple(pads)))
