"""Oracle 11, contract [high]: an artifact run on an input outside its own contract must reject
it cleanly (a guard or runtime-assert failure) or agree with eager on it.

The systems judge the contract by one rule (graph_facts.contract_violation: the trace's guards,
the >= 2 that 0/1 specialization assumed for a backed symbol, its ranges) and, where the
artifact checks its inputs itself, run it anyway (Note [export contract] in systems/export.py;
compile: a new size 0/1 under backed_size_oblivious), recording why the input is outside in
ReplayRecord.outside. A graph that Dynamo's own guards reused outside its facts is the recompile
oracle's `unsound-reuse` (the same facts, systems/graph_facts.py) and, when it also computes
wrongly, the replay oracle's: such a replay is `accepted`, and this oracle leaves it alone.

The signature carries the contract clause the input broke (`zero-one`, `range`, `guard`,
`shape`, `size-oblivious`): torch documents some of them as not checked at run time (an
exported program does not check the >= 2 of 0/1 specialization), so triage can mark that clause
known by design (shapefuzz/cases/known_issues.json) without hiding the others."""

from __future__ import annotations

from shapefuzz.oracles.agreement import signature
from shapefuzz.oracles.base import Oracle, register
from shapefuzz.oracles.findings import Finding, Severity
from shapefuzz.systems.observation import Observation, compare_runs

__all__ = ["ORACLE", "contract"]

ORACLE = "contract"


def clause(outside: str) -> str:
    """The contract clause an input broke, from ReplayRecord.outside ("class: why")."""
    head = outside.split(":", 1)[0].strip()
    return head if head and " " not in head else "other"


def contract(obs: Observation, undefined: frozenset[int]) -> list[Finding]:
    if obs.outcome.status != "ok":
        return []
    for i, rec in enumerate(obs.replays):
        if not rec.outside or rec.accepted or rec.artifact is None or not rec.artifact.ok:
            continue  # inside the contract (the replay oracle's), or rejected: correct
        diff = compare_runs(rec.reference, rec.artifact, undefined)
        if diff is None:
            continue  # outside the contract, but right
        symptom, key, why = diff
        sizes = ", ".join(f"{s.name}{list(s.shape)}" for s in rec.inputs)
        return [Finding(ORACLE, Severity.HIGH, obs.system, obs.config, symptom,
                        f"{obs.system} artifact runs on an input outside its own contract "
                        f"({clause(rec.outside)}) and disagrees with eager ({symptom})",
                        f"replay input {i} ({sizes}) is outside the contract: {rec.outside}\n"
                        f"the artifact raised no error; {why}",
                        signature(ORACLE, symptom, obs, clause(rec.outside), key), i)]
    return []


ORACLE_OBJ = register(Oracle(
    ORACLE, Severity.HIGH, "an artifact run on an input outside its own contract (range constraints, "
    "guards, 0/1 assumption) must reject it with a guard or assert failure, or agree with eager",
    lambda c: contract(c.obs, c.undefined), kinds=("tensors",), per_observation=True, rank=25))
