"""The truth oracle's evidence (shapefuzz.oracles.truth; Note [typed evidence]): a question
program's answers replayed on other values of its symbols (shapefuzz.systems.qreplay), recorded
by the torch-env system when the program ran; the A/B oracle compares the two builds' replays
of the same values."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.systems.evidence.base import declare, of
from shapefuzz.systems.observation import by_position

__all__ = ["QReplay", "QuestionReplays", "question_replays"]


@by_position
@dataclass(frozen=True, slots=True)
class QReplay:
    values: tuple[int, ...]  # new literal of each backed/unbacked instruction, in order
    accepted: bool  # every guard and deferred assert holds under these values
    out_eval: tuple[str, ...]  # each value's expression under the new binding ("" if unknown)
    why: str = ""


@declare("truth")
@dataclass(frozen=True, slots=True)
class QuestionReplays:
    replays: tuple[QReplay, ...] = ()


def question_replays(obs) -> tuple[QReplay, ...]:
    """The replays an observation holds (none for a tensor program's)."""
    ev = of(obs, QuestionReplays)
    return ev.replays if ev is not None else ()
