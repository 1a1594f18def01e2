"""Shape branches: plain `if` (may guard), guard_or_false, guard_or_true, statically_known_true,
statically_known_false, guard_size_oblivious.

guard_or_true and statically_known_false are asked of the negated condition, as torch's own code
asks them (`if guard_or_true(n != 1): general`, `if statically_known_false(n == 1): fast`), so
the fast arm is still the one valid when C holds.

Note [branch contract]: a branch has a condition C, a fast arm valid when C holds and a general
arm. guard_or_false / guard_or_true / statically_known_true may take the general arm whenever the
system cannot decide (the fallback), so the reference semantics of a traced program is eager
execution *with the branches the trace sent to the general arm forced there* (interp.run's
`forced_general`). A branch the trace sent to the fast arm is a claim that C holds; eager checks it
on every input. So a generated pair of arms that disagree can never produce a false finding, and a
wrong claim always can produce a real one.

Note [size-oblivious branches]: guard_size_oblivious(C) answers as if every size-like symbol were
>= 2, by design, so its True may be false at a size of 0 or 1. Its branches are therefore only
generated over conditions that are *False* under that assumption (`y.shape[d] == 0` of
cat_empty, `n >= x.shape[d]` of slice_all for a literal n in {0, 1}): the oblivious answer can
only send them to the general arm, which is always valid, so a traced False is a fallback (the
reference forces the general arm), and a True is a claim eager checks, as for guard_or_false.

Note [re-asked branches]: a shape system's answer may depend on what it was asked before (seed
000's caches, the history oracle's class): a question answered by fallback, then decided by a
torch._check, must get the sharper answer when asked again, and a cache that misses the new
fact keeps the stale one. A program that asks the same question twice with a fact between is
rare by chance (3 of 600 generated programs), so a quarter of the branches are re-asked at once
and a quarter of the later ones re-ask an earlier branch instead of a new one: a torch._check
stating that branch's condition (or its negation, whichever holds in eager), then the same
branch again, in its own mode or another one. The check is true in eager, so the program stays
valid, and the second answer must be a claim for any system that reads its own facts.
"""

from __future__ import annotations

import warnings

import hypothesis.strategies as st
import torch
from torch.fx.experimental.symbolic_shapes import (
    guard_or_false,
    guard_or_true,
    guard_size_oblivious,
    statically_known_false,
    statically_known_true,
)

from shapefuzz.ir import SYMINT, ProgramError
from shapefuzz.ops.base import (
    Op,
    expect_choice,
    expect_dim,
    expect_int,
    expect_tensor,
    get_op,
    register,
)
from shapefuzz.ops.choices import sampled_from
from shapefuzz.ops.scalar import COMPARE, NEGATE, sym_compare

__all__ = ["MODES", "PATTERNS", "Branch"]

MODES = ("if", "guard_or_false", "guard_or_true", "statically_known_true", "statically_known_false",
         "guard_size_oblivious")
#: how a mode is written in a program's source (guard_size_oblivious fully qualified: the repro
#: templates import only the other names)
_WRAP = {"if": "{}", "guard_size_oblivious": "torch.fx.experimental.symbolic_shapes.guard_size_oblivious({})"}
#: the patterns a size-oblivious branch may use (Note [size-oblivious branches])
OBLIVIOUS_PATTERNS = ("cat_empty", "slice_all")


def _size_oblivious(c) -> bool:
    with warnings.catch_warnings():  # deprecated in torch 2.13 (FutureWarning), still fuzzed
        warnings.simplefilter("ignore", FutureWarning)
        return guard_size_oblivious(c)


class Pattern:
    """cond = (lhs, cmp, rhs); `fast` is valid when cond holds, `general` always."""

    name: str
    sorts: tuple[str, ...]  # operand sorts: "int", "tensor", "dim"

    def cond(self, o, src=False):  # -> (lhs, cmp, rhs), on values or on source strings
        raise NotImplementedError

    def cond_refs(self, o, size):
        """cond over program operands (Refs and literals), with `size(x, d)` giving a tensor
        dim's size as an operand: what a torch._check of the condition reads."""
        return self.cond(o)


class _IntPattern(Pattern):
    sorts = ("int", "int")

    def result_type(self, types):
        return SYMINT


class MaxPattern(_IntPattern):
    name = "max"

    def cond(self, o, src=False):
        return o[0], ">=", o[1]

    def fast(self, o, src=False):
        return o[0]

    def general(self, o, src=False):
        return f"torch.sym_max({o[0]}, {o[1]})" if src else torch.sym_max(o[0], o[1])

    def sym_general(self, o, s):
        return s.max(o[0], o[1])


class MinPattern(_IntPattern):
    name = "min"

    def cond(self, o, src=False):
        return o[0], "<=", o[1]

    def fast(self, o, src=False):
        return o[0]

    def general(self, o, src=False):
        return f"torch.sym_min({o[0]}, {o[1]})" if src else torch.sym_min(o[0], o[1])

    def sym_general(self, o, s):
        return s.min(o[0], o[1])


