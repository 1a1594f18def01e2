"""Oracle 2, replay: the traced artifact run on fresh inputs. When its guards accept an input
and no runtime assert fires, it must agree with eager's reference semantics on that input."""

from __future__ import annotations

from shapefuzz.oracles.agreement import first_wrong, root_signature, signature
from shapefuzz.oracles.base import Oracle, register
from shapefuzz.oracles.findings import Finding, Severity
from shapefuzz.systems.observation import Observation, compare_runs

__all__ = ["replay_agreement"]

ORACLE = "replay"


def replay_agreement(obs: Observation, undefined: frozenset[int]) -> list[Finding]:
    if obs.outcome.status != "ok":
        return []
    for i, rec in enumerate(obs.replays):
        if not rec.accepted or rec.artifact is None or _same_failure(obs.artifact, rec.artifact):
            continue
        diff = compare_runs(rec.reference, rec.artifact, undefined)
        if diff is None:
            continue
        symptom, key, why = diff
        sizes = ", ".join(f"{s.name}{list(s.shape)}" for s in rec.inputs)
        # Note [root cause]: bucketed by the first instruction that goes wrong on this input
        # (else on the traced inputs), as eager agreement buckets the same bug
        root = rec.diverges or obs.diverges
        first = f"\n{first_wrong(root)}" if root else ""
        return [Finding(ORACLE, Severity.CRITICAL, obs.system, obs.config, symptom,
                        f"{obs.system} artifact passes its guards on a new input but disagrees with eager ({symptom})",
                        f"replay input {i} ({sizes}): {why}{first}",
                        root_signature(ORACLE, obs, root) if root else signature(ORACLE, symptom, obs, key), i)]
    return []


def _same_failure(traced, replayed) -> bool:
    """The artifact fails on a new input as it failed on the inputs it was traced with (a
    torch.compile whose first call raised compiles again and raises again): that is the one
    failure eager agreement reports, not a second finding about guards."""
    return (traced is not None and not traced.ok and not replayed.ok
            and (traced.error.split(":")[0], traced.frame) == (replayed.error.split(":")[0], replayed.frame))


ORACLE_OBJ = register(Oracle(
    ORACLE, Severity.CRITICAL, "when the traced artifact's guards accept a new input and no runtime assert "
    "fires, it must behave as eager on it", lambda c: replay_agreement(c.obs, c.undefined),
    kinds=("tensors",), per_observation=True, rank=20))
