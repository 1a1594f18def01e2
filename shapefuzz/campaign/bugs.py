"""FoundBug: what a campaign keeps of one finding, in a module of its own because the engine
makes them and the checkpoint (which the engine imports) restores them."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.campaign.evaluate import Evaluation
from shapefuzz.oracles.findings import Finding
from shapefuzz.program import Program

__all__ = ["FoundBug"]


@dataclass
class FoundBug:
    finding: Finding
    program: Program
    evaluation: Evaluation | None  # None when restored from a checkpoint (already saved)
    count: int = 1
    first_s: float = 0.0
    first_program: int = 0
    shrunk: bool = False
    error: str = ""  # the traceback of a shrink that raised (Note [step failures], confirming.py)