class EqPattern(_IntPattern):
    name = "eq"

    def cond(self, o, src=False):
        return o[0], "==", o[1]

    def fast(self, o, src=False):
        return o[0]

    def general(self, o, src=False):
        return o[1]

    def sym_general(self, o, s):
        return s.sym(o[1])


class FloorDivPattern(_IntPattern):
    name = "floordiv_small"

    def cond(self, o, src=False):
        return o[0], "<", o[1]

    def fast(self, o, src=False):
        return "0" if src else 0

    def general(self, o, src=False):
        return f"{o[0]} // {o[1]}" if src else o[0] // o[1]

    def sym_general(self, o, s):
        return s.sym(o[0]) // o[1]


class _TensorDimPattern(Pattern):
    sorts = ("tensor", "dim", "int")

    def result_type(self, types):
        return types[0]

    def _size(self, o, src, size=None):
        if size is not None:
            return size(o[0], o[1])
        return f"{o[0]}.shape[{o[1]}]" if src else o[0].shape[o[1]]

    def cond_refs(self, o, size):
        return self.cond(o, size=size)


class SliceAllPattern(_TensorDimPattern):
    name = "slice_all"

    def cond(self, o, src=False, size=None):
        return o[2], ">=", self._size(o, src, size)

    def fast(self, o, src=False):
        return o[0]

    def general(self, o, src=False):
        x, d, n = o
        if src:
            return f"{x}[{':, ' * int(d)}:{n}]"
        return x[(slice(None),) * d + (slice(None, n),)]

    def sym_general(self, o, s):
        return get_op("slice").symbolic((o[0], o[1], None, o[2]), 1, s)[0]


class NarrowFullPattern(_TensorDimPattern):
    name = "narrow_full"

    def cond(self, o, src=False, size=None):
        return o[2], "==", self._size(o, src, size)

    def fast(self, o, src=False):
        return o[0]

    def general(self, o, src=False):
        x, d, n = o
        return f"{x}.narrow({d}, 0, {n})" if src else x.narrow(d, 0, n)

    def sym_general(self, o, s):
        return get_op("narrow").symbolic((o[0], o[1], 0, o[2]), 1, s)[0]


class CatEmptyPattern(Pattern):
    name = "cat_empty"
    sorts = ("tensor", "tensor", "dim")

    def result_type(self, types):
        return types[0]

    def cond(self, o, src=False):
        return (f"{o[1]}.shape[{o[2]}]" if src else o[1].shape[o[2]]), "==", ("0" if src else 0)

    def cond_refs(self, o, size):
        return size(o[1], o[2]), "==", 0

    def fast(self, o, src=False):
        return o[0]

    def general(self, o, src=False):
        x, y, d = o
        return f"torch.cat([{x}, {y}], {d})" if src else torch.cat([x, y], d)

    def sym_general(self, o, s):
        return get_op("cat").symbolic(((o[0], o[1]), o[2]), 1, s)[0]


PATTERNS = {p.name: p for p in (MaxPattern(), MinPattern(), EqPattern(), FloorDivPattern(),
                                SliceAllPattern(), NarrowFullPattern(), CatEmptyPattern())}


