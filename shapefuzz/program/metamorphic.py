"""Metamorphic variants of question programs (DESIGN oracle 8): an answer must not depend on a
redundant question asked before it, nor on whether the same facts are replayed into a fresh
environment in a process whose global caches are already warm."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.program.questions import QInstr, QProgram

__all__ = ["Echo", "ask_map", "echo_of", "redundant"]


@dataclass(frozen=True, slots=True)
class Echo:
    """What a variant run said, reduced to what must not change."""

    label: str  # "fresh" | "redundant"
    outcome: str
    answers: tuple[tuple[str, str], ...]  # (answer, how) per ask, in the variant's order
    out_eval: tuple[str, ...]


def redundant(program: QProgram) -> QProgram:
    """Before every question, the same question asked by statically_known_true, which never
    guards, never asserts and never raises."""
    out: list[QInstr] = []
    for ins in program.instrs:
        if ins.op == "ask":
            out.append(QInstr("ask", ("statically_known_true",) + ins.args[1:]))
        out.append(ins)
    return QProgram(tuple(out))


def ask_map(program: QProgram) -> list[int]:
    """Index, in redundant(program)'s questions, of each original question."""
    return [2 * k + 1 for k in range(len(program.asks()))]


def echo_of(label: str, obs) -> Echo:
    return Echo(label, obs.outcome.status, tuple((d.answer, d.how) for d in obs.decisions), obs.out_eval)
