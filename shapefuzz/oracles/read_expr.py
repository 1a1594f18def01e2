"""torch's printed shape expressions read back into sympy with torch's own functions, as data
(the root-cause analysis, shapefuzz/oracles/root_cause.py, hands them to torch's bound_sympy)."""

from __future__ import annotations

import re

import sympy

__all__ = ["read_expr"]

_TOKENS = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z_0-9]*)|(\*\*|//|<=|>=|==|!=|[-+*/%<>()&|~,]))")
_RELOPS = {"<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt, ">=": sympy.Ge, "==": sympy.Eq, "!=": sympy.Ne}


def read_expr(text: str) -> sympy.Basic:
    """torch's printed expression back to sympy with torch's own functions (`a//b` is FloorDiv,
    not sympy's floor, so bound_sympy sees what torch saw). A small recursive-descent reader over
    names, numbers and operators: no Python parser (not thread-safe in CPython 3.11, Note [one
    parser at a time] in the repro layer) and no eval; anything else raises ValueError. `&` and
    `|` bind looser than comparisons: sympy prints their operands in parentheses."""
    toks, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKENS.match(text, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"read_expr: cannot read {text[pos:pos + 20]!r}")
        toks.append(m.group(1) or m.group(2) or m.group(3))
        pos = m.end()
    r = _Reader(toks)
    e = r.either()
    if r.i != len(toks):
        raise ValueError(f"read_expr: trailing {toks[r.i:r.i + 3]}")
    return e


class _Reader:
    def __init__(self, toks: list[str]) -> None:
        from torch.utils._sympy import functions as F

        self.toks, self.i = toks, 0
        self.fns = {n: getattr(F, n) for n in dir(F) if isinstance(getattr(F, n), type)}
        self.fns.update(Eq=sympy.Eq, Ne=sympy.Ne, Lt=sympy.Lt, Le=sympy.Le, Gt=sympy.Gt,
                        Ge=sympy.Ge, Abs=sympy.Abs, Not=sympy.Not, And=sympy.And, Or=sympy.Or,
                        floor=self._floor)

    def peek(self) -> str:
        return self.toks[self.i] if self.i < len(self.toks) else ""

    def take(self, want: str = "") -> str:
        t = self.peek()
        if not t or (want and t != want):
            raise ValueError(f"read_expr: expected {want or 'more'}, got {t!r}")
        self.i += 1
        return t

    def either(self):
        e = self.both()
        while self.peek() == "|":
            self.take()
            e = sympy.Or(e, self.both())
        return e

    def both(self):
        e = self.negation()
        while self.peek() == "&":
            self.take()
            e = sympy.And(e, self.negation())
        return e

    def negation(self):
        if self.peek() == "~":
            self.take()
            return sympy.Not(self.negation())
        return self.comparison()

    def comparison(self):
        e = self.arith()
        if self.peek() in _RELOPS:
            e = _RELOPS[self.take()](e, self.arith())
        return e

    def arith(self):
        e = self.term()
        while self.peek() in ("+", "-"):
            e = e + self.term() if self.take() == "+" else e - self.term()
        return e

    def term(self):
        from torch.utils._sympy.functions import FloorDiv, IntTrueDiv, PythonMod

        e = self.unary()
        ops = {"*": lambda a, b: a * b, "//": FloorDiv, "%": PythonMod, "/": IntTrueDiv}
        while self.peek() in ops:
            e = ops[self.take()](e, self.unary())
        return e

    def unary(self):
        if self.peek() == "-":
            self.take()
            return -self.unary()
        e = self.atom()
        if self.peek() == "**":
            self.take()
            e = e ** self.unary()
        return e

    def atom(self):
        t = self.take()
        if t == "(":
            e = self.either()
            self.take(")")
            return e
        if t.isdigit():
            return sympy.Integer(int(t))
        if t in ("True", "False"):
            return sympy.true if t == "True" else sympy.false
        if self.peek() == "(":
            if t not in self.fns:
                raise ValueError(f"read_expr: unknown function {t!r}")
            self.take("(")
            args = [self.either()]
            while self.peek() == ",":
                self.take()
                args.append(self.either())
            self.take(")")
            return self.fns[t](*args)
        if not t[0].isalpha() and t[0] != "_":
            raise ValueError(f"read_expr: unexpected {t!r}")
        return sympy.Symbol(t, integer=True)

    @staticmethod
    def _floor(x):
        """torch prints FloorDiv as floor(a / b) at times (IntTrueDiv here)."""
        from torch.utils._sympy.functions import FloorDiv

        if type(x).__name__ != "IntTrueDiv":
            raise ValueError(f"read_expr: floor of {x}")
        return FloorDiv(*x.args)
