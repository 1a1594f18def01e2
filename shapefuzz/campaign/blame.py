"""The end phase's blame of each finding (Note [blame] in shapefuzz/oracles/blame.py)."""

from __future__ import annotations

from shapefuzz.campaign.evaluate import jobs_for
from shapefuzz.oracles.blame import blame
from shapefuzz.oracles.findings import TORCH_SYSTEMS
from shapefuzz.systems import accepts

__all__ = ["blames_of"]


def blames_of(bugs: dict, run_many, failures) -> dict[str, str]:
    """Signature -> ref's view of each torch finding's smallest program; one that raises is that
    finding's failure, and the others are still blamed (Note [step failures], confirming.py)."""
    return {sig: failures.run("report", sig, lambda bug=bug: _blame(bug, run_many)) or ""
            for sig, bug in bugs.items()}


def _blame(bug, run_many) -> str:
    ref = None
    if bug.finding.system in TORCH_SYSTEMS and accepts("ref", bug.program.kind):
        jobs = [j for j in jobs_for(bug.program, (("ref", "default"),), 0, 0) if j.system == "ref"]
        ref = run_many(jobs)[0]
    return blame(bug.finding, bug.program, ref, bug.evaluation.eager)
