"""Building the reference's sympy expressions: integer functions with Python semantics, the
binops, relationals, and the printing every observation uses.

Two optimizations of seed 000 live here, each as a pair of small functions so a test can plant a
bug in exactly one path:

- `add_from_args` (optimization 8): a sum of distinct symbols plus another such sum (or a symbol)
  is built by merging the two sorted argument lists and calling `sympy.Add._from_args`, instead
  of `sympy.Add(a, b)`, which re-collects and re-sorts every term. Note [optimized summation].
- `unevaluated_unbacked_relationals` (optimization 5): a single unbacked symbol compared with a
  constant is built with `evaluate=False`: an unbacked symbol has no assumptions besides
  integer=True, so sympy's evaluation can never simplify it and only costs time.
"""

from __future__ import annotations

from functools import lru_cache

import sympy
from sympy.core.basic import _args_sortkey

__all__ = [
    "RELATIONALS",
    "FloorDiv",
    "Max",
    "Min",
    "PythonMod",
    "add_canonical",
    "add_from_args",
    "build_binop",
    "build_relational",
    "expr_str",
    "is_symbol_sum",
    "relational_evaluated",
    "relational_unevaluated",
]


class FloorDiv(sympy.Function):
    """Python's `a // b` on integers (torch calls it FloorDiv too)."""

    is_integer = True
    nargs = 2

    @classmethod
    def eval(cls, a, b):
        if b.is_Integer:
            if b == 0:
                raise ZeroDivisionError(f"FloorDiv({a}, 0): integer division by zero")
            if b == 1:
                return a
            if a.is_Integer:
                return sympy.Integer(int(a) // int(b))
        return None


class PythonMod(sympy.Function):
    """Python's `a % b` (the result has the divisor's sign), as torch's PythonMod. sympy's own Mod
    is avoided because it rewrites its arguments using assumptions we would have to audit."""

    is_integer = True
    nargs = 2

    @classmethod
    def eval(cls, a, b):
        if b.is_Integer:
            if b == 0:
                raise ZeroDivisionError(f"PythonMod({a}, 0): integer modulo by zero")
            if b in (1, -1):
                return sympy.Integer(0)
            if a.is_Integer:
                return sympy.Integer(int(a) % int(b))
        return None


class _MinMax(sympy.Function):
    # sympy.Max/Min compare their arguments through the assumption system, which costs
    # milliseconds per call; the reference leaves ordering questions to its range analysis.
    is_integer = True
    nargs = 2
    _pick = max

    @classmethod
    def eval(cls, a, b):
        if a.is_Integer and b.is_Integer:
            return sympy.Integer(cls._pick(int(a), int(b)))
        if a == b:
            return a
        return None


class Max(_MinMax):
    _pick = max


class Min(_MinMax):
    _pick = min


_BINOPS = {
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "//": FloorDiv,
    "%": PythonMod,
    "max": Max,
    "min": Min,
    "**": lambda a, b: a ** b,  # a literal natural exponent (Note [powers]): sympy's Pow, as torch's
}


def build_binop(op: str, a: sympy.Expr, b: sympy.Expr, a_sum: bool, b_sum: bool,
                from_args: bool) -> tuple[sympy.Expr, bool]:
    """The expression of `a op b`, and whether it is a sum of distinct symbols (for the next +)."""
    if op == "+":
        if from_args:
            fast = add_from_args(a, b, a_sum, b_sum)
            if fast is not None:
                return fast, True
        out = add_canonical(a, b)
        return out, is_symbol_sum(out)
    return _BINOPS[op](a, b), False


# Note [optimized summation]: sums of distinct symbols (u0 + u1 + ... , what cat of unbacked
# chunks produces) are kept with their arguments in sympy's canonical order, so adding one more
# symbol or another such sum is a merge of two sorted lists. The result must be *identical* to
# sympy.Add's (same args, same order): otherwise the toggle would change printed expressions.
def is_symbol_sum(e: sympy.Basic) -> bool:
    return e.is_Add and all(a.is_Symbol for a in e.args)


def _terms(e: sympy.Basic, is_sum: bool) -> tuple | None:
    if is_sum:
        return e.args
    if e.is_Symbol:
        return (e,)
    return None


def add_from_args(a: sympy.Expr, b: sympy.Expr, a_sum: bool, b_sum: bool) -> sympy.Expr | None:
    """Optimization 8's fast path (torch's _optimized_add); None when it does not apply (a
    repeated symbol needs 2*x, interleaved long sums need a real sort)."""
    ta, tb = _terms(a, a_sum), _terms(b, b_sum)
    if ta is None or tb is None:
        return None
    if len(tb) == 1:
        merged = _insert(ta, tb[0])
    elif len(ta) == 1:
        merged = _insert(tb, ta[0])
    elif _args_sortkey(ta[-1]) < _args_sortkey(tb[0]):  # (a0 + a1) + (a2 + a3)
        merged = list(ta + tb)
    elif _args_sortkey(tb[-1]) < _args_sortkey(ta[0]):  # (a2 + a3) + (a0 + a1)
        merged = list(tb + ta)
    else:
        return None
    if merged is None:
        return None
    return sympy.Add._from_args(merged, is_commutative=True)


def _insert(ordered: tuple, new: sympy.Basic) -> list | None:
    """`ordered` with `new` inserted in sorted position (a binary search: log n comparisons, the
    expensive part), or None if it is already there."""
    key = _args_sortkey(new)
    lo, hi = 0, len(ordered)
    while lo < hi:
        mid = (lo + hi) // 2
        k = _args_sortkey(ordered[mid])
        if k == key:
            return None
        if k < key:
            lo = mid + 1
        else:
            hi = mid
    return [*ordered[:lo], new, *ordered[lo:]]


def add_canonical(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """Optimization 8 switched off: sympy collects like terms and sorts every argument."""
    return sympy.Add(a, b)


# ---- relationals -------------------------------------------------------------------------------
RELATIONALS = {"<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt, ">=": sympy.Ge, "==": sympy.Eq,
               "!=": sympy.Ne}


def build_relational(cmp: str, a: sympy.Expr, b: sympy.Expr, is_unbacked, unevaluated: bool):
    """`a cmp b`. `is_unbacked(symbol)` says whether a symbol is unbacked (optimization 5)."""
    single = (a.is_Symbol and b.is_Integer and is_unbacked(a)) or (
        b.is_Symbol and a.is_Integer and is_unbacked(b))
    if single and unevaluated:
        return relational_unevaluated(cmp, a, b)
    return relational_evaluated(cmp, a, b)


def relational_unevaluated(cmp: str, a: sympy.Expr, b: sympy.Expr) -> sympy.Basic:
    return RELATIONALS[cmp](a, b, evaluate=False)


def relational_evaluated(cmp: str, a: sympy.Expr, b: sympy.Expr) -> sympy.Basic:
    return RELATIONALS[cmp](a, b)


@lru_cache(maxsize=50_000)  # a bound on memory over a long campaign
def expr_str(e: sympy.Basic) -> str:
    """How every expression is printed in observations. order="none" prints arguments in sympy's
    internal canonical order (deterministic); the default printer re-sorts every sum for display,
    which costs milliseconds on the long sums unbacked-heavy programs build. Remembered: questions
    and values repeat expressions within a trace and across the configs of one program, and
    printing is the costliest part of an observation."""
    return sympy.sstr(e, order="none")


@lru_cache(maxsize=50_000)
def text(e: sympy.Basic) -> str:
    """str(e), remembered as expr_str is (axioms are kept as sympy's own text: z3 and the
    other systems' axioms parse it back)."""
    return str(e)
