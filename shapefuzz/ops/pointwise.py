"""Reductions over a dim, broadcasting arithmetic and dtype casts."""

from __future__ import annotations

import hypothesis.strategies as st
import torch

from shapefuzz.ir import ProgramError, VType
from shapefuzz.ops.base import Op, expect_choice, expect_dim, expect_tensor, register
from shapefuzz.ops.choices import sampled_from
from shapefuzz.ops.layout import pick_tensor_dim

__all__ = ["broadcast_shapes", "broadcastable"]


def broadcastable(a, b) -> bool:
    """Whether two concrete shapes broadcast, by the rule itself: the generator asks this of
    plain ints rather than of the torch under test, so a regression in torch's own broadcasting
    shows up in the program's eager and traced runs instead of stopping generation."""
    return all(x == y or 1 in (x, y) for x, y in zip(reversed(tuple(a)), reversed(tuple(b))))


def broadcast_shapes(s, *shapes) -> tuple:
    """torch._refs._broadcast_shapes: equal sizes stay, a size known to be 1 broadcasts, and
    when that is undecided the non-broadcast path is taken with a runtime check of equality."""
    common = [1] * max(len(sh) for sh in shapes)
    for shape in shapes:
        for idx in range(-1, -1 - len(shape), -1):
            n = shape[idx]
            if s.backed_size_oblivious:  # specialize to 1 where only broadcasting fits the hints
                a, b = s.hint(n), s.hint(common[idx])
                if a is not None and b is not None:
                    if a == 1 and b != 1:
                        s.check(s.sym(n) == 1)
                    if b == 1 and a != 1:
                        s.check(s.sym(common[idx]) == 1)
            if s.guard_or_false(s.sym(n) == common[idx]):
                continue
            if s.guard_or_false(s.sym(common[idx]) == 1):
                if bool(s.sym(n) < 0):
                    s.fail("Attempting to broadcast a dimension with negative length!", "ValueError")
                common[idx] = n
            undecided = s.last_how == "fallback"
            if s.guard_or_false(s.sym(n) == 1):
                continue
            if (undecided or s.last_how == "fallback") and s.statically_known_true(
                    s.sym(common[idx]) != n):  # Note [undecided broadcast]
                s.data_dependent(s.sym(n) == 1, "broadcast of sizes that differ and may be 1")
            s.check(s.sym(common[idx]) == n, lambda n=n: f"Attempting to broadcast a dimension of length {n}")
    return tuple(common)


# Note [undecided broadcast]: when neither size is known to be 1 (both guard_or_false questions
# fell back), torch takes the non-broadcast path and checks the sizes equal. When they provably
# differ (u1 against u1 - 1), torch 2.13 raises "The size of tensor a (u1) must match the size of
# tensor b (u1 - 1)" while tracing, although u1 = 1 broadcasts in eager: a claim that the program
# is invalid which is false for some inputs (reported as torch's side: make_fx and export raise
# where eager succeeds). ref does not follow torch there: only broadcasting can make the program
# valid, and whether a size is 1 is data-dependent, so it raises a data-dependent error on it.


class _Reduce(Op):
    family = "reduce"
    dtypes: tuple[str, ...]

    def out_types(self, args, n_out):
        x, d, keep = args
        t = expect_tensor(x, "x", self.dtypes, min_rank=1)
        expect_dim(d, t.rank)
        if not isinstance(keep, bool):
            raise ProgramError("keepdim must be a bool")
        dtype = "int" if t.dtype == "bool" else t.dtype
        return (VType.tensor(dtype, t.rank if keep else t.rank - 1),)

    def eager(self, args, n_out):
        x, d, keep = args
        return (getattr(x, self.name)(d, keepdim=keep),)

    def source(self, args):
        return f"{args[0]}.{self.name}({args[1]}, keepdim={args[2]})"

    def symbolic(self, args, n_out, s):
        x, d, keep = args
        dtype = "int" if x.dtype == "bool" else x.dtype
        shape = x.shape[:d] + ((1,) if keep else ()) + x.shape[d + 1:]
        return (s.tensor(shape, dtype),)

    def generate(self, ctx, draw):
        x, d = pick_tensor_dim(ctx, draw, dtypes=self.dtypes)
        if x is not None:
            ctx.emit(self.name, (x, d, draw(st.booleans())))


@register
class Sum(_Reduce):
    name, dtypes = "sum", ("float", "int", "bool")


@register
class Mean(_Reduce):
    name, dtypes = "mean", ("float",)


class _Arith(Op):
    family = "pointwise"

    def out_types(self, args, n_out):
        x, y = args
        a = expect_tensor(x, "a", ("float", "int"))
        b = expect_tensor(y, "b", ("float", "int"))
        dtype = "float" if "float" in (a.dtype, b.dtype) else "int"
        return (VType.tensor(dtype, max(a.rank, b.rank)),)

    def eager(self, args, n_out):
        return (getattr(torch, self.name)(args[0], args[1]),)

    def source(self, args):
        return f"torch.{self.name}({args[0]}, {args[1]})"

    def symbolic(self, args, n_out, s):
        a, b = args
        dtype = "float" if "float" in (a.dtype, b.dtype) else "int"
        return (s.tensor(broadcast_shapes(s, a.shape, b.shape), dtype),)

    def generate(self, ctx, draw):
        a = ctx.pick_tensor(draw, dtypes=("float", "int"))
        if a is None:
            return
        shape = ctx.val(a).shape

        others = ctx.refs_of(pred=lambda t: broadcastable(shape, t.shape), dtypes=("float", "int"))
        b = draw(sampled_from(others))
        ctx.emit(self.name, (a, b) if draw(st.booleans()) else (b, a))


@register
class Add(_Arith):
    name = "add"


@register
class Mul(_Arith):
    name = "mul"


CASTS = {"float": ("float", ".float()"), "int": ("int", ".long()"), "bool": ("bool", ".bool()")}


@register
class Cast(Op):
    name, family = "cast", "pointwise"
    weight = 1

    def out_types(self, args, n_out):
        x, dt = args
        t = expect_tensor(x, "x")
        expect_choice(dt, CASTS, "dtype")
        return (VType.tensor(dt, t.rank),)

    def eager(self, args, n_out):
        x, dt = args
        return ({"float": x.float, "int": x.long, "bool": x.bool}[dt](),)

    def source(self, args):
        return f"{args[0]}{CASTS[args[1]][1]}"

    def symbolic(self, args, n_out, s):
        x, dt = args
        return (s.tensor(x.shape, dt),)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw)
        if x is not None:
            dt = draw(sampled_from([d for d in sorted(CASTS) if d != ctx.type(x).dtype]))
            ctx.emit(self.name, (x, dt))