@register
class Branch(Op):
    name, family = "branch", "branch"
    weight = 8

    def out_types(self, args, n_out):
        if len(args) < 2:
            raise ProgramError("branch needs a mode, a pattern and operands")
        mode, pat, *ops = args
        expect_choice(mode, MODES, "branch mode")
        expect_choice(pat, PATTERNS, "branch pattern")
        p = PATTERNS[pat]
        if len(ops) != len(p.sorts):
            raise ProgramError(f"pattern {pat} takes {len(p.sorts)} operands, got {len(ops)}")
        for k, (sort, o) in enumerate(zip(p.sorts, ops)):
            if sort == "int":
                expect_int(o, f"operand {k}")
            elif sort == "tensor":
                expect_tensor(o, f"operand {k}", min_rank=1)
        if "dim" in p.sorts:
            rank = min(o.rank for sort, o in zip(p.sorts, ops) if sort == "tensor")
            expect_dim(ops[p.sorts.index("dim")], rank)
        return (p.result_type(ops),)

    # -- eager: the interpreter asks decide(), then arm() (see interp.run) -------------------
    def decide(self, args) -> bool:
        mode, pat, *ops = args
        lhs, cmp, rhs = PATTERNS[pat].cond(ops)
        if mode == "guard_or_true":
            return not guard_or_true(COMPARE[NEGATE[cmp]](lhs, rhs))
        if mode == "statically_known_false":
            return statically_known_false(COMPARE[NEGATE[cmp]](lhs, rhs))
        c = COMPARE[cmp](lhs, rhs)
        if mode == "if":
            return bool(c)
        if mode == "guard_or_false":
            return guard_or_false(c)
        if mode == "guard_size_oblivious":
            return _size_oblivious(c)
        return statically_known_true(c)

    def arm(self, args, fast: bool):
        _mode, pat, *ops = args
        p = PATTERNS[pat]
        return (p.fast(ops) if fast else p.general(ops),)

    def eager(self, args, n_out):
        return self.arm(args, self.decide(args))

    # -- symbolic (Note [symbolic shape rules]): the reference decides, then runs the arm --------
    def symbolic_decide(self, args, s) -> tuple[bool, bool]:
        """(fast, fell_back): which arm, and whether that was the mode's fallback."""
        mode, pat, *ops = args
        lhs, cmp, rhs = PATTERNS[pat].cond(ops)
        if mode == "if":
            return s.expect(sym_compare(s, cmp, lhs, rhs)), False
        if mode == "guard_or_true":
            fast = not s.guard_or_true(sym_compare(s, NEGATE[cmp], lhs, rhs))
        elif mode == "statically_known_false":  # s answers the value of not-C it acts on
            fast = not s.not_known_false(sym_compare(s, NEGATE[cmp], lhs, rhs))
        elif mode == "guard_or_false":
            fast = s.guard_or_false(sym_compare(s, cmp, lhs, rhs))
        elif mode == "guard_size_oblivious":  # a False is the general arm, as traced systems force
            fast = s.size_oblivious(sym_compare(s, cmp, lhs, rhs))
            return fast, not fast
        else:
            fast = s.statically_known_true(sym_compare(s, cmp, lhs, rhs))
        return fast, s.last_how == "fallback"

    def symbolic_arm(self, args, fast: bool, s) -> tuple:
        _, pat, *ops = args
        p = PATTERNS[pat]
        out = p.fast(ops) if fast else p.sym_general(ops, s)
        return (out if hasattr(out, "shape") else s.sym(out),)

    def statement(self, lhs: str, args) -> str:
        mode, pat, *ops = args
        p = PATTERNS[pat]
        a, cmp, b = p.cond(ops, True)
        fast, general = p.fast(ops, True), p.general(ops, True)
        if mode == "guard_or_true":
            cond, first, second = f"guard_or_true({a} {NEGATE[cmp]} {b})", general, fast
        elif mode == "statically_known_false":
            cond, first, second = f"statically_known_false({a} {NEGATE[cmp]} {b})", fast, general
        else:
            wrap = _WRAP.get(mode, mode + "({})")
            cond, first, second = wrap.format(f"{a} {cmp} {b}"), fast, general
        return f"if {cond}:\n    {lhs} = {first}\nelse:\n    {lhs} = {second}"

    def source(self, args):
        raise TypeError("branch is a statement; use statement()")

    def generate(self, ctx, draw):
        if ctx.asked and not draw(st.integers(0, 3)):
            return self._reask(ctx, draw)
        mode = draw(sampled_from(MODES))
        names = OBLIVIOUS_PATTERNS if mode == "guard_size_oblivious" else sorted(PATTERNS)
        p = PATTERNS[draw(sampled_from(names))]
        if p.sorts == ("int", "int"):
            a = ctx.pick_sym(draw)
            if a is None:
                return
            lo = 1 if isinstance(p, FloorDivPattern) else None
            ops = (a, ctx.pick_int(draw, lo, None))
        elif p.sorts == ("tensor", "dim", "int"):
            x = ctx.pick_tensor(draw, min_rank=1)
            if x is None:
                return
            d = draw(st.integers(0, ctx.type(x).rank - 1))
            n = ctx.val(x).shape[d]
            if mode == "guard_size_oblivious":
                ops = (x, d, draw(st.integers(0, 1)))
            else:
                ops = (x, d, ctx.pick_int(draw, 0, n + 1) if p.name == "slice_all" else ctx.pick_int(draw, 0, n))
        else:
            x = ctx.pick_tensor(draw, min_rank=1)
            if x is None:
                return
            d = draw(st.integers(0, ctx.type(x).rank - 1))
            shape = ctx.val(x).shape
            ys = ctx.refs_of(dtype=ctx.type(x).dtype, pred=lambda t: t.dim() == len(shape) and all(
                a == b for k, (a, b) in enumerate(zip(t.shape, shape)) if k != d))
            ops = (x, draw(sampled_from(ys)), d)
        ctx.emit(self.name, (mode, p.name) + ops)
        ctx.asked.append((mode, p.name) + ops)
        if not draw(st.integers(0, 3)):
            self._reask(ctx, draw)

    def _reask(self, ctx, draw) -> None:
        """Note [re-asked branches]: check an earlier branch's condition, then ask it again."""
        mode, pat, *ops = ctx.asked[draw(st.integers(0, len(ctx.asked) - 1))]
        # in the same mode, or another: each mode reads other caches (statically_known_true
        # only _maybe_evaluate_static, the guards _inner_evaluate_expr too); never into
        # guard_size_oblivious, whose operands are restricted (Note [size-oblivious branches])
        again = draw(sampled_from((mode,) + tuple(m for m in MODES if m not in (mode, "guard_size_oblivious"))))

        def size(x, d):
            return ctx.emit("size", (x, d))[0]

        a, cmp, b = PATTERNS[pat].cond_refs(ops, size)
        if not COMPARE[cmp](ctx.val(a), ctx.val(b)):
            cmp = NEGATE[cmp]
        if not (isinstance(a, int) and isinstance(b, int)):
            ctx.emit("check", (cmp, a, b), n_out=0)
        ctx.emit(self.name, (again, pat, *ops))
