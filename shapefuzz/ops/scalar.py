"""SymInt-producing ops and torch._check: sizes, item(), arithmetic, checks."""

from __future__ import annotations

import operator
import warnings

import hypothesis.strategies as st
import torch

from shapefuzz.ir import SYMINT, ProgramError
from shapefuzz.ops.base import Op, expect_choice, expect_dim, expect_int, expect_tensor, register
from shapefuzz.ops.choices import sampled_from

__all__ = ["BINOPS", "COMPARE", "LARGE_CONSTANTS", "NEGATE", "constant", "sym_compare"]

# name -> (eager function, source template)
BINOPS = {
    "+": (operator.add, "{a} + {b}"),
    "-": (operator.sub, "{a} - {b}"),
    "*": (operator.mul, "{a} * {b}"),
    "//": (operator.floordiv, "{a} // {b}"),
    "%": (operator.mod, "{a} % {b}"),
    "max": (lambda a, b: torch.sym_max(a, b), "torch.sym_max({a}, {b})"),
    "min": (lambda a, b: torch.sym_min(a, b), "torch.sym_min({a}, {b})"),
}
COMPARE = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt,
    ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
}
NEGATE = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}


# Note [large constants]: real shapes multiply and reduce by large and prime constants
# (`256 * u0 % 447`); the range analysis, the simplifier and z3 meet other expressions then
# than with 0..4. Primes up to 1021 and powers of two up to 1024 (and 447, the real one).
LARGE_CONSTANTS = (5, 7, 8, 11, 13, 16, 17, 31, 32, 61, 64, 127, 128, 251, 256, 257, 447, 509,
                   512, 1021, 1024)


def constant(draw, lo: int, hi: int) -> int:
    """A literal operand of SymInt arithmetic: mostly in [lo, hi], one time in four a large one
    (Note [large constants]), negated when lo < 0 allows negative values."""
    if draw(st.integers(0, 3)):
        return draw(st.integers(lo, hi))
    c = draw(sampled_from(LARGE_CONSTANTS))
    return -c if lo < 0 and draw(st.booleans()) else c


def sym_compare(s, cmp, a, b):
    """`a cmp b` as a SymBool of the reference (the literal side made a SymInt)."""
    return COMPARE[cmp](s.sym(a), b)


@register
class Size(Op):
    name, family = "size", "scalar"
    weight = 1
    data_independent_output = True

    def out_types(self, args, n_out):
        x, d = args
        expect_dim(d, expect_tensor(x, "x", min_rank=1).rank)
        return (SYMINT,)

    def eager(self, args, n_out):
        x, d = args
        return (x.shape[d],)

    def source(self, args):
        return f"{args[0]}.shape[{args[1]}]"

    def symbolic(self, args, n_out, s):
        x, d = args
        return (x.shape[d],)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, min_rank=1)
        if x is not None:
            ctx.emit(self.name, (x, draw(st.integers(0, ctx.type(x).rank - 1))))


@register
class Numel(Op):
    name, family = "numel", "scalar"
    weight = 1
    data_independent_output = True

    def out_types(self, args, n_out):
        (x,) = args
        expect_tensor(x, "x")
        return (SYMINT,)

    def eager(self, args, n_out):
        return (args[0].numel(),)

    def source(self, args):
        return f"{args[0]}.numel()"

    def symbolic(self, args, n_out, s):
        return (s.numel(args[0]),)

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, min_rank=1)
        if x is not None:
            ctx.emit(self.name, (x,))


ITEM_MODES = {"sum": "{x}.sum().item()", "first": "{x}.reshape(-1)[0].item()",
              "max": "{x}.max().item()"}


