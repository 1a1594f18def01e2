"""Value-range analysis: sound integer intervals for + - * // % max min and comparisons.

Note [sound ranges]: every function here over-approximates. If x lies in X and y in Y, then
op(x, y) lies in op(X, Y), and `compare` answers True/False only when *every* pair of values in
the two intervals gives that answer. The reference's static proofs (and so its claims) rest on
this, and the cover tests check it by brute force. Division by zero is not a value: the divisor
0 is left out of a divisor interval, because a program that divides by 0 fails, it does not
produce a value to bound.

Bounds are Python ints or +-math.inf (ints stay exact however large they get).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import sympy

from shapefuzz.systems.ref.exprs import FloorDiv, Max, Min, PythonMod

__all__ = ["UNKNOWN", "Interval", "bound", "compare", "decide", "interval_op"]

INF = math.inf


@dataclass(frozen=True, slots=True)
class Interval:
    lo: int | float
    hi: int | float

    def __str__(self) -> str:
        return f"[{_show(self.lo)}, {_show(self.hi)}]"

    def is_singleton(self) -> bool:
        return self.lo == self.hi and not math.isinf(self.lo)

    def is_unbounded(self) -> bool:
        return self.lo == -INF and self.hi == INF

    def intersect(self, other: Interval) -> Interval | None:
        """None when empty: the facts contradict each other (an invalid program)."""
        lo, hi = max(self.lo, other.lo), min(self.hi, other.hi)
        return Interval(lo, hi) if lo <= hi else None

    def hull(self, other: Interval) -> Interval:
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))


UNKNOWN = Interval(-INF, INF)


def _show(b) -> str:
    return "-oo" if b == -INF else "oo" if b == INF else str(b)


def point(v: int) -> Interval:
    return Interval(v, v)


# ---- arithmetic --------------------------------------------------------------------------------
def add(a: Interval, b: Interval) -> Interval:
    return Interval(a.lo + b.lo, a.hi + b.hi)


def neg(a: Interval) -> Interval:
    return Interval(-a.hi, -a.lo)


def _mul_bound(x, y):
    # A bound of 0 times an infinite bound is 0: x = 0 exactly, so x * y = 0 for every finite y.
    return 0 if x == 0 or y == 0 else x * y


def mul(a: Interval, b: Interval) -> Interval:
    c = [_mul_bound(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    return Interval(min(c), max(c))


def power(a: Interval, n: int) -> Interval:
    if n == 0:
        return point(1)
    c = [x ** n if not math.isinf(x) else (x if n % 2 else INF) for x in (a.lo, a.hi)]
    lo, hi = min(c), max(c)
    if n % 2 == 0 and a.lo <= 0 <= a.hi:
        lo = 0  # an even power has its minimum at 0, inside the interval
    return Interval(lo, hi)


def _divisor_parts(b: Interval) -> list[Interval]:
    """The divisor interval without 0, as a positive and/or a negative part."""
    parts = []
    if b.hi >= 1:
        parts.append(Interval(max(b.lo, 1), b.hi))
    if b.lo <= -1:
        parts.append(Interval(b.lo, min(b.hi, -1)))
    return parts


def _fdiv_bound(x, y):
    """floor(x / y) for a bound x and a positive bound y (a limit when one is infinite)."""
    if math.isinf(y):
        # x / y tends to 0 from above (x >= 0) or below (x < 0). With x infinite too, the corner
        # lies between the interval's other corners (which reach the extremes): any value works.
        return 0 if x >= 0 else -1
    if math.isinf(x):
        return x
    return x // y


def floordiv(a: Interval, b: Interval) -> Interval:
    out = None
    for part in _divisor_parts(b):
        if part.lo < 0:  # a // b == (-a) // (-b): reduce a negative divisor to a positive one
            part, num = neg(part), neg(a)
        else:
            num = a
        # floor(x / y) is monotone in x, and in y for a fixed sign of x: the extremes are corners.
        c = [_fdiv_bound(x, y) for x in (num.lo, num.hi) for y in (part.lo, part.hi)]
        r = Interval(min(c), max(c))
        out = r if out is None else out.hull(r)
    return out if out is not None else UNKNOWN  # divisor always 0: the program fails


def mod(a: Interval, b: Interval) -> Interval:
    """Python's a % b: the sign of the divisor, |a % b| < |b|."""
    out = None
    for part in _divisor_parts(b):
        if part.lo >= 1:
            if a.lo >= 0 and a.hi < part.lo:
                r = a  # 0 <= a < b: a % b == a
            elif a.lo >= 0:
                r = Interval(0, min(a.hi, part.hi - 1))
            else:
                r = Interval(0, part.hi - 1)
        else:
            r = Interval(part.lo + 1, 0)
        out = r if out is None else out.hull(r)
    return out if out is not None else UNKNOWN


