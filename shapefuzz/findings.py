"""Findings: what oracles produce. A finding is a value, never an exception (STYLE 4)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Finding", "SEVERITIES"]

SEVERITIES = ("critical", "high", "medium", "low")


@dataclass(frozen=True, slots=True)
class Finding:
    oracle: str
    severity: str
    system: str
    config: str
    kind: str  # e.g. wrong-value, accepts-invalid, trace-error
    summary: str  # one line
    detail: str  # what differs, as a user reads it
    signature: str  # stable across runs and seeds: the dedupe key
    replay_index: int = -1  # -1: the program's own inputs; else the index of the replay input
