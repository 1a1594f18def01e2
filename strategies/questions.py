"""Strategies for shape-question programs (shapefuzz.questions)."""

from __future__ import annotations

import hypothesis.strategies as st

from shapefuzz.program import Ref
from shapefuzz.questions import ASK_MODES, BINOPS, COMPARE, QInstr, QProgram

__all__ = ["qprograms"]

# The question patterns of seed 000: u >= 0, u == 0, u == 1, u > 0, u >= 2 ...
_SEED_PATTERNS = [(">=", 0), ("==", 0), ("==", 1), (">", 0), (">=", 2), ("!=", 0), ("<", 2)]


def qprograms(max_ops: int = 16, max_hint: int = 8) -> st.SearchStrategy[QProgram]:
    if not 1 <= max_ops <= 256:
        from hypothesis.errors import InvalidArgument

        raise InvalidArgument(f"max_ops={max_ops!r}: expected an int in [1, 256]")
    return _qprograms(max_ops, max_hint)


@st.composite
def _qprograms(draw, max_ops: int, max_hint: int) -> QProgram:
    instrs: list[QInstr] = []
    vals: list[int] = []
    unbacked: set[int] = set()

    def emit(ins: QInstr, value: int | None = None) -> None:
        instrs.append(ins)
        if value is not None:
            vals.append(value)

    def operand(lo=None, hi=None):
        cands = [k for k, v in enumerate(vals) if (lo is None or v >= lo) and (hi is None or v <= hi)]
        if cands and draw(st.integers(0, 3)):
            if draw(st.booleans()):
                return Ref(cands[-1])
            return Ref(draw(st.sampled_from(cands)))
        return draw(st.integers(1 if lo == 1 else -2, 4 if hi is None else max(hi, 1)))

    def val(a):
        return vals[a.index] if isinstance(a, Ref) else a

    hint = st.one_of(st.integers(2, max_hint), st.integers(2, max_hint), st.sampled_from([0, 1]))
    uval = st.sampled_from([0, 1, 2, 3, -1, 5, 8])
    for step in range(max_ops):
        if instrs and not draw(st.integers(0, 9)):
            break
        kind = draw(st.sampled_from(["ask", "ask", "unbacked", "backed", "binop", "binop", "check"]))
        if kind == "backed" or not vals and kind != "unbacked":
            h = draw(hint)
            emit(QInstr("backed", (h,)), h)
        elif kind == "unbacked":
            u = draw(uval)
            unbacked.add(len(vals))
            emit(QInstr("unbacked", (u,)), u)
        elif kind == "binop":
            op = draw(st.sampled_from(sorted(BINOPS)))
            a = operand()
            b = operand(lo=1) if op in ("//", "%") else operand()
            if op in ("//", "%") and val(b) <= 0:
                b = 2
            if isinstance(a, int) and isinstance(b, int):
                continue
            emit(QInstr("binop", (op, a, b)), BINOPS[op](val(a), val(b)))
        else:
            a = operand()
            if isinstance(a, int):
                continue
            same = [Ref(k) for k, v in enumerate(vals) if v == val(a) and k != a.index]
            if same and not draw(st.integers(0, 3)):
                # two values that are equal here: equality guards and replacements (s0 == s1 + 2)
                cmp, b = draw(st.sampled_from(["==", "==", "!=", ">=", "<="])), draw(st.sampled_from(same))
            elif draw(st.booleans()):
                cmp, b = draw(st.sampled_from(_SEED_PATTERNS))
            else:
                cmp, b = draw(st.sampled_from(sorted(COMPARE))), operand()
            holds = COMPARE[cmp](val(a), val(b))
            if kind == "check":
                if not holds and draw(st.integers(0, 9)):  # mostly true checks: valid programs
                    cmp = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}[cmp]
                emit(QInstr("check", (cmp, a, b)))
            else:
                emit(QInstr("ask", (draw(st.sampled_from(ASK_MODES)), cmp, a, b)))
    return QProgram(tuple(instrs))
