"""The API an op's symbolic shape rule is written against (Note [symbolic shape rules] in
shapefuzz/ops/base.py): symbolic tensors and SymInts over the reference env, and the four ways
to ask a shape question.

    def symbolic(self, args, n_out, s):          # s: Shapes
        x, d, start, length = args               # x: SymTensor, start/length: SymInt or int
        n = x.shape[d]
        s.check(length >= 0, "narrow(): length must be non-negative")
        s.check(start + length <= n, "start + length exceeds dimension size")
        return (s.tensor(x.shape[:d] + (length,) + x.shape[d + 1:], x.dtype),)

A SymInt supports + - * // % and the comparisons; a comparison is a SymBool, which is asked in
one of these modes (torch's names):
  bool(c) / s.expect(c)        prove statically, else guard on the hint, else data-dependent error
  s.guard_or_false(c) / s.guard_or_true(c)   as bool, but the fallback instead of an error
  s.statically_known_true(c)   a static proof only, never a guard
  s.not_known_false(c)         not statically_known_false(c): True unless c is proved False
  s.check(c, msg)              torch._check: nothing if provable, a guard if backed, else a
                               deferred runtime assert that refines ranges
Fresh data-dependent sizes come from s.unbacked(lo, hi); s.int_of(x) turns a SymInt into a
Python int as torch's `int(sym)` does (a guard that specializes; an error if unbacked); s.hint(x)
is x's value when the env may know it; s.data_dependent(c, why) refuses to guess c; s.fail(msg)
raises the op's own error.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import sympy

from shapefuzz.systems.ref.env import Node, RefEnv
from shapefuzz.systems.ref.evaluate import DataDependentError, ask, check
from shapefuzz.systems.ref.execute import binop, relational
from shapefuzz.systems.ref.ranges import Interval

__all__ = ["RuleError", "Shapes", "SymBool", "SymInt", "SymTensor"]

#: x cmp x for any x
_REFLEXIVE = {"==": True, "<=": True, ">=": True, "!=": False, "<": False, ">": False}

_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
            "==": operator.eq, "!=": operator.ne}


class RuleError(Exception):
    """A shape rule rejects its arguments, as torch's meta function raises (RuntimeError,
    IndexError ...). `exc_type` names torch's exception class."""

    def __init__(self, message: str, exc_type: str = "RuntimeError"):
        self.exc_type = exc_type
        super().__init__(message)


class SymInt:
    """A SymInt of the reference env (a Node plus the Shapes that made it)."""

    __slots__ = ("node", "s")

    def __init__(self, node: Node, s: Shapes):
        self.node, self.s = node, s

    def _op(self, op, other, swap=False):
        a, b = (self.s.sym(other), self) if swap else (self, self.s.sym(other))
        return self.s.binop(op, a, b)

    def __add__(self, o):
        return self._op("+", o)

    def __radd__(self, o):
        return self._op("+", o, True)

    def __sub__(self, o):
        return self._op("-", o)

    def __rsub__(self, o):
        return self._op("-", o, True)

    def __mul__(self, o):
        return self._op("*", o)

    def __rmul__(self, o):
        return self._op("*", o, True)

    def __floordiv__(self, o):
        return self._op("//", o)

    def __mod__(self, o):
        return self._op("%", o)

    def __neg__(self):
        return self._op("*", -1)

    def __lt__(self, o):
        return SymBool("<", self, o)

    def __le__(self, o):
        return SymBool("<=", self, o)

    def __gt__(self, o):
        return SymBool(">", self, o)

    def __ge__(self, o):
        return SymBool(">=", self, o)

    def __eq__(self, o):  # a SymBool, as torch's SymInt.__eq__
        return SymBool("==", self, o)

    def __ne__(self, o):
        return SymBool("!=", self, o)

    __hash__ = None  # comparisons are symbolic, so SymInts cannot be dict keys

    def __str__(self) -> str:
        return str(self.s.env.expr_of(self.node))

    def __repr__(self) -> str:
        return f"SymInt({self})"


