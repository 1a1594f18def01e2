"""A campaign's JSON checkpoint (Note [resume] in engine.py): what it holds, and resuming from
it with a clear error when it does not fit."""

from __future__ import annotations

from typing import Any

from shapefuzz import BadInput
from shapefuzz.campaign.bugs import FoundBug
from shapefuzz.campaign.stats import CampaignStats
from shapefuzz.oracles.base import with_legacy_evidence
from shapefuzz.oracles.findings import Finding
from shapefuzz.program.kinds import load_program
from shapefuzz.systems.observation import to_jsonable

__all__ = ["STATE_SCHEMA", "ResumeError", "fingerprint", "restore", "state_of"]

STATE_SCHEMA = 1


class ResumeError(BadInput):
    """A saved campaign state cannot be resumed with these settings; the message says why."""


def fingerprint(cfg: Any) -> dict:
    """What must match for a checkpoint to be resumed: the same programs and targets."""
    # coverage feedback changes the rounds (Note [coverage feedback]); only named when on, so
    # the checkpoints of campaigns without it keep their fingerprint
    feedback = {"coverage_feedback": True} if getattr(cfg, "coverage_feedback", False) else {}
    return {"seed": cfg.seed, "targets": [list(t) for t in cfg.targets],
            "gen": to_jsonable(cfg.gen), "n_variants": cfg.n_variants, **feedback}


def state_of(camp: Any, finished: bool = False) -> dict:
    return {
        "schema": STATE_SCHEMA, "kind": "shapefuzz-campaign-state", "finished": finished,
        "fingerprint": fingerprint(camp.cfg), "round": camp.round, "pos": camp.pos,
        "pending_shrink": camp.pending_shrink, "deferred": camp.deferred, "elapsed_s": camp.elapsed(),
        "stats": camp.stats.to_json(),
        "bugs": [{"finding": to_jsonable(b.finding.to_json()), "program": b.program.to_json(),
                  "count": b.count, "first_s": b.first_s, "first_program": b.first_program,
                  "shrunk": b.shrunk, "error": b.error} for b in camp.bugs.values()],
    }


def restore(camp: Any, state: dict) -> None:
    try:
        _restore_unchecked(camp, state)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ResumeError(f"the saved campaign state is malformed ({type(e).__name__}: {e}); "
                          "remove campaign-state.json from --out to start afresh") from None


def _restore_unchecked(camp: Any, state: dict) -> None:
    if state.get("kind") != "shapefuzz-campaign-state" or state.get("schema") != STATE_SCHEMA:
        raise ResumeError("campaign-state.json is not a campaign state of this shapefuzz version; "
                          "use another --out")
    if state["fingerprint"] != fingerprint(camp.cfg):
        raise ResumeError("--out holds an unfinished campaign with other settings (seed, systems, "
                          "configs or generator); resume it with the same flags or use another --out")
    camp.round, camp.pos = int(state["round"]), int(state["pos"])
    camp.pending_shrink = state["pending_shrink"]
    camp.deferred = list(state.get("deferred", []))  # absent in a state saved before deferral
    camp.offset_s = float(state["elapsed_s"])
    camp.stats = CampaignStats.from_json(state["stats"])
    for b in state["bugs"]:
        f = with_legacy_evidence(Finding.from_json(b["finding"]))  # Note [evidence of older case files]
        camp.bugs[f.key] = FoundBug(f, load_program(b["program"]), None, int(b["count"]),
                                    float(b["first_s"]), int(b["first_program"]), bool(b["shrunk"]),
                                    str(b.get("error", "")))  # absent in a state saved before step failures
