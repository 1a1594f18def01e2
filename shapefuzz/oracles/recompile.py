"""Recompile behaviour of torch.compile over a call sequence (seeds 002 and 004), read from the
compile system's CallRecords (shapefuzz/systems/compile.py, Notes [call sequence] and
[graph facts]).

- unsound-reuse [critical]: a cached graph ran on inputs its own facts reject (a static size
  that differs, dims that shared a symbol no longer equal, a recorded guard false, a 0/1 value
  for a symbol assumed >= 2). A guard that lets a graph be reused where its decisions no longer
  hold is wrong whatever the values say.
- silent-specialization [medium]: a dim marked with mark_dynamic was compiled as a constant
  and torch raised no constraint violation.
- stayed-static [medium]: under automatic dynamic, a dim whose size differs from the first
  compile's was compiled static again (one dynamic graph after at most two compiles).
- extra-recompile [low]: a call compiled a new graph although an earlier graph's facts
  (guards, ranges, asserts) accept its inputs: by design at worst a wasted compile.

Wrong results after the recompile limit, or on any call, are the replay oracle's (critical)."""

from __future__ import annotations

from shapefuzz.oracles.base import Compares, Oracle, register
from shapefuzz.oracles.findings import Finding, Severity
from shapefuzz.systems.evidence import of
from shapefuzz.systems.evidence.recompile import CallRecord, CallSequence
from shapefuzz.systems.observation import Observation

__all__ = ["ORACLE", "calls_of", "recompile_behaviour"]

ORACLE = "recompile"

#: CallRecord field -> (symptom, severity, summary)
_CHECKS = (
    ("reuse_violation", "unsound-reuse", Severity.CRITICAL,
     "a cached compiled graph ran on inputs its own guards reject"),
    ("silent_specialization", "silent-specialization", Severity.MEDIUM,
     "a mark_dynamic dim was specialized without a constraint violation"),
    ("stayed_static", "stayed-static", Severity.MEDIUM,
     "automatic dynamic compiled a dim that varies as static again"),
    ("reusable_why", "extra-recompile", Severity.LOW,
     "a call recompiled although a cached graph's guards accept its inputs"),
)


def calls_of(obs: Observation) -> tuple[CallRecord, ...]:
    """The compile system's record of each call (Note [typed evidence])."""
    ev = of(obs, CallSequence)
    return ev.calls if ev is not None else ()


def recompile_behaviour(obs: Observation) -> list[Finding]:
    calls = calls_of(obs)
    if obs.system != "compile" or not calls:
        return []
    out = []
    for field, symptom, severity, summary in _CHECKS:
        rec = next((r for r in calls if getattr(r, field)), None)
        if rec is None:
            continue
        shapes = ", ".join(str(list(s)) for s in rec.shapes)
        history = "; ".join(f"call {r.index} {[list(s) for s in r.shapes]}: {r.outcome}, "
                            f"{r.new_graphs} new graph(s), ran {list(r.graphs_run)}"
                            for r in calls[: rec.index + 1])
        out.append(Finding(
            ORACLE, severity, obs.system, obs.config, symptom, f"compile ({obs.config}): {summary}",
            f"call {rec.index} (inputs {shapes}): {getattr(rec, field)}\ncalls: {history}",
            f"{ORACLE}:{symptom}:{obs.system}:{obs.config}", rec.index - 1))
    return out


ORACLE_OBJ = register(Oracle(
    ORACLE, Severity.CRITICAL, "torch.compile over a call sequence: a cached graph runs only where its own "
    "guards hold, and it recompiles no more than its guards require",
    lambda c: recompile_behaviour(c.obs), kinds=("tensors",), per_observation=True, rank=30,
    compares=Compares.GRAPHS))
