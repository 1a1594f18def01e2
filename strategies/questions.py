"""Strategies for shape-question programs (shapefuzz.program.questions)."""

from __future__ import annotations

import hypothesis.strategies as st

from shapefuzz.ops.choices import sampled_from
from shapefuzz.program import Ref
from shapefuzz.program.questions import ASK_MODES, BINOPS, COMPARE, QInstr, QProgram

__all__ = ["qprograms"]

# The question patterns of seed 000: u >= 0, u == 0, u == 1, u > 0, u >= 2 ...
_SEED_PATTERNS = [(">=", 0), ("==", 0), ("==", 1), (">", 0), (">=", 2), ("!=", 0), ("<", 2)]
#: constants of real-world shape arithmetic beyond 0-4: powers of two and primes up to 1024
#: (`256 * u0 % 447` is a real shape)
_POWERS = [2 ** k for k in range(1, 11)]
_PRIMES = [3, 5, 7, 11, 13, 17, 31, 61, 127, 257, 331, 447, 509, 1021]  # 447 = 3 * 149: a real modulus
LARGE_CONSTANTS = sorted(set(_POWERS + _PRIMES))


def qprograms(max_ops: int = 16, max_hint: int = 8) -> st.SearchStrategy[QProgram]:
    if not 1 <= max_ops <= 256:
        from hypothesis.errors import InvalidArgument

        raise InvalidArgument(f"max_ops={max_ops!r}: expected an int in [1, 256]")
    return _qprograms(max_ops, max_hint)