class SymBool:
    """`a cmp b`, not yet asked. bool() asks it as torch's bool(SymBool) does."""

    __slots__ = ("a", "b", "cmp")

    def __init__(self, cmp: str, a, b):
        self.cmp, self.a, self.b = cmp, a, b

    def __bool__(self) -> bool:
        return self._s().expect(self)

    def _s(self) -> Shapes:
        return (self.a if isinstance(self.a, SymInt) else self.b).s


@dataclass(frozen=True, slots=True)
class SymTensor:
    """A tensor as the reference sees it: its sizes and dtype (no data)."""

    shape: tuple  # SymInt per dim
    dtype: str

    @property
    def rank(self) -> int:
        return len(self.shape)


class Shapes:
    """One trace's view of the env, for shape rules; records every question it answers."""

    def __init__(self, env: RefEnv):
        self.env = env
        self.decisions: list[tuple[sympy.Basic, bool, str]] = []  # (expr, answer, how)
        self.last_how = ""  # how the last question was answered (a branch's fallback or not)
        # what z3 may assume (shapefuzz/systems/ref/claims.py): (at, symbol, lo, hi) per fresh
        # unbacked symbol, (at, "guard" | "assert", fact) per fact, `at` the first decision
        # index that may use it
        self.created: list[tuple[int, sympy.Symbol, object, object]] = []
        self.facts: list[tuple[int, str, sympy.Basic]] = []
        self._tagged = (0, 0)

    # ---- values ------------------------------------------------------------------------------
    def sym(self, x) -> SymInt:
        if isinstance(x, SymInt):
            return x
        if isinstance(x, bool) or not isinstance(x, int):
            raise TypeError(f"expected a SymInt or an int, got {x!r}")
        return SymInt(self.env.constant(x), self)

    def binop(self, op: str, a, b) -> SymInt:
        return SymInt(binop(self.env, op, self.sym(a).node, self.sym(b).node), self)

    def max(self, a, b) -> SymInt:
        return self.binop("max", a, b)

    def min(self, a, b) -> SymInt:
        return self.binop("min", a, b)

    def tensor(self, shape, dtype: str) -> SymTensor:
        return SymTensor(tuple(self.sym(n) for n in shape), dtype)

    def numel(self, t: SymTensor) -> SymInt:
        out = self.sym(1)
        for n in t.shape:
            out = out * n
        return out

    def expr(self, x) -> sympy.Basic:
        return self.env.expr_of(self.sym(x).node)

    def static(self, x) -> int | None:
        """x's value if it is a constant (after replacements), else None. Never guards."""
        if isinstance(x, int):
            return x
        e = self.expr(x)
        return int(e) if e.is_Integer else None

    def hint(self, x) -> int | None:
        """x's value in this run if the env may know it (backed), else None."""
        v = self.static(x)
        return v if v is not None else self.env.hint_of(self.sym(x).node)

    @property
    def backed_size_oblivious(self) -> bool:
        return self.env.settings.backed_size_oblivious

    def unbacked(self, lo=-math.inf, hi=math.inf, size_like: bool = False) -> SymInt:
        """A fresh data-dependent SymInt with the range [lo, hi] (torch's
        create_unbacked_symint, then _constrain_range_for_size when size_like)."""
        node = self.env.create_unbacked()
        sym = self.env.expr_of(node)
        self.env.ranges[sym] = Interval(lo, hi)
        self.created.append((len(self.decisions), sym, lo, hi))
        if size_like:
            self.env.size_like.add(sym)
        return SymInt(node, self)

    def int_of(self, x) -> int:
        """int(x), as torch specializes a SymInt: a constant as is, a backed value by guarding
        x == hint, an unbacked one raises a data-dependent error."""
        v = self.static(x)
        if v is not None:
            return v
        x = self.sym(x)
        hint = self.env.hint_of(x.node)
        if hint is None:
            hint = self.env.size_hint(self.expr(x))
        if hint is None:
            raise DataDependentError(self.expr(x), sorted(str(u) for u in self.env.size_like))
        self.expect(x == hint)
        return int(hint)

    # ---- questions ---------------------------------------------------------------------------
    def _plain(self, c) -> bool | None:
        """c's value when both sides are plain constants: torch compares Python ints without a
        ShapeEnv, so this is no shape question (and costs no sympy relational)."""
        if not isinstance(c, SymBool):
            return bool(c)
        a, b = self.static(c.a), self.static(c.b)
        if a is None or b is None:
            return None
        return _COMPARE[c.cmp](a, b)

    def _ask(self, mode: str, c: SymBool) -> bool:
        plain = self._plain(c)
        if plain is not None:
            self.last_how = "static"
            return plain
        a, b = self.sym(c.a), self.sym(c.b)
        if c.cmp in _REFLEXIVE and self.env.expr_of(a.node) is self.env.expr_of(b.node):
            # x cmp x: sympy folds the relational to a constant, so ask() would answer it
            # statically; the same answer without building it (broadcasting asks n == n a lot)
            v = _REFLEXIVE[c.cmp]
            self.decisions.append((sympy.true if v else sympy.false, v, "static"))
            self.last_how = "static"
            return v
        ans = ask(self.env, mode, relational(self.env, c.cmp, a.node, b.node))
        self.decisions.append((ans.expr, ans.value, ans.how))
        self._tag()
        self.last_how = ans.how
        return ans.value

    def expect(self, c: SymBool) -> bool:
        return self._ask("bool", c)

    def guard_or_false(self, c: SymBool) -> bool:
        return self._ask("guard_or_false", c)

    def guard_or_true(self, c: SymBool) -> bool:
        return self._ask("guard_or_true", c)

    def statically_known_true(self, c: SymBool) -> bool:
        return self._ask("statically_known_true", c)

    def not_known_false(self, c: SymBool) -> bool:
        """`not statically_known_false(c)`: the value of c its caller acts on, as a question
        records it (Note [statically_known_false])."""
        return self._ask("statically_known_false", c)

    def size_oblivious(self, c: SymBool) -> bool:
        return self._ask("size_oblivious", c)

    def check(self, c: SymBool, msg="") -> None:
        """torch._check(c, msg). `msg` is a str or, like torch's, a callable that makes it
        (printing sizes costs time, so only a failing check should). A CheckFailed from the env
        carries msg in front."""
        plain = self._plain(c)
        if plain is not None:
            if not plain:
                raise RuleError((msg() if callable(msg) else msg) or
                                "Expected cond to be True, but got False")
            return
        a, b = self.sym(c.a), self.sym(c.b)
        env = self.env
        rel = relational(env, c.cmp, a.node, b.node)
        n_guards, n_asserts = len(env.guards), len(env.asserts)
        expr = env.expr_of(rel)
        try:
            check(env, rel)
        except Exception as e:
            if msg and hasattr(e, "expr"):
                e.args = (f"{msg() if callable(msg) else msg} ({e})",)
            raise
        how = ("guard" if len(env.guards) > n_guards else
               "assert" if len(env.asserts) > n_asserts else "static")
        self.decisions.append((expr, True, how))
        self._tag()

    def _tag(self) -> None:
        """The guards and asserts recorded since the last decision, known from the next one."""
        g, a = self._tagged
        at = len(self.decisions)
        self.facts += [(at, "guard", f) for f in self.env.guards[g:]]
        self.facts += [(at, "assert", f) for f in self.env.asserts[a:]]
        self._tagged = (len(self.env.guards), len(self.env.asserts))

    def data_dependent(self, c: SymBool, why: str):
        """Raise a data-dependent error on c: the rule needs c decided and refuses to guess.
        The message starts with `why` (KNOWN_DIFFERENCES may name it)."""
        a, b = self.sym(c.a), self.sym(c.b)
        expr = self.env.expr_of(relational(self.env, c.cmp, a.node, b.node))
        e = DataDependentError(expr, sorted(str(u) for u in self.env.size_like))
        e.args = (f"{why}: {e}",)
        raise e

    def fail(self, msg: str, exc_type: str = "RuntimeError"):
        raise RuleError(msg, exc_type)
