"""Shape-question programs: a second program kind with no tensors, a sequence of ShapeEnv
operations. They run on `ref` (our reference ShapeEnv) and on `torch-env` (torch's ShapeEnv
driven directly), and cost microseconds, so campaigns ask far more shape questions per second
than tracing can.

Note [question truth]: every symbol has a concrete value (a backed symbol's hint; an unbacked
symbol's value, known to the program but never told to the ShapeEnv), so every question has a
true answer. A system may answer a question with a claim (static proof, guard, assert) which must
equal the truth, or, for guard_or_false / guard_or_true / statically_known_true, with its
fallback; `bool` on something it cannot decide raises a data-dependent error (outcome `dde`).

Ops (values are SymInts, numbered like tensor programs' values; literals are ints):
  backed(hint)               a backed symbol with this hint (0/1 specialization, duck sizing apply)
  unbacked(value)            a fresh unbacked symbol; `value` is its concrete value
  binop(op, a, b)            + - * // % max min
  check(cmp, a, b)           torch._check(a cmp b): a deferred runtime assert / guard
  check_is_size(a)           torch._check_is_size(a): a >= 0 (and a size-like symbol)
  constrain_range(a, lo, hi) a range constraint lo <= a <= hi (torch._constrain_as_size as
                             traced when lo >= 0, else torch's constrain_range); no assert
  ask(mode, cmp, a, b)       a question; mode: bool | guard_or_false | guard_or_true |
                             statically_known_true | statically_known_false | size_oblivious

Note [statically_known_false]: torch's statically_known_false(c) is True when c is statically
known to be False. Its answer is recorded as the value of c the caller acts on, `not
statically_known_false(c)`: True (c may hold) is its fallback, False a static claim that c is
False. Every oracle then reads it as it reads statically_known_true (an answer is the value of c,
a claim must equal the truth), while torch runs its own path: the hint shortcut with target False
(_sym_node_hint_disproves) and the negation of the static result. torch's decompositions and
meta functions call it where the fast path needs a size known to differ from 1 or 0, and no
question asked it before: a mutant that makes an undecided question "known false" went unseen.
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass
from typing import Any

from shapefuzz.program import MAX_ABS_INT, ProgramError, Ref, _arg_from_json, _arg_to_json

__all__ = [
    "ASK_MODES",
    "BINOPS",
    "COMPARE",
    "FACT_OPS",
    "FALLBACK",
    "POW_EXPONENTS",
    "QOPS",
    "QSCHEMA",
    "QInstr",
    "QProgram",
    "Truth",
    "fact_holds",
    "truth",
]

QSCHEMA = 1
QOPS = {"backed": 1, "unbacked": 1, "binop": 3, "check": 3, "check_is_size": 1,
        "constrain_range": 3, "ask": 4}  # op -> arity
#: the ops that state a fact (a false one makes the program invalid: Truth.failed_check)
FACT_OPS = ("check", "check_is_size", "constrain_range")
ASK_MODES = ("bool", "guard_or_false", "guard_or_true", "statically_known_true", "statically_known_false",
             "size_oblivious")
#: what each mode answers when it cannot decide (None: it raises a DDE instead); an answer is the
#: value of the condition (Note [statically_known_false])
FALLBACK = {"bool": None, "guard_or_false": False, "guard_or_true": True,
            "statically_known_true": False, "statically_known_false": True, "size_oblivious": None}
BINOPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
          "%": operator.mod, "max": max, "min": min, "**": operator.pow}
#: the exponents of `**`: literal naturals only (Note [powers])
POW_EXPONENTS = (0, 1, 2, 3)
# Note [powers]: `v ** k` reaches sympy's Pow and torch's PowByNatural.eval, _safe_pow and the
# value ranges' pow_by_natural, which no other operator makes. The exponent is a literal natural:
# a symbolic one makes torch guard `k >= 0` (a data-dependent error on an unbacked k) and a
# negative one a float, neither of which the reference models; at most 3 keeps the values of a
# chain of powers in the range of a machine int most of the time.
COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
           "==": operator.eq, "!=": operator.ne}


@dataclass(frozen=True, slots=True)
class QInstr:
    op: str
    args: tuple

    @property
    def defines(self) -> bool:
        return self.op in ("backed", "unbacked", "binop")


@dataclass(frozen=True, slots=True)
class QProgram:
    instrs: tuple[QInstr, ...]

    kind = "questions"

    def definitions(self) -> list[tuple[QInstr, int | None]]:
        """Each instruction with the value index it defines (None for check/ask)."""
        out, n = [], 0
        for ins in self.instrs:
            out.append((ins, n if ins.defines else None))
            n += ins.defines
        return out

    def asks(self) -> list[int]:
        """Instruction positions of the questions, in order."""
        return [k for k, i in enumerate(self.instrs) if i.op == "ask"]

    def validate(self) -> None:
        n = 0
        for pos, ins in enumerate(self.instrs):
            if ins.op not in QOPS:
                raise ProgramError(f"instruction {pos}: unknown op {ins.op!r}; known: {sorted(QOPS)}")
            if len(ins.args) != QOPS[ins.op]:
                raise ProgramError(f"instruction {pos} ({ins.op}): takes {QOPS[ins.op]} arguments")
            for a in ins.args:
                if isinstance(a, Ref) and not 0 <= a.index < n:
                    raise ProgramError(f"instruction {pos}: v{a.index} is used before it is defined")
            _check_args(pos, ins)
            n += ins.defines

    def pretty(self) -> str:
        lines = []
        for ins, v in self.definitions():
            lhs = f"v{v} = " if v is not None else ""
            lines.append(f"{lhs}{ins.op}({', '.join(str(a) if isinstance(a, Ref) else repr(a) for a in ins.args)})")
        return "\n".join(lines)

    def op_names(self) -> list[str]:
        return [i.op if i.op != "ask" else f"ask:{i.args[0]}" for i in self.instrs]

    def size(self) -> tuple[int, int]:
        return (len(self.instrs), sum(abs(a) for i in self.instrs for a in i.args if isinstance(a, int)))

    def undefined_outputs(self) -> frozenset[int]:
        """No tensors, so no output whose data is unspecified (Program.undefined_outputs)."""
        return frozenset()

    def to_json(self) -> dict[str, Any]:
        return {"schema": QSCHEMA, "kind": "questions",
                "instrs": [{"op": i.op, "args": [_arg_to_json(a) for a in i.args]} for i in self.instrs]}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))

    @staticmethod
    def from_json(obj: Any) -> QProgram:
        if not isinstance(obj, dict) or obj.get("kind") != "questions":
            raise ProgramError("not a question program (missing \"kind\": \"questions\")")
        if obj.get("schema") != QSCHEMA:
            raise ProgramError(f"question-program schema {obj.get('schema')!r} is not supported (expected {QSCHEMA})")
        instrs = obj.get("instrs")
        if not isinstance(instrs, list) or len(instrs) > 512:
            raise ProgramError("field 'instrs' must be a list of at most 512 instructions")
        out = []
        for k, x in enumerate(instrs):
            if not isinstance(x, dict) or not isinstance(x.get("args"), list):
                raise ProgramError(f"instruction {k} must be an object with an 'args' list")
            out.append(QInstr(x.get("op"), tuple(_arg_from_json(a) for a in x["args"])))
        prog = QProgram(tuple(out))
        prog.validate()
        return prog


def _check_args(pos: int, ins: QInstr) -> None:
    def intlike(a, what):
        if isinstance(a, bool) or not isinstance(a, (int, Ref)):
            raise ProgramError(f"instruction {pos} ({ins.op}): {what} must be a value or an int, got {a!r}")
        if isinstance(a, int) and abs(a) > MAX_ABS_INT:
            raise ProgramError(f"instruction {pos}: {a} is out of range")

    a = ins.args
    if ins.op in ("backed", "unbacked"):
        if isinstance(a[0], bool) or not isinstance(a[0], int) or abs(a[0]) > MAX_ABS_INT:
            raise ProgramError(f"instruction {pos} ({ins.op}): needs an int literal, got {a[0]!r}")
        if ins.op == "backed" and a[0] < 0:
            raise ProgramError(f"instruction {pos}: a backed symbol's hint is a size (>= 0), got {a[0]}")
        return
    if ins.op in ("check_is_size", "constrain_range"):
        _check_fact_args(pos, ins, intlike)
        return
    table = {"binop": BINOPS, "check": COMPARE, "ask": ASK_MODES}[ins.op]
    if a[0] not in table:
        raise ProgramError(f"instruction {pos} ({ins.op}): {a[0]!r} is not one of {sorted(table)}")
    if ins.op == "ask" and a[1] not in COMPARE:
        raise ProgramError(f"instruction {pos} (ask): {a[1]!r} is not a comparison")
    if ins.op == "binop" and a[0] == "**" and (isinstance(a[2], bool) or a[2] not in POW_EXPONENTS):
        raise ProgramError(f"instruction {pos} (binop **): the exponent must be one of {POW_EXPONENTS}, "
                           f"got {a[2]!r}")
    for x in a[-2:]:
        intlike(x, "operand")


def _check_fact_args(pos: int, ins: QInstr, intlike) -> None:
    a = ins.args
    if not isinstance(a[0], Ref):
        raise ProgramError(f"instruction {pos} ({ins.op}): needs a value (v<k>), got {a[0]!r}")
    if ins.op == "constrain_range":
        for x in a[1:]:
            if not isinstance(x, int) or isinstance(x, bool):
                raise ProgramError(f"instruction {pos} (constrain_range): bounds must be int literals, got {x!r}")
            intlike(x, "bound")
        if a[1] > a[2]:
            raise ProgramError(f"instruction {pos} (constrain_range): min {a[1]} is above max {a[2]}")


def fact_holds(ins: QInstr, v) -> bool:
    """Does the fact a check / check_is_size / constrain_range states hold? `v` reads operands."""
    a = ins.args
    if ins.op == "check":
        return COMPARE[a[0]](v(a[1]), v(a[2]))
    if ins.op == "check_is_size":
        return v(a[0]) >= 0
    return a[1] <= v(a[0]) <= a[2]


@dataclass(frozen=True, slots=True)
class Truth:
    """Concrete evaluation (Note [question truth])."""

    values: tuple[int, ...]
    answers: tuple[bool, ...]  # one per ask reached
    failed_check: int | None  # position of the first false torch._check (the program is invalid)


def truth(p: QProgram) -> Truth:
    vals: list[int] = []
    answers: list[bool] = []

    def v(a):
        return vals[a.index] if isinstance(a, Ref) else a

    for pos, ins in enumerate(p.instrs):
        a = ins.args
        if ins.op in ("backed", "unbacked"):
            vals.append(a[0])
        elif ins.op == "binop":
            try:
                vals.append(BINOPS[a[0]](v(a[1]), v(a[2])))
            except ZeroDivisionError:
                return Truth(tuple(vals), tuple(answers), pos)
        elif ins.op in FACT_OPS:
            if not fact_holds(ins, v):
                return Truth(tuple(vals), tuple(answers), pos)
        else:
            answers.append(bool(COMPARE[a[1]](v(a[2]), v(a[3]))))
    return Truth(tuple(vals), tuple(answers), None)
