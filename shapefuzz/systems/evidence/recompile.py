"""The recompile oracle's evidence (shapefuzz.oracles.recompile; Note [typed evidence]): the
compile system's record of each call in a program's call sequence (Note [call sequence] in
shapefuzz.systems.compile)."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.systems.evidence.base import declare

__all__ = ["CallRecord", "CallSequence"]


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call of a compiled program in its call sequence (Note [call sequence])."""

    index: int
    shapes: tuple[tuple[int, ...], ...]
    outcome: str  # ok | rejected (runtime assert) | dde | constraint | error
    message: str = ""
    new_graphs: int = 0  # graphs compiled during this call (0: a cached entry was reused)
    graphs_run: tuple[int, ...] = ()  # ids of the graphs that ran, in order
    reuse_violation: str = ""  # a graph ran on inputs its own guards/ranges reject
    reusable: int = -1  # compiled anyway, though graph <reusable>'s facts accept these inputs
    reusable_why: str = ""
    silent_specialization: str = ""  # a mark_dynamic dim pinned to a constant without an error
    stayed_static: str = ""  # automatic dynamic: a dim seen to vary was compiled static again
    marked_dynamic: tuple[tuple[int, int], ...] = ()  # (input, dim) marked dynamic for this call
    guard_failures: tuple[str, ...] = ()  # Dynamo's reasons for recompiling at this call


@declare("recompile")
@dataclass(frozen=True, slots=True)
class CallSequence:
    calls: tuple[CallRecord, ...] = ()
