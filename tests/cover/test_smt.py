"""The sympy -> z3 translation (shapefuzz.systems.prover.smt) against Python: random expressions over
every function of torch/utils/_sympy/functions.py, random integer assignments (negatives and zero
included), z3's value of the translated term == sympy's evaluation of the term on numbers
(Note [exact semantics])."""

from __future__ import annotations

import math
import operator
import random
from collections import Counter
from fractions import Fraction

import pytest
import sympy
import z3
from hypothesis import given
from hypothesis import strategies as st
from torch.utils._sympy import functions as F

from shapefuzz.systems.prover.smt import SmtSettings, Translator, Unsupported, prove

X, Y, Z = sympy.symbols("x y z", integer=True)
SYMS = (X, Y, Z)

#: every function the issue lists, by class name; CeilDiv, LShift and RShift rewrite themselves
#: at construction (to FloorDiv / PowByNatural), so they are built unevaluated to reach the
#: translator at all
LISTED = {"FloorDiv", "CleanDiv", "CeilDiv", "Mod", "PythonMod", "ModularIndexing", "Where", "Max",
          "Min", "PowByNatural", "IntTrueDiv", "FloatTrueDiv", "FloorToInt", "CeilToInt",
          "TruncToInt", "RoundToInt", "ToFloat", "TruncToFloat", "Identity", "LShift", "RShift",
          "BitwiseFn_bitwise_and", "BitwiseFn_bitwise_or", "BitwiseFn_bitwise_xor",
          "IsNonOverlappingAndDenseIndicator", "Add", "Mul", "Pow", "Equality", "Unequality",
          "StrictLessThan", "LessThan", "StrictGreaterThan", "GreaterThan", "And", "Or", "Not"}
#: documented `unknown`: no exact counterpart (transcendental, or decimal rounding of binary floats)
UNKNOWN = {"FloatPow", "RoundDecimal", "OpaqueUnaryFn_sqrt", "OpaqueUnaryFn_log2", "OpaqueUnaryFn_exp"}


class Gen:
    """Random well-typed terms. int(): integer-valued, real(): float-valued, boolean()."""

    def __init__(self, rng: random.Random):
        self.r = rng

    def leaf(self):
        return self.r.choice(SYMS) if self.r.random() < 0.6 else sympy.Integer(self.r.randint(-4, 4))

    def int(self, d: int):
        if d <= 0 or self.r.random() < 0.2:
            return self.leaf()
        try:
            return self._int(d)
        except (ZeroDivisionError, AssertionError, ValueError, TypeError, RecursionError):
            return self.leaf()  # e.g. FloorDiv(x, 0) or Mod(-4, 2) refuse to be built

    def _int(self, d: int):
        a = lambda: self.int(d - 1)
        k = self.r.randrange(24)
        if k == 0:
            return a() + a()
        if k == 1:
            return a() * a()
        if k == 2:
            return a() ** self.r.randint(0, 3)
        if k == 3:
            return F.FloorDiv(a(), a())
        if k == 4:
            return F.CleanDiv(a(), a())
        if k == 5:
            return F.CeilDiv(a(), a())
        if k == 6:
            return F.Mod(a(), a())
        if k == 7:
            return F.PythonMod(a(), a())
        if k == 8:
            return F.ModularIndexing(a(), a(), a())
        if k == 9:
            return F.Where(self.boolean(d - 1), a(), a())
        if k == 10:
            return F.Max(a(), a())
        if k == 11:
            return F.Min(a(), a(), a())
        if k == 12:
            return F.PowByNatural(a(), self.r.choice([sympy.Integer(self.r.randint(0, 3)), Z]))
        if k == 13:
            return F.FloorToInt(self.real(d - 1))
        if k == 14:
            return F.CeilToInt(self.real(d - 1))
        if k == 15:
            return F.TruncToInt(self.real(d - 1))
        if k == 16:
            return F.RoundToInt(self.real(d - 1))
        if k == 17:
            return F.LShift(a(), self.r.choice([sympy.Integer(2), Z]), evaluate=False)
        if k == 18:
            return F.RShift(a(), self.r.choice([sympy.Integer(1), Z]), evaluate=False)
        if k == 19:
            fn = self.r.choice([F.BitwiseFn_bitwise_and, F.BitwiseFn_bitwise_or, F.BitwiseFn_bitwise_xor])
            return fn(a(), a())
        if k == 20:
            return F.Identity(a())
        if k == 21:
            return F.IsNonOverlappingAndDenseIndicator(a(), a())
        if k == 22:
            return sympy.Basic.__new__(F.CeilDiv, a(), a())  # its __new__ always rewrites it
        return a() - a()

    def real(self, d: int):
        try:
            return self._real(d)
        except (ZeroDivisionError, AssertionError, ValueError, TypeError, RecursionError):
            return F.ToFloat(self.leaf())

    def _real(self, d: int):
        k = self.r.randrange(5)
        a = lambda: self.int(d - 1)
        if k == 0:
            return F.ToFloat(a())
        if k == 1:
            return F.IntTrueDiv(a(), a())
        if k == 2:
            return F.FloatTrueDiv(F.ToFloat(a()), F.ToFloat(a()))
        if k == 3:
            return F.TruncToFloat(F.IntTrueDiv(a(), a()))
        return F.ToFloat(a()) + sympy.Rational(1, 2)

    def boolean(self, d: int):
        a = lambda: self.int(d)
        k = self.r.randrange(9)
        rel = [sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge]
        if k < 6:
            return rel[k](a(), a(), evaluate=False)
        if k == 6:
            return sympy.And(self.boolean(d - 1), self.boolean(d - 1), evaluate=False)
        if k == 7:
            return sympy.Or(self.boolean(d - 1), self.boolean(d - 1), evaluate=False)
        return sympy.Not(self.boolean(d - 1), evaluate=False)