class _QGen:
    """The state of one question program being drawn: instructions and the concrete value of each
    value instruction (the draws are the same, in the same order, as one function's were)."""

    def __init__(self, draw):
        self.draw = draw
        self.instrs: list[QInstr] = []
        self.vals: list[int] = []
        self.last_ask: QInstr | None = None
        self.unbacked: list[int] = []  # the value indices of unbacked leaves
        self.backed: list[int] = []  # the value indices of backed leaves that stay symbols (hint >= 2)

    def emit(self, ins: QInstr, value: int | None = None) -> None:
        self.instrs.append(ins)
        if value is not None:
            self.vals.append(value)

    def operand(self, lo=None, hi=None):
        draw, vals = self.draw, self.vals
        cands = [k for k, v in enumerate(vals) if (lo is None or v >= lo) and (hi is None or v <= hi)]
        if cands and draw(st.integers(0, 3)):
            if draw(st.booleans()):
                return Ref(cands[-1])
            return Ref(draw(sampled_from(cands)))
        if hi is None and not draw(st.integers(0, 4)):
            return draw(sampled_from(LARGE_CONSTANTS))
        return draw(st.integers(1 if lo == 1 else -2, 4 if hi is None else max(hi, 1)))

    def val(self, a):
        return self.vals[a.index] if isinstance(a, Ref) else a

    def binop(self) -> None:
        op = self.draw(sampled_from(sorted(BINOPS)))
        a = self.operand()
        if op == "**":  # Note [powers]: a literal natural exponent, mostly a square or a cube
            b = self.draw(sampled_from([2, 2, 3, 0, 1]))
        elif op in ("//", "%"):
            # half the divisors small literals: halves, parities and alignments (u // 2, u % 2,
            # u % 8) are what shape code divides by, and sympy's FloorDiv / PythonMod rules
            # special-case them (the divisor 2's parity rule, gcd folding)
            b = self.draw(sampled_from([2, 2, 3, 4, 8])) if self.draw(st.booleans()) else self.operand(lo=1)
            b = b if self.val(b) > 0 else 2
        else:
            b = self.operand()
        if isinstance(a, int) and isinstance(b, int):
            return
        value = BINOPS[op](self.val(a), self.val(b))
        if op != "**" or abs(value) <= 2 ** 31:  # a power's value stays a machine int (Note [powers])
            self.emit(QInstr("binop", (op, a, b)), value)

    def comparison(self, op: str) -> None:
        draw = self.draw
        # Note [near the hint]: a backed size against a literal near its hint (`x.size(0) < 4` in
        # model code) is undecided for a backed symbol (its range is [2, oo)): bool guards,
        # guard_or_* guard and statically_known_* fall back. Without it, 300 programs (seeds 0,
        # 1) asked 27 and 38 questions over backed symbols alone (0 and 3 fallbacks). Asked
        # only when the operand drawn happened to be a backed leaf, a statically_known_true that
        # hands its SymBool back where the hint disproves the condition (mutant 0a4a97871c90)
        # was met by no 40 s campaign of seeds 1, 2 and in 2 and 1 of 300 programs of 8
        # instructions; with the leaf drawn on purpose (a quarter of the comparisons), in 8
        # and 3 (119 and 106 questions over backed symbols alone, 37 and 18 fallbacks)
        near = bool(self.backed) and not draw(st.integers(0, 3))
        a = Ref(draw(sampled_from(self.backed))) if near else self.operand()
        if isinstance(a, int):
            return
        same = [Ref(k) for k, v in enumerate(self.vals) if v == self.val(a) and k != a.index]
        if near:
            cmp, b = draw(sampled_from(sorted(COMPARE))), self.val(a) + draw(sampled_from([-2, -1, 0, 1, 2]))
        elif same and not draw(st.integers(0, 3)):
            # two values that are equal here: equality guards and replacements (s0 == s1 + 2)
            cmp, b = draw(sampled_from(["==", "==", "!=", ">=", "<="])), draw(sampled_from(same))
        elif draw(st.booleans()):
            cmp, b = draw(sampled_from(_SEED_PATTERNS))
        else:
            cmp, b = draw(sampled_from(sorted(COMPARE))), self.operand()
        holds = COMPARE[cmp](self.val(a), self.val(b))
        if op == "check":
            if not holds and draw(st.integers(0, 9)):  # mostly true checks: valid programs
                cmp = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}[cmp]
            self.emit(QInstr("check", (cmp, a, b)))
        else:
            self.last_ask = QInstr("ask", (draw(sampled_from(ASK_MODES)), cmp, a, b))
            self.emit(self.last_ask)
            if not draw(st.integers(0, 3)):
                self.decide(cmp, a, b, holds)
            return
        self.ask_again()

    def decide(self, cmp: str, a, b, holds: bool) -> None:
        """The fact that decides the question just asked (its relation or the negation, as it
        holds here), then the question again: the answer must not stay stale."""
        neg = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}
        self.emit(QInstr("check", (cmp if holds else neg[cmp], a, b)))
        self.emit(self.last_ask)

    def ask_again(self) -> None:
        """The last question again after a new fact: its answer may only get sharper."""
        if self.last_ask is not None and not self.draw(st.integers(0, 2)):
            self.emit(self.last_ask)

    def size_fact(self) -> None:
        """torch._check_is_size, or a range constraint around an unbacked value (mostly true)."""
        draw = self.draw
        refs = [k for k, v in enumerate(self.vals) if v >= 0 or not draw(st.integers(0, 9))]
        if not refs:
            return
        k = draw(sampled_from(refs[-3:]))
        leaves = [j for j in self.unbacked if j in refs]
        if not leaves or draw(st.booleans()):
            self.emit(QInstr("check_is_size", (Ref(k),)))
        else:
            # as torch._constrain_as_size is used: on an unbacked value (an item() result); on a
            # backed symbol torch narrows the range without a guard (its own TODO says so)
            k = draw(sampled_from(leaves[-3:]))
            v = self.vals[k]
            lo = v - draw(sampled_from([0, 0, 1, 2, 5, v, v + 1]))
            hi = max(lo, v + draw(sampled_from([0, 1, 3, 8, 64, 1024])))
            self.emit(QInstr("constrain_range", (Ref(k), lo, hi)))
        self.ask_again()


@st.composite
def _qprograms(draw, max_ops: int, max_hint: int) -> QProgram:
    g = _QGen(draw)
    hint = st.one_of(st.integers(2, max_hint), st.integers(2, max_hint), sampled_from([0, 1]))
    uval = sampled_from([0, 1, 2, 3, -1, 5, 8])
    for _ in range(max_ops):
        if g.instrs and not draw(st.integers(0, 9)):
            break
        op = draw(sampled_from(["ask", "ask", "unbacked", "backed", "binop", "binop", "check",
                                   "size_fact"]))
        if op == "backed" or (not g.vals and op != "unbacked"):
            h = draw(hint)
            if h >= 2:
                g.backed.append(len(g.vals))
            g.emit(QInstr("backed", (h,)), h)
        elif op == "unbacked":
            u = draw(uval)
            g.unbacked.append(len(g.vals))
            g.emit(QInstr("unbacked", (u,)), u)
        elif op == "binop":
            g.binop()
        elif op == "size_fact":
            g.size_fact()
        else:
            g.comparison(op)
    return QProgram(tuple(g.instrs))
