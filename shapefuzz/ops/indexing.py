"""Python indexing and tolist(): x[mask], x[i] with a SymInt i, x[idx] with an int tensor, and
`a, b, c = t.tolist()` (each element an item(): unbacked when traced)."""

from __future__ import annotations

import hypothesis.strategies as st

from shapefuzz.ir import SYMINT, ProgramError, VType
from shapefuzz.ops.base import Op, expect_int, expect_tensor, get_op, register
from shapefuzz.ops.choices import sampled_from
from shapefuzz.ops.datadep import _data_dependent_count
from shapefuzz.ops.scalar import COMPARE

__all__: list[str] = []

MAX_TOLIST = 4  # elements unpacked by one tolist()


@register
class BoolIndex(Op):
    """x[mask] with mask.shape == x.shape[:k]: rank x.rank - k + 1, a data-dependent first dim."""

    name, family = "bool_index", "index"
    weight = 2

    def out_types(self, args, n_out):
        x, m = args
        t = expect_tensor(x, "x", min_rank=1)
        mt = expect_tensor(m, "mask", ("bool",), min_rank=1)
        if mt.rank > t.rank:
            raise ProgramError(f"mask rank {mt.rank} exceeds x rank {t.rank}")
        return (VType.tensor(t.dtype, t.rank - mt.rank + 1),)

    def eager(self, args, n_out):
        x, m = args
        return (x[m],)

    def source(self, args):
        return f"{args[0]}[{args[1]}]"

    def symbolic(self, args, n_out, s):
        # torch._meta_registrations.meta_index_Tensor: mask.nonzero(), then each mask dim
        # _check_index'ed against x's dim it covers
        x, m = args
        n = _data_dependent_count(s, m, nonzero=True)
        for j in range(m.rank):
            s.check(m.shape[j] == x.shape[j], "The shape of the mask does not match the shape "
                    "of the indexed tensor")
        return (s.tensor((n,) + x.shape[m.rank:], x.dtype),)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, min_rank=1)
        if x is None:
            return
        shape = tuple(ctx.val(x).shape)
        masks = ctx.refs_of(dtype="bool", min_rank=1,
                            pred=lambda t: tuple(t.shape) == shape[:t.dim()])
        if masks and draw(st.booleans()):
            m = draw(sampled_from(masks))
        elif ctx.type(x).dtype != "bool":
            m = ctx.emit("mask", (x, draw(sampled_from(sorted(COMPARE))), draw(st.integers(-1, 2))))[0]
        else:
            m = x
        ctx.emit(self.name, (x, m))


@register
class IntIndex(Op):
    """x[i] for a SymInt (or literal) i, through Python's __getitem__ (not x.select)."""

    name, family = "int_index", "index"
    weight = 2

    def out_types(self, args, n_out):
        x, i = args
        t = expect_tensor(x, "x", min_rank=1)
        expect_int(i, "index")
        return (VType.tensor(t.dtype, t.rank - 1),)

    def eager(self, args, n_out):
        x, i = args
        return (x[i],)

    def source(self, args):
        return f"{args[0]}[{args[1]}]"

    def symbolic(self, args, n_out, s):
        # A SymInt index goes through __index__: a backed one is specialized (a guard
        # i == hint), then select(0, i). torch 2.13 refuses an unbacked one with an IndexError
        # ("only integers ... are valid indices (got SymInt)") although eager takes the int:
        # that says the program is invalid when it is not, so ref does not follow it; int_of
        # raises a data-dependent error instead (what the index is depends on the data).
        x, i = args
        return get_op("select").symbolic((x, 0, s.int_of(i)), 1, s)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, min_rank=1, pred=lambda t: t.shape[0] > 0)
        if x is None:
            return
        n = ctx.val(x).shape[0]
        ctx.emit(self.name, (x, ctx.pick_int(draw, -n, n - 1, prefer_sym=True)))


@register
class TensorIndex(Op):
    """x[idx] for an int tensor idx of in-range indices (advanced indexing, aten.index)."""

    name, family = "tensor_index", "index"
    weight = 1

    def out_types(self, args, n_out):
        x, idx = args
        t = expect_tensor(x, "x", min_rank=1)
        it = expect_tensor(idx, "index", ("int",))
        return (VType.tensor(t.dtype, it.rank + t.rank - 1),)

    def eager(self, args, n_out):
        x, idx = args
        return (x[idx],)

    def source(self, args):
        return f"{args[0]}[{args[1]}]"

    def symbolic(self, args, n_out, s):
        x, idx = args
        return (s.tensor(idx.shape + x.shape[1:], x.dtype),)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, min_rank=1)
        if x is None:
            return
        n = ctx.val(x).shape[0]

        def in_range(t):
            return t.dim() <= 2 and (t.numel() == 0 or (int(t.min()) >= -n and int(t.max()) < n))

        cands = ctx.refs_of(dtype="int", pred=in_range)
        if cands and draw(st.booleans()):
            idx = draw(sampled_from(cands))
        else:  # the positions of a data-dependent mask: nonzero(...)[:, 0]
            if ctx.type(x).dtype == "bool" or n == 0:
                return
            mask = ctx.emit("mask", (ctx.emit("arange", (ctx.emit("size", (x, 0))[0],))[0],
                                     draw(sampled_from(["<", ">", "!="])), draw(st.integers(0, 2))))[0]
            idx = ctx.emit("select", (ctx.emit("nonzero", (mask,))[0], 1, 0))[0]
        ctx.emit(self.name, (x, idx))


@register
class ToList(Op):
    """`v1, v2, ... = t.tolist()` for a 1-d int tensor: one SymInt per element."""

    name, family = "tolist", "index"
    weight = 2

    def out_types(self, args, n_out):
        (x,) = args
        expect_tensor(x, "x", ("int",))
        if x.rank != 1:
            raise ProgramError(f"tolist needs a 1-d tensor (its elements are SymInts), got rank {x.rank}")
        if not 0 <= n_out <= MAX_TOLIST:
            raise ProgramError(f"tolist unpacks 0..{MAX_TOLIST} elements, got n_out={n_out}")
        return (SYMINT,) * n_out

    def eager(self, args, n_out):
        return tuple(args[0].tolist())

    def source(self, args):
        return f"{args[0]}.tolist()"

    def symbolic(self, args, n_out, s):
        # iterating a tensor needs its length as an int (specialized; unbacked: an error), and
        # each element is a local_scalar_dense: a fresh unbacked SymInt
        (x,) = args
        n = s.int_of(x.shape[0])
        return tuple(s.unbacked() for _ in range(n))

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, dtypes=("int",), min_rank=1, max_rank=1,
                            pred=lambda t: 1 <= t.numel() <= MAX_TOLIST)
        if x is not None:
            ctx.emit(self.name, (x,), n_out=None)