@register
class Item(Op):
    """A data-dependent SymInt: unbacked when traced."""

    name, family = "item", "datadep"
    weight = 4

    def out_types(self, args, n_out):
        x, mode = args
        expect_choice(mode, ITEM_MODES, "item mode")
        expect_tensor(x, "x", ("int", "bool") if mode == "sum" else ("int",))
        return (SYMINT,)

    def eager(self, args, n_out):
        x, mode = args
        if mode == "sum":
            return (x.sum().item(),)
        if mode == "first":
            return (x.reshape(-1)[0].item(),)
        return (x.max().item(),)

    def source(self, args):
        return ITEM_MODES[args[1]].format(x=args[0])

    def symbolic(self, args, n_out, s):
        x, mode = args
        if mode == "first":  # x.reshape(-1)[0]: select() rejects an index it knows is out of range
            n = s.numel(x)
            if s.guard_or_false(n <= 0):
                s.fail(f"index 0 is out of bounds for dimension 0 with size {s.static(n)}",
                       "IndexError")
        # local_scalar_dense: a fresh unbacked SymInt, nothing known about its value
        return (s.unbacked(),)

    def generate(self, ctx, draw):
        mode = draw(sampled_from(sorted(ITEM_MODES)))
        dtypes = ("int", "bool") if mode == "sum" else ("int",)
        nonempty = (lambda t: t.numel() > 0) if mode != "sum" else None
        x = ctx.pick_tensor(draw, dtypes=dtypes, pred=nonempty)
        if x is not None:
            ctx.emit(self.name, (x, mode))


@register
class BinOp(Op):
    name, family = "binop", "symint"
    weight = 3

    def out_types(self, args, n_out):
        op, a, b = args
        expect_choice(op, BINOPS, "binop operator")
        expect_int(a, "a")
        expect_int(b, "b")
        return (SYMINT,)

    def eager(self, args, n_out):
        op, a, b = args
        return (BINOPS[op][0](a, b),)

    def source(self, args):
        op, a, b = args
        return BINOPS[op][1].format(a=a, b=b)

    def symbolic(self, args, n_out, s):
        op, a, b = args
        return (s.binop(op, a, b),)

    def generate(self, ctx, draw):
        a = ctx.pick_sym(draw)
        if a is None:
            return
        op = draw(sampled_from(sorted(BINOPS)))
        lo, hi = (1, 4) if op in ("//", "%") else (-2, 4) if op in ("+", "-", "max", "min") else (0, 3)
        b = ctx.pick_int(draw, lo, hi)
        if isinstance(b, int) and not isinstance(b, bool):
            b = constant(draw, lo, hi)
        if draw(st.booleans()) and op not in ("//", "%", "-"):
            a, b = b, a
        if isinstance(a, int) and isinstance(b, int):
            return
        ctx.emit(self.name, (op, a, b))


@register
class Check(Op):
    """torch._check(a <cmp> b): a deferred runtime assert (unbacked) or a guard (backed)."""

    name, family = "check", "check"
    weight = 4

    def out_types(self, args, n_out):
        cmp, a, b = args
        expect_choice(cmp, COMPARE, "comparison")
        expect_int(a, "a")
        expect_int(b, "b")
        return ()

    def eager(self, args, n_out):
        cmp, a, b = args
        torch._check(COMPARE[cmp](a, b))
        return ()

    def source(self, args):
        cmp, a, b = args
        return f"torch._check({a} {cmp} {b})"

    def symbolic(self, args, n_out, s):
        cmp, a, b = args
        s.check(sym_compare(s, cmp, a, b))
        return ()

    def generate(self, ctx, draw):
        a = ctx.pick_sym(draw, prefer_unbacked=True)
        if a is None:
            return
        av = ctx.val(a)
        b = ctx.pick_int(draw, None, None)
        bv = ctx.val(b)
        true_cmps = sorted(c for c, f in COMPARE.items() if f(av, bv))
        # Mostly true checks (valid programs); sometimes a false one, for error agreement.
        cmps = true_cmps if draw(st.integers(0, 19)) else sorted(COMPARE)
        ctx.emit(self.name, (draw(sampled_from(cmps)), a, b), n_out=0)


@register
class CheckIsSize(Op):
    name, family = "check_is_size", "check"

    def out_types(self, args, n_out):
        (a,) = args
        if a != SYMINT:
            raise ProgramError("check_is_size needs a SymInt value")
        return ()

    def eager(self, args, n_out):
        with warnings.catch_warnings():  # deprecated in favour of _check(i >= 0); still fuzzed
            warnings.simplefilter("ignore", FutureWarning)
            torch._check_is_size(args[0])
        return ()

    def source(self, args):
        return f"torch._check_is_size({args[0]})"

    def symbolic(self, args, n_out, s):
        s.check(s.sym(args[0]) >= 0)  # _check(a >= 0); the env then treats a as size-like
        return ()

    def generate(self, ctx, draw):
        a = ctx.pick_sym(draw, prefer_unbacked=True, pred=lambda v: v >= 0)
        if a is not None:
            ctx.emit(self.name, (a,), n_out=0)