def _mod(a, b):
    if a < 0 or b < 1:  # torch's Mod is only defined (and only built) on non-negative operands
        raise AssertionError("Mod precondition")
    return a % b


def _pow_nat(a, b):
    if b < 0:
        raise ValueError("negative exponent")
    return a**b


def _pow(a, b):
    """Exact: x/y is sympy's x * y**-1, and 49 * (1 / 49) is 0.999... in floats (floor 0)."""
    if isinstance(a, int) and isinstance(b, int) and b < 0:
        return Fraction(a) ** b
    return a**b


def _shift(op):
    def f(a, b):
        if b < 0:
            raise ValueError("negative shift count")
        return op(a, b)

    return f


_PY = {
    "Add": lambda *a: sum(a), "Mul": lambda *a: math.prod(a), "Pow": _pow,
    "FloorDiv": operator.floordiv, "CleanDiv": operator.floordiv, "CeilDiv": lambda a, b: -(-a // b),
    "Mod": _mod, "PythonMod": operator.mod, "ModularIndexing": lambda a, b, c: (a // b) % c,
    "Where": lambda c, p, q: p if c else q, "Max": max, "Min": min, "PowByNatural": _pow_nat,
    "IntTrueDiv": operator.truediv, "FloatTrueDiv": operator.truediv, "FloorToInt": math.floor,
    "CeilToInt": math.ceil, "TruncToInt": math.trunc, "RoundToInt": round, "ToFloat": float,
    "TruncToFloat": lambda x: float(math.trunc(x)), "Identity": lambda x: x,
    "LShift": _shift(operator.lshift), "RShift": _shift(operator.rshift),
    "BitwiseFn_bitwise_and": operator.and_, "BitwiseFn_bitwise_or": operator.or_,
    "BitwiseFn_bitwise_xor": operator.xor,
    "IsNonOverlappingAndDenseIndicator": lambda *a: int(F.IsNonOverlappingAndDenseIndicator(*a)),
    "Equality": operator.eq, "Unequality": operator.ne, "StrictLessThan": operator.lt,
    "LessThan": operator.le, "StrictGreaterThan": operator.gt, "GreaterThan": operator.ge,
    "And": lambda *a: all(a), "Or": lambda *a: any(a), "Not": operator.not_,
    "floor": math.floor, "ceiling": math.ceil, "Abs": abs,
}


def python_value(e, env):
    """Python's evaluation of the sympy term: each function as Python computes it."""
    if isinstance(e, sympy.logic.boolalg.BooleanAtom):
        return bool(e)
    if e.is_Symbol:
        return env[e]
    if e.is_Integer:
        return int(e)
    if e.is_Rational:
        return Fraction(int(e.p), int(e.q))
    if e.is_Float:
        return float(e)
    args = [python_value(a, env) for a in e.args]
    return _PY[type(e).__name__](*args)


def z3_value(e, env, tr=None):
    """(value, side conditions hold) of the translation under env."""
    t, z = tr if tr is not None else _translate(e)
    subs = [(v, z3.IntVal(env[sympy.Symbol(n, integer=True)])) for n, v in t.symbols.items()]
    side = z3.simplify(z3.substitute(z3.And(*t.side) if t.side else z3.BoolVal(True), *subs))
    return z3.simplify(z3.substitute(z, *subs)), z3.is_true(side)


def _translate(e):
    t = Translator()
    return t, t(e)


def _names(e) -> set[str]:
    out = set()
    for node in sympy.preorder_traversal(e):
        out.add(type(node).__name__)
    return out


def same(py, zv) -> bool:
    if isinstance(py, bool):
        return (z3.is_true(zv) or z3.is_false(zv)) and z3.is_true(zv) == py
    if isinstance(py, int):
        return z3.is_int_value(zv) and zv.as_long() == py
    if isinstance(py, Fraction) and z3.is_rational_value(zv):
        return zv.as_fraction() == py
    if not z3.is_rational_value(zv):  # a float: compare with z3's exact rational
        return False
    q = zv.as_fraction()
    return math.isclose(py, q.numerator / q.denominator, rel_tol=1e-9, abs_tol=1e-9)


def _check_one(e, env, covered: Counter, tr=None) -> str:
    try:
        py = python_value(e, env)
    except ZeroDivisionError:
        py = "div0"
    except (AssertionError, ValueError):
        return "precondition"  # torch's Mod asserts non-negative operands; negative shifts
    try:
        zv, side_ok = z3_value(e, env, tr or _translate(e))
    except Unsupported as u:
        raise AssertionError(f"{e} is unsupported: {u}") from None
    if py == "div0":
        assert not side_ok, f"{e} at {env}: Python divides by zero, z3 side conditions hold"
        return "div0"
    if not side_ok:  # e.g. Python short-circuits Where/Max around a zero divisor
        return "side"
    assert same(py, zv), f"{e} at {env}: Python {py}, z3 {zv}"
    covered.update(_names(e))
    return "ok"


def test_translation_matches_python_on_random_terms():
    rng = random.Random(20261129)
    g = Gen(rng)
    covered: Counter = Counter()
    results: Counter = Counter()
    envs = [{X: 0, Y: 0, Z: 0}, {X: -3, Y: 2, Z: 1}, {X: 7, Y: -2, Z: 3}, {X: 5, Y: 5, Z: 0}]
    for i in range(600):
        e = g.boolean(3) if i % 3 == 0 else g.int(3)
        if e.is_number or isinstance(e, sympy.logic.boolalg.BooleanAtom):
            continue
        tr = _translate(e)
        for env in envs + [{s: rng.randint(-9, 9) for s in SYMS} for _ in range(3)]:
            results[_check_one(e, env, covered, tr)] += 1
    assert results["ok"] >= 2500, results
    missing = LISTED - set(covered)
    assert not missing, f"functions never checked: {sorted(missing)} ({results})"


@given(st.integers(-50, 50), st.integers(-50, 50))
def test_division_and_rounding_follow_python(a, b):
    env = {X: a, Y: b}
    for e in (F.FloorDiv(X, Y), F.PythonMod(X, Y), F.TruncToInt(F.IntTrueDiv(X, Y)),
              F.RoundToInt(F.IntTrueDiv(X, Y)), F.CeilToInt(F.IntTrueDiv(X, Y)),
              F.ModularIndexing(X, Y, 3), F.BitwiseFn_bitwise_xor(X, Y), sympy.floor(X / Y),
              sympy.ceiling(X / Y), sympy.Abs(X - Y), X**2 - Y**3):
        _check_one(e, env, Counter())


def test_trunc_rounds_toward_zero_and_round_is_half_even():
    assert _check_one(F.TruncToInt(F.IntTrueDiv(X, Y)), {X: -7, Y: 2}, Counter()) == "ok"
    zv, _ = z3_value(F.TruncToInt(F.IntTrueDiv(X, Y)), {X: -7, Y: 2})
    assert zv.as_long() == -3  # z3's ToInt would say -4
    for a, want in ((5, 2), (7, 4), (-5, -2), (-7, -4)):
        zv, _ = z3_value(F.RoundToInt(F.IntTrueDiv(X, 2)), {X: a})
        assert zv.as_long() == want == round(a / 2)


@pytest.mark.parametrize("e", [
    F.FloatPow(F.ToFloat(X), F.ToFloat(Y)),
    F.RoundDecimal(F.ToFloat(X), 2),
    F.OpaqueUnaryFn_sqrt(X),
    F.OpaqueUnaryFn_log2(X),
    F.OpaqueUnaryFn_exp(X),
    sympy.sqrt(X),
    X + sympy.Symbol("zf0", real=True),
])
def test_untranslatable_is_unknown_with_a_reason(e):
    with pytest.raises(Unsupported):
        Translator()(e)
    v = prove([X >= 0], sympy.Ge(e, 0) if not isinstance(e, sympy.logic.boolalg.Boolean) else e)
    assert v.status == "unknown" and v.reason


def test_prove_sat_unsat_and_timeout():
    assert prove([X >= 2], X >= 1).status == "unsat"
    v = prove([X >= 2], X >= 3)
    assert v.status == "sat" and dict(v.model) == {"x": 2}
    # a division's side condition: x // y == x // y + 1 is impossible, with y == 0 excluded
    assert prove([], sympy.Ne(F.FloorDiv(X, Y), F.FloorDiv(X, Y) + 1)).status == "unsat"
    # nonlinear integer equation: the solver gives up or times out, never hangs or passes
    hard = sympy.Ne(X**3 + Y**3, Z**3)
    v = prove([X >= 1, Y >= 1, Z >= 1], hard, SmtSettings(timeout_ms=50))
    assert v.status in ("timeout", "unknown", "unsat") and v.elapsed_ms < 5000
