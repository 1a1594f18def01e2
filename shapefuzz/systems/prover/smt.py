"""Exact translation of torch's sympy shape expressions to z3, and one query: do the facts imply
a claim?

Note [exact semantics]: every function means what Python (and sympy's own evaluation of the
torch function on numbers) means by it, on z3 Ints with integer div/mod and a plain Solver (a
nonlinear-real logic took 50 s where this takes 1 ms, docs/explanation/torch-internals.md):
- FloorDiv / CleanDiv / ModularIndexing use floor division, Mod / PythonMod take the sign of the
  divisor (z3's div/mod are Euclidean, so negative divisors are rewritten);
- TruncToInt rounds toward zero (not z3's ToInt, which floors), RoundToInt rounds half to even;
- a division or modulo adds the side condition "divisor != 0": a model that divides by zero is
  no concrete input (the program would raise), so it may not refute a claim;
- the bitwise functions go through 64-bit two's complement, with the side condition that the
  operands fit (shape values always do).
Anything else (sqrt, log, FloatPow, RoundDecimal's decimal rounding of binary floats, oo, a
non-integer symbol) raises Unsupported: the query's verdict is `unknown` with that reason,
never a silent pass.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import sympy
import z3

__all__ = [
    "VERDICTS",
    "Compiled",
    "SmtSettings",
    "Translator",
    "Unsupported",
    "Verdict",
    "parse",
    "prove",
    "to_z3",
]

#: unsat: the facts imply the claim; sat: a model refutes it; unknown: not expressible or z3
#: gave up; timeout: the per-query budget ran out
VERDICTS = ("unsat", "sat", "unknown", "timeout")
_BITS = 64


@dataclass(frozen=True, slots=True)
class SmtSettings:
    timeout_ms: int = 2000  # per query; a timeout is a verdict, never a hang


#: the default per-query budget (a settings value: callers pass their own SmtSettings)
DEFAULT_SETTINGS = SmtSettings()


@dataclass(frozen=True, slots=True)
class Verdict:
    status: str  # one of VERDICTS
    reason: str = ""  # why unknown / timeout
    model: tuple[tuple[str, int], ...] = ()  # sat: a value for every symbol of the query
    elapsed_ms: float = 0.0

    @property
    def proved(self) -> bool:
        return self.status == "unsat"


class Unsupported(Exception):
    """The expression uses something with no exact z3 counterpart; the message says what."""


def _fname(e: sympy.Basic) -> str:
    return type(e).__name__


class Translator:
    """sympy -> z3 for one query. Symbols become z3 Ints of the same name; `side` collects the
    side conditions (non-zero divisors, 64-bit operands) every model must also satisfy."""

    def __init__(self) -> None:
        self.side: list[z3.BoolRef] = []
        self.symbols: dict[str, z3.ArithRef] = {}
        self._memo: dict[sympy.Basic, z3.ExprRef] = {}

    def __call__(self, e: sympy.Basic) -> z3.ExprRef:
        r = self._memo.get(e)
        if r is None:
            r = self._memo[e] = self._tr(e)
        return r

    # ---- dispatch ----------------------------------------------------------------------------
    def _tr(self, e):
        if isinstance(e, bool) or e is sympy.true or e is sympy.false:
            return z3.BoolVal(bool(e))
        if isinstance(e, int):
            return z3.IntVal(e)
        if e.is_Integer:
            return z3.IntVal(int(e))
        if e.is_Rational:
            return z3.RealVal(f"{e.p}/{e.q}")
        if e.is_Float:
            r = sympy.Rational(float(e))  # the float's exact binary value
            return z3.RealVal(f"{r.p}/{r.q}")
        if e.is_Symbol:
            return self._symbol(e)
        name = _fname(e)
        fn = _HANDLERS.get(name)
        if fn is None:
            if name.startswith("BitwiseFn_"):
                return self._bitwise(name[len("BitwiseFn_bitwise_"):], e)
            raise Unsupported(f"{name} has no exact z3 translation (in {e})")
        return fn(self, e, [self(a) for a in e.args] if name not in _LAZY else e.args)

    def _symbol(self, s: sympy.Symbol):
        if s.is_integer is False or (s.is_integer is None and not _int_named(s)):
            raise Unsupported(f"symbol {s} is not known to be an integer")
        v = self.symbols.get(s.name)
        if v is None:
            v = self.symbols[s.name] = z3.Int(s.name)
        return v

    # ---- integer division, Python style ------------------------------------------------------
    def floordiv(self, a, b):
        a, b = _int(a, "FloorDiv"), _int(b, "FloorDiv")
        self.side.append(b != 0)
        if _is_pos_const(b):
            return a / b
        return z3.If(b > 0, a / b, (-a) / (-b))

    def pymod(self, a, b):
        a, b = _int(a, "Mod"), _int(b, "Mod")
        self.side.append(b != 0)
        if _is_pos_const(b):
            return a % b
        return a - b * z3.If(b > 0, a / b, (-a) / (-b))

    def _bitwise(self, op: str, e):
        a, b = (_int(self(x), "bitwise") for x in e.args)
        lo, hi = -(2 ** (_BITS - 1)), 2 ** (_BITS - 1)
        self.side += [a >= lo, a < hi, b >= lo, b < hi]
        ba, bb = z3.Int2BV(a, _BITS), z3.Int2BV(b, _BITS)
        r = {"and": ba & bb, "or": ba | bb, "xor": ba ^ bb}.get(op)
        if r is None:
            raise Unsupported(f"bitwise function {op!r}")
        u = z3.BV2Int(r)
        return z3.If(z3.Extract(_BITS - 1, _BITS - 1, r) == 1, u - 2**_BITS, u)


def _int_named(s: sympy.Symbol) -> bool:
    # torch's shape symbols (s0, u3, ...) are integer by construction even when built plainly
    return s.name[:1] in ("s", "u", "q", "c", "v", "x", "y", "z") and not s.name.startswith("zf")


def _is_pos_const(b) -> bool:
    return z3.is_int_value(b) and b.as_long() > 0


def _int(x, where: str):
    if z3.is_int(x):
        return x
    if z3.is_bool(x):
        return z3.If(x, z3.IntVal(1), z3.IntVal(0))
    raise Unsupported(f"{where} of a non-integer operand {x}")


def _real(x):
    if z3.is_bool(x):
        x = z3.If(x, z3.IntVal(1), z3.IntVal(0))
    return z3.ToReal(x) if z3.is_int(x) else x


def _arith(args):
    """Operands of + and *: all Int, or all Real if any is Real."""
    if any(z3.is_real(a) for a in args):
        return [_real(a) for a in args]
    return [_int(a, "arithmetic") for a in args]


def _add(t, e, args):
    args = _arith(args)
    return z3.Sum(args) if len(args) > 1 else args[0]


def _mul(t, e, args):
    args = _arith(args)
    r = args[0]
    for a in args[1:]:
        r = r * a
    return r


def _power(t, base, n: int):
    if n == 0:
        return z3.IntVal(1) if z3.is_int(base) else z3.RealVal(1)
    r = base
    for _ in range(n - 1):
        r = r * base
    return r


def _pow(t, e, args):
    b, x = e.args
    if x.is_Integer and 0 <= int(x) <= 64:
        return _power(t, t(b), int(x))
    if x.is_Integer and -64 <= int(x) < 0:
        base = _real(t(b))
        t.side.append(base != 0)
        return 1 / _power(t, base, -int(x))
    raise Unsupported(f"Pow with exponent {x} (only integer exponents are exact)")


def _pow_by_natural(t, e, args):
    b, x = e.args
    if x.is_Integer and 0 <= int(x) <= 64:
        return _power(t, _int(t(b), "PowByNatural"), int(x))
    base, ex = _int(t(b), "PowByNatural"), _int(t(x), "PowByNatural")
    t.side.append(ex >= 0)
    return base ** ex  # z3's nonlinear integer power: may make the query `unknown`


def _minmax(pick):
    def tr(t, e, args):
        args = _arith(list(args))
        r = args[0]
        for a in args[1:]:
            r = z3.If(pick(a, r), a, r)
        return r

    return tr


def _rel(op):
    def tr(t, e, args):
        a, b = args
        if z3.is_bool(a) and z3.is_bool(b) and op in ("eq", "ne"):
            return (a == b) if op == "eq" else (a != b)
        a, b = _arith([a, b])
        return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]

    return tr


def _floor(x):
    return z3.ToInt(x) if z3.is_real(x) else x


def _trunc(x):
    if not z3.is_real(x):
        return x
    return z3.If(x >= 0, z3.ToInt(x), -z3.ToInt(-x))


def _ceil(x):
    return -z3.ToInt(-x) if z3.is_real(x) else x


def _round_half_even(x):
    if not z3.is_real(x):
        return x
    f = z3.ToInt(x)
    d = x - z3.ToReal(f)
    half = z3.RealVal("1/2")
    return z3.If(d < half, f, z3.If(d > half, f + 1, z3.If(f % 2 == 0, f, f + 1)))


def _truediv(t, e, args):
    a, b = _real(args[0]), _real(args[1])
    t.side.append(b != 0)
    return a / b


def _indicator(t, e, args):
    n = len(args) // 2
    if len(args) % 2 or n != 1:
        raise Unsupported(f"IsNonOverlappingAndDenseIndicator of rank {n} (only rank 1 is exact here)")
    size, stride = (_int(a, "IsNonOverlappingAndDenseIndicator") for a in args)
    return z3.If(z3.Or(stride == 1, size < 2), z3.IntVal(1), z3.IntVal(0))


def _where(t, e, args):
    c, p, q = args
    if not z3.is_bool(c):
        c = _int(c, "Where") != 0
    if z3.is_bool(p) != z3.is_bool(q):
        raise Unsupported("Where with a boolean and a number branch")
    if not z3.is_bool(p):
        p, q = _arith([p, q])
    return z3.If(c, p, q)


def _not_number(t, e, args):
    raise Unsupported(f"{_fname(e)} is not a finite number")


_HANDLERS = {
    "Add": _add,
    "Mul": _mul,
    "Pow": _pow,
    "PowByNatural": _pow_by_natural,
    "Equality": _rel("eq"), "Unequality": _rel("ne"), "StrictLessThan": _rel("lt"),
    "LessThan": _rel("le"), "StrictGreaterThan": _rel("gt"), "GreaterThan": _rel("ge"),
    "And": lambda t, e, a: z3.And(*a),
    "Or": lambda t, e, a: z3.Or(*a),
    "Not": lambda t, e, a: z3.Not(a[0]),
    "FloorDiv": lambda t, e, a: t.floordiv(*a),
    "CleanDiv": lambda t, e, a: t.floordiv(*a),
    "CeilDiv": lambda t, e, a: -t.floordiv(-_int(a[0], "CeilDiv"), a[1]),
    "Mod": lambda t, e, a: t.pymod(*a),
    "PythonMod": lambda t, e, a: t.pymod(*a),
    "ModularIndexing": lambda t, e, a: t.pymod(t.floordiv(a[0], a[1]), a[2]),
    "Where": _where,
    "Max": _minmax(lambda a, r: a > r),
    "Min": _minmax(lambda a, r: a < r),
    "IntTrueDiv": _truediv,
    "FloatTrueDiv": _truediv,
    "FloorToInt": lambda t, e, a: _floor(_real(a[0])),
    "CeilToInt": lambda t, e, a: _ceil(_real(a[0])),
    "TruncToInt": lambda t, e, a: _trunc(_real(a[0])),
    "RoundToInt": lambda t, e, a: _round_half_even(_real(a[0])),
    "TruncToFloat": lambda t, e, a: z3.ToReal(_trunc(_real(a[0]))),
    "ToFloat": lambda t, e, a: _real(a[0]),
    "Identity": lambda t, e, a: a[0],
    "floor": lambda t, e, a: _floor(_real(a[0])),  # plain sympy, e.g. floor(s0/2)
    "ceiling": lambda t, e, a: _ceil(_real(a[0])),
    "Abs": lambda t, e, a: z3.If(a[0] >= 0, a[0], -a[0]),
    "LShift": lambda t, e, a: t.lshift(e),
    "RShift": lambda t, e, a: t.rshift(e),
    "IsNonOverlappingAndDenseIndicator": _indicator,
    "Infinity": _not_number, "NegativeInfinity": _not_number, "IntInfinity": _not_number,
    "NegativeIntInfinity": _not_number, "NaN": _not_number, "ComplexInfinity": _not_number,
}
#: handlers that translate their own arguments (exponents must stay sympy)
_LAZY = {"Pow", "PowByNatural", "LShift", "RShift"}


def _shift_amount(t, s):
    if s.is_Integer:
        if int(s) < 0:
            raise Unsupported("negative shift count")
        return z3.IntVal(2 ** int(s))
    x = _int(t(s), "shift")
    t.side.append(x >= 0)
    return z3.IntVal(2) ** x


def _lshift(self, e):
    return _int(self(e.args[0]), "LShift") * _shift_amount(self, e.args[1])


def _rshift(self, e):
    return self.floordiv(self(e.args[0]), _shift_amount(self, e.args[1]))


Translator.lshift = _lshift
Translator.rshift = _rshift


def to_z3(e: sympy.Basic, t: Translator | None = None) -> z3.ExprRef:
    """One expression (raises Unsupported)."""
    return (t or Translator())(sympy.sympify(e))


class Compiled:
    """Translations of whole facts, each with its own side conditions, shared by the queries of
    one observation (building z3 terms costs more than solving these small queries)."""

    def __init__(self) -> None:
        self._memo: dict = {}

    def __call__(self, e: sympy.Basic) -> tuple:
        r = self._memo.get(e)
        if r is None:
            t = Translator()
            try:
                r = (t(sympy.sympify(e)), tuple(t.side), dict(t.symbols), "")
            except Unsupported as x:
                r = (None, (), {}, str(x))
            except (TypeError, ValueError, ArithmeticError, z3.Z3Exception) as x:
                r = (None, (), {}, f"translation failed: {type(x).__name__}: {x}")
            self._memo[e] = r
        return r


def prove(facts, claim, settings: SmtSettings = DEFAULT_SETTINGS, compiled: Compiled | None = None
          ) -> Verdict:
    """Do `facts` (sympy booleans) imply `claim`? unsat of facts ∧ ¬claim ∧ side conditions is a
    proof; sat comes with a model (every symbol of the query gets a value)."""
    t0 = time.perf_counter()

    def done(status, reason="", model=()):
        return Verdict(status, reason, model, (time.perf_counter() - t0) * 1000)

    comp = compiled or Compiled()
    parts = [comp(f) for f in facts] + [comp(claim)]
    bad = next((p[3] for p in parts if p[3]), "")
    if bad:
        return done("unknown", bad)
    if not all(z3.is_bool(p[0]) for p in parts):
        return done("unknown", "a fact or the claim is not a boolean")
    symbols: dict = {}
    for p in parts:
        symbols.update(p[2])
    query = [p[0] for p in parts[:-1]] + [x for p in parts for x in p[1]] + [z3.Not(parts[-1][0])]
    # The plain SMT core answers shape queries in about 1 ms, the default tactic pipeline in
    # about 10; when the core gives up (nonlinear terms), the full solver gets the rest of the
    # budget (one timeout for the whole query).
    for make in (z3.SimpleSolver, z3.Solver):
        left = settings.timeout_ms - (time.perf_counter() - t0) * 1000
        if left <= 1:
            return done("timeout", "z3: timeout")
        s = make()
        s.set(timeout=max(1, int(left)))
        s.add(*query)
        r = s.check()
        if r == z3.unsat:
            return done("unsat")
        if r == z3.sat:
            m = s.model()
            vals = tuple(sorted((n, m.eval(v, model_completion=True).as_long())
                                for n, v in symbols.items()))
            return done("sat", "", vals)
        why = s.reason_unknown()
        if "timeout" in why or "canceled" in why:
            return done("timeout", f"z3: {why}")
    return done("unknown", f"z3: {why}")


def parse(text: str) -> sympy.Basic:
    """An expression printed by sympy (an Observation field) back to sympy, with torch's
    functions and integer symbols; data only (sympy's parser, no names beyond these)."""
    import re

    from torch.utils._sympy import functions as F

    names = {n: getattr(F, n) for n in dir(F) if isinstance(getattr(F, n), type)}
    names.update({n: sympy.Symbol(n, integer=True) for n in set(re.findall(r"\b[a-z]+\d+\b", text))})
    return sympy.sympify(text, locals=names)