def maximum(a: Interval, b: Interval) -> Interval:
    return Interval(max(a.lo, b.lo), max(a.hi, b.hi))


def minimum(a: Interval, b: Interval) -> Interval:
    return Interval(min(a.lo, b.lo), min(a.hi, b.hi))


#: binop name (questions.BINOPS) -> interval function; used by tests to check soundness
interval_op: dict[str, Callable[[Interval, Interval], Interval]] = {
    "+": add, "-": lambda a, b: add(a, neg(b)), "*": mul, "//": floordiv, "%": mod,
    "max": maximum, "min": minimum,
    "**": lambda a, b: power(a, int(b.lo)) if b.lo == b.hi else UNKNOWN,  # Note [powers]: b a literal
}


# ---- bounding sympy expressions ----------------------------------------------------------------
def bound(expr: sympy.Basic, lookup: Callable[[sympy.Symbol], Interval]) -> Interval:
    """An interval holding every value `expr` can take when each symbol s lies in lookup(s)."""
    if expr.is_Integer:
        return point(int(expr))
    if expr.is_Symbol:
        return lookup(expr)
    args = expr.args
    if expr.is_Add:
        out = bound(args[0], lookup)
        for x in args[1:]:
            out = add(out, bound(x, lookup))
        return out
    if expr.is_Mul:
        out = bound(args[0], lookup)
        for x in args[1:]:
            out = mul(out, bound(x, lookup))
        return out
    if expr.is_Pow and args[1].is_Integer and args[1] >= 0:
        return power(bound(args[0], lookup), int(args[1]))
    fn = _FUNCTIONS.get(type(expr))
    if fn is None:
        return UNKNOWN  # anything we do not model may take any value
    return fn(bound(args[0], lookup), bound(args[1], lookup))


_FUNCTIONS = {FloorDiv: floordiv, PythonMod: mod, Max: maximum, Min: minimum}

_COMPARE = {
    # op: (True when, False when) over intervals a (left) and b (right)
    "<": (lambda a, b: a.hi < b.lo, lambda a, b: a.lo >= b.hi),
    "<=": (lambda a, b: a.hi <= b.lo, lambda a, b: a.lo > b.hi),
    ">": (lambda a, b: a.lo > b.hi, lambda a, b: a.hi <= b.lo),
    ">=": (lambda a, b: a.lo >= b.hi, lambda a, b: a.hi < b.lo),
    "==": (lambda a, b: a.is_singleton() and a == b, lambda a, b: a.hi < b.lo or b.hi < a.lo),
    "!=": (lambda a, b: a.hi < b.lo or b.hi < a.lo, lambda a, b: a.is_singleton() and a == b),
}


def compare(op: str, a: Interval, b: Interval) -> bool | None:
    """`x op y` for every x in a and y in b: True, False, or None (it depends)."""
    when_true, when_false = _COMPARE[op]
    if when_true(a, b):
        return True
    if when_false(a, b):
        return False
    return None


_REL_OP = {sympy.Lt: "<", sympy.Le: "<=", sympy.Gt: ">", sympy.Ge: ">=", sympy.Eq: "==",
           sympy.Ne: "!="}


def rel_op(rel: sympy.Basic) -> str | None:
    return _REL_OP.get(type(rel))


def decide(rel: sympy.Basic, lookup: Callable[[sympy.Symbol], Interval]) -> bool | None:
    """A relational's truth by range analysis alone: bound both sides, then their difference
    (the difference sees cancellations such as (u + 1) - u that the sides alone do not)."""
    op = rel_op(rel)
    if op is None:
        return None
    lhs, rhs = rel.args
    r = compare(op, bound(lhs, lookup), bound(rhs, lookup))
    if r is None:
        r = compare(op, bound(lhs - rhs, lookup), point(0))
    return r
