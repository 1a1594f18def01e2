"""What a system says about one program under one config (DESIGN.md "Observation").

All fields are plain data (strings for sympy expressions) so observations cross process
boundaries, land in case files as JSON, and oracles stay pure functions over them.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from shapefuzz.program import InputSpec
from shapefuzz.systems.evidence.base import NONE as NO_EVIDENCE
from shapefuzz.systems.evidence.base import Evidence

__all__ = [
    "BUG",
    "FILE_KEYS",
    "OUTCOMES",
    "Decision",
    "Observation",
    "Outcome",
    "OutcomeStatus",
    "ReplayRecord",
    "RunResult",
    "SmtCheck",
    "Value",
    "compare_runs",
    "growth_order",
    "superlinear",
    "superlinear_kinds",
    "to_jsonable",
]

class OutcomeStatus(StrEnum):
    """How a job ended. A str: files, reports and older code read and compare the value. Not
    `Status`: z3 verdicts (SmtCheck.status) and case files (Case.status) have statuses of their own."""

    OK = "ok"
    DDE = "dde"  # a data-dependent error
    CONSTRAINT = "constraint"  # export refused to specialize a Dim the user declared dynamic: by design
    ERROR = "error"
    CRASH = "crash"
    TIMEOUT = "timeout"
    #: shapefuzz itself failed on the job (Note [shapefuzz bugs] in workers.py): no oracle judges it
    BUG = "bug"


BUG = OutcomeStatus.BUG
OUTCOMES = tuple(OutcomeStatus)


def by_position(cls):
    """Pickle a frozen slots dataclass as the tuple of its fields, in order.

    Note [observation pickling]: every observation a worker sends back is pickled there and
    unpickled in the campaign process, and a ref or torch-env campaign's process is its
    bottleneck. A frozen slots dataclass pickles through dataclasses' own __getstate__ /
    __setstate__, which call fields() on every object (5% of a ref campaign process's time,
    most of its unpickling); these read the field names once."""
    names = tuple(f.name for f in fields(cls))
    get, put = operator.attrgetter(*names), object.__setattr__
    assert len(names) > 1, "attrgetter of one name returns the value, not a tuple"

    def __getstate__(self):
        return get(self)

    def __setstate__(self, state):
        for name, value in zip(names, state):
            put(self, name, value)

    cls.__getstate__, cls.__setstate__ = __getstate__, __setstate__
    return cls


@by_position
@dataclass(frozen=True, slots=True)
class Outcome:
    status: OutcomeStatus  # a str naming one is taken (files, workers) and checked
    exc_type: str = ""
    message: str = ""
    frame: str = ""  # innermost torch frame "path/file.py:function", stable across versions
    expr: str = ""  # the expression of a DDE
    #: Note [root cause] (program/interp.py): the program op whose instruction raised, and the
    #: torch op being dispatched when it did (e.g. "aten.slice.Tensor"), "" when unknown
    op: str = ""
    aten: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", OutcomeStatus(self.status))  # ValueError names an unknown one

    def short(self) -> str:
        if self.status == "ok":
            return "ok"
        msg = self.message.strip().splitlines()[0][:160] if self.message.strip() else ""
        return f"{self.status}: {self.exc_type}: {msg}"


@by_position
@dataclass(frozen=True, slots=True)
class Decision:
    expr: str
    answer: str
    how: str  # static | guard | assert | fallback | hint


@by_position
@dataclass(frozen=True, slots=True)
class Value:
    """One concrete output: a tensor (shape, dtype, flat data) or an int."""

    sort: str  # "tensor" | "int" | "other"
    shape: tuple[int, ...] = ()
    dtype: str = ""
    data: tuple[Any, ...] = ()

    def same_as(self, other: Value, compare_data: bool = True) -> bool:
        if (self.sort, self.shape, self.dtype) != (other.sort, other.shape, other.dtype):
            return False
        if not compare_data:
            return True
        return len(self.data) == len(other.data) and all(
            _same_num(a, b) for a, b in zip(self.data, other.data))

    def describe(self) -> str:
        if self.sort == "int":
            return f"int {self.data[0]}"
        body = ", ".join(str(x) for x in self.data[:8]) + (", ..." if len(self.data) > 8 else "")
        return f"{self.dtype}{list(self.shape)} [{body}]"


def _same_num(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= 1e-5 * max(1.0, abs(a), abs(b))
    return a == b


@by_position
@dataclass(frozen=True, slots=True)
class RunResult:
    ok: bool
    error: str = ""  # "ExceptionType: first line"
    values: tuple[Value, ...] = ()
    frame: str = ""
    #: `family.op` of the program's instruction that raised, where a tracer named it (Note [user
    #: line]: a call of torch.compile that recompiled and failed while tracing), "" when unknown
    at: str = ""


@by_position
@dataclass(frozen=True, slots=True)
class ReplayRecord:
    """The artifact and the reference semantics run on one fresh input."""

    inputs: tuple[InputSpec, ...]
    accepted: bool  # the artifact's guards accept these inputs
    reference: RunResult
    artifact: RunResult | None  # None when the guards rejected the input
    #: why the artifact's own contract (range constraints, guards, 0/1 assumption) excludes
    #: this input ("" inside it); then `accepted` is False and `artifact` is what the artifact
    #: did when run anyway (the contract oracle, shapefuzz/oracles/contract.py)
    outside: str = ""
    #: Note [root cause] on this input: Observation.diverges evaluated under the replay's
    #: binding, filled only when the artifact disagrees with eager here
    diverges: tuple[str, ...] = ()


def compare_runs(ref: RunResult, art: RunResult, undefined: frozenset[int]) -> tuple[str, str, str] | None:
    """(symptom, key, explanation) when the artifact disagrees with the reference, else None.
    `key` is the stable part of the signature (exception type and torch frame, or output's sort).
    Here, below systems and oracles, because both compare runs: eager agreement and replay
    (oracles), and a system confirming a z3 counter-model or choosing a compiled call's
    reference (Note [counterexample replay], Note [branch contract])."""
    if ref.ok and not art.ok:
        etype, at = art.error.split(":", 1)[0], f":at={art.at}" if art.at else ""
        return "error-where-eager-succeeds", f"{etype}@{art.frame}{at}", f"eager succeeded; traced raised {art.error}"
    if not ref.ok and art.ok:
        etype = ref.error.split(":", 1)[0]
        return "accepts-invalid", etype, f"eager raised {ref.error}; traced returned normally"
    if not ref.ok:
        return None
    if len(ref.values) != len(art.values):
        return "wrong-arity", "", f"eager returned {len(ref.values)} values, traced {len(art.values)}"
    for k, (a, b) in enumerate(zip(ref.values, art.values)):
        if not a.same_as(b, compare_data=False):
            return "wrong-shape", a.sort, f"output {k}: eager {a.describe()}, traced {b.describe()}"
        if k not in undefined and not a.same_as(b):
            return "wrong-value", a.sort, f"output {k}: eager {a.describe()}, traced {b.describe()}"
    return None


@by_position
@dataclass(frozen=True, slots=True)
class SmtCheck:
    """One z3 verdict a system recorded on its own decisions (shapefuzz.systems.claims); the
    soundness oracle (shapefuzz.oracles.soundness) turns the confirmed ones into findings."""

    oracle: str  # static-soundness | guard-soundness | spurious-dde | hint-sanity
    decision: int  # index into Observation.decisions (-1: the DDE, or a guard)
    claim: str
    status: str  # unsat | sat | unknown | timeout | premature (| deserved: a DDE sat both ways)
    reason: str = ""
    model: tuple[tuple[str, int], ...] = ()
    replay: Any = None  # tensor programs: the ReplayRecord of the model's input
    alt_values: tuple[int, ...] | None = None  # question programs: the model as leaf values
    confirmed: bool = False
    why: str = ""  # how the replay confirmed it (or why not)
    elapsed_ms: float = 0.0


#: the performance rule (superlinear): how far above the family's order the growth must be, and
#: the least CPU seconds / expression characters at the largest n that can show it (sizes are
#: exact, times are not: the size's floor only keeps out what nobody would act on)
ORDER_MARGIN = 0.5
TIME_FLOOR_S = 0.25
SIZE_FLOOR = 1000
#: the share of the largest member that must be growth beyond linear (not a slow moment's)
EXCESS_SHARE = 0.15


def growth_order(ns, ys) -> float:
    """The order of ys's growth at the largest ns, from its last two increments: 1 when each
    added copy costs the same (linear), 2 when an added copy costs in proportion to n
    (quadratic). Increments, not values: a fixed cost (the ShapeEnv, make_fx's set-up) weighs
    on every member alike and cancels, where it would flatten a fit of log y over log n. 0 when
    an increment is not positive (no growth to measure)."""
    (n0, n1, n2), (y0, y1, y2) = ns[-3:], ys[-3:]
    if y1 <= y0 or y2 <= y1:
        return 0.0
    per_copy = ((y2 - y1) / (n2 - n1)) / ((y1 - y0) / (n1 - n0))
    return 1.0 + math.log(per_copy) / math.log((n2 + n1) / (n1 + n0))


def superlinear(ns, ys, expected, margin, floor) -> bool:
    """ys grows with ns faster than order `expected` (1: linear): its growth order is at least
    `margin` above, the largest member exceeds `floor`, and what it has beyond the line through
    the two members before it is at least EXCESS_SHARE of it (noise in a small member can tilt
    the order, not add a seventh to a large one)."""
    (n0, n1, n2), (y0, y1, y2) = ns[-3:], ys[-3:]
    excess = y2 - (y1 + (y1 - y0) * (n2 - n1) / (n1 - n0))
    return (growth_order(ns, ys) >= expected + margin and y2 >= floor and excess >= EXCESS_SHARE * y2)


def superlinear_kinds(ns, cpu_s, sizes, expected, margin) -> list[str]:
    """The performance oracle's finding kinds that hold for a family: its CPU time and its size,
    each against its own floor (the one rule: the oracle, the measurement and repro.py read it)."""
    return [kind for kind, ys, floor in (("superlinear-time", cpu_s, TIME_FLOOR_S),
                                         ("superlinear-size", sizes, SIZE_FLOOR))
            if superlinear(ns, ys, expected, margin, floor)]


@by_position
@dataclass(frozen=True, slots=True)
class Observation:
    system: str
    config: str
    outcome: Outcome
    decisions: tuple[Decision, ...] = ()
    guards: tuple[str, ...] = ()
    asserts: tuple[str, ...] = ()
    replacements: tuple[tuple[str, str], ...] = ()
    ranges: tuple[tuple[str, str], ...] = ()
    out_exprs: tuple[str, ...] = ()  # per output: "[s0, u0//2]" or "2*u0" (SymInt output)
    binding: tuple[tuple[str, int], ...] = ()
    out_eval: tuple[str, ...] = ()  # out_exprs evaluated under binding ("" when not evaluable)
    fallback_branches: tuple[int, ...] = ()  # branches the trace sent to the general arm
    reference: RunResult | None = None  # eager with those branches forced (Note [branch contract])
    artifact: RunResult | None = None  # the traced artifact on the original inputs
    replays: tuple[ReplayRecord, ...] = ()
    #: Note [root cause]: the first instruction whose symbolic result, evaluated under the
    #: binding, differs from eager's: (op, family, symbolic expr, evaluated, eager), else ()
    diverges: tuple[str, ...] = ()
    #: what the system could assume, as it learned it: (at, origin, expr) is known to decisions
    #: with index >= at (Note [axioms] in shapefuzz.systems.claims)
    axioms: tuple[tuple[int, str, str], ...] = ()
    smt: tuple[SmtCheck, ...] = ()  # z3 verdicts on the decisions
    elapsed_s: float = 0.0
    log: tuple[str, ...] = field(default=())
    #: Note [typed evidence] (shapefuzz.systems.evidence): each oracle's own data, by its name
    #: (the history oracle's replays: shapefuzz.systems.evidence.history; the truth oracle's
    #: question replays, the metamorphic oracle's echoes, the recompile oracle's calls, the
    #: performance oracle's families scaled by n: their modules there), set by `record`
    evidence: Evidence = NO_EVIDENCE


# Note [file keys]: a field renamed in the code keeps its key in the files that hold it, which
# external checks and the committed corpus read: a case's observation in case.json writes
# Outcome.status and Value.sort as "kind", the key they had before the rename (and a finding's
# symptom is "kind" in case.json, report.json and campaign-state.json: oracles/findings.py)
FILE_KEYS = {Outcome: {"status": "kind"}, Value: {"sort": "kind"}}


def to_jsonable(obj: Any) -> Any:
    """Dataclasses to JSON-ready dicts (keys as Note [file keys] says); non-finite floats become
    strings."""
    if hasattr(obj, "__dataclass_fields__"):
        keys = FILE_KEYS.get(type(obj), {})
        return {keys.get(f.name, f.name): to_jsonable(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, dict):
        return {k: to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return repr(obj)
    return obj
