"""The history oracle's evidence (shapefuzz.oracles.history; Note [typed evidence]): one record
per question a system asked again in a fresh ShapeEnv. Recorded by the torch-env system (Note
[history replay] in shapefuzz.systems.question_history) and by make_fx / export traces (Note [tensor
history replay] in shapefuzz.systems.tensor_history); a history finding carries the one record
that shows it, which its repro forms read."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.systems.evidence.base import declare
from shapefuzz.systems.observation import by_position

__all__ = ["HistoryEvidence", "HistoryRecord"]


@by_position
@dataclass(frozen=True, slots=True)
class HistoryRecord:
    question: int  # index among the program's questions (tensor traces: among the records)
    expr: str
    live: tuple[str, str]  # (answer, how); ("", "dde") for a data-dependent error
    fresh: tuple[str, str]  # the same in the fresh env; ("", "error") when its replay failed
    why: str = ""  # the fresh run's exception, when there was one
    #: tensor traces (shapefuzz.systems.tensor_history): the answer at the run's values ('' when
    #: not known; question programs carry their truth) and the public call that asked it
    concrete: str = ""
    mode: str = ""


@declare("history")
@dataclass(frozen=True, slots=True)
class HistoryEvidence:
    """The replayed questions of one observation; a finding's holds the one it is about."""

    records: tuple[HistoryRecord, ...] = ()
