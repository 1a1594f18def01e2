"""The z3 soundness oracle (DESIGN.md oracles 3, 4 and 7, and hint sanity): a pure function over
what a system recorded. The system asked the prover about its own claims while its artifact was
alive and replayed each counter-model to confirm it (shapefuzz.systems.claims: Note [axioms],
Note [counterexample replay]); the SmtCheck records it left on Observation.smt are all this
oracle reads. A confirmed refutation is a finding (a DDE the facts decide is the spurious-dde
oracle's, shapefuzz.oracles.spurious_dde); unknown and
timeout are verdicts, counted in the report, never findings and never passes.
"""

from __future__ import annotations

from shapefuzz.oracles.agreement import signature
from shapefuzz.oracles.base import Oracle, register
from shapefuzz.oracles.findings import Finding, Severity

__all__ = ["ORACLES", "smt_findings", "verdict_counts"]

ORACLES = ("static-soundness", "guard-soundness", "hint-sanity")

_SEVERITY = {"static-soundness": Severity.CRITICAL, "guard-soundness": Severity.CRITICAL, "hint-sanity": Severity.CRITICAL}


def smt_findings(program, obs) -> list[Finding]:
    """A finding per confirmed refutation (a DDE the facts decide is shapefuzz.oracles.spurious_dde's
    finding, from the same records). The replay input of a tensor
    program's finding is obs.smt[i].replay; run.py reads it through replay_of()."""
    out = []
    for i, c in enumerate(getattr(obs, "smt", ())):
        if c.oracle == "spurious-dde":
            continue  # its own oracle's verdict (shapefuzz.oracles.spurious_dde)
        if c.status == "sat" and c.confirmed:
            symptom = {"static-soundness": "unsound-static", "guard-soundness": "unsound-guards",
                    "hint-sanity": "guard-false-at-hint"}[c.oracle]
            d = obs.decisions[c.decision] if 0 <= c.decision < len(obs.decisions) else None
            what = f"decision {c.decision}: {d.expr} -> {d.answer} ({d.how})" if d else c.claim
            detail = (f"{what}\nclaim: {c.claim}\nz3 model: {dict(c.model)}\nconfirmed: {c.why}\n"
                      f"facts: {_facts_text(obs)}")
        else:
            continue
        shape = _claim_bucket(c.claim, obs) or _shape(c.claim)
        out.append(Finding(c.oracle, _SEVERITY[c.oracle], obs.system, obs.config, symptom,
                           f"{obs.system} ({obs.config}): {symptom}: {c.claim}"[:200], detail,
                           signature(c.oracle, symptom, obs, shape), i))
    return out[:1] + [f for f in out[1:] if f.signature != out[0].signature][:2]


def _facts_text(obs) -> str:
    return "; ".join(f"[{at}] {origin}: {e}" for at, origin, e in obs.axioms)[:3000]


def _shape(claim: str) -> str:
    """The claim's relation and the functions in it (Eq[FloorDiv,Mod]): stable across programs
    that hit the same wrong rule, unlike the claim text."""
    import re

    fns = sorted(set(re.findall(r"([A-Za-z_]+)\(", claim)) - {"Eq", "Ne", "Not"})
    rel = next((r for r, t in (("Ne", "Ne("), ("Eq", "Eq("), ("Not", "Not("), ("<=", "<="),
                               (">=", ">="), ("<", "<"), (">", ">")) if t in claim), "?")
    return f"{rel}[{','.join(fns)}]"


def _claim_bucket(claim: str, obs) -> str:
    """The assumption torch made for a wrong claim (Note [root cause bucket]), "" when none of
    the listed ones explains it."""
    from shapefuzz.oracles.root_cause import (  # lazy: registry import stays sympy-free
        assumption_bucket,
        knowledge,
    )

    return assumption_bucket(claim, knowledge(obs))


def verdict_counts(observations) -> dict[str, int]:
    from collections import Counter

    c: Counter = Counter()
    for o in observations:
        for chk in getattr(o, "smt", ()):
            c[chk.status] += 1
    return dict(c)


def _smt_replay_input(finding: Finding, obs, kind: str) -> tuple:
    """The counter-model's input (tensor programs) or values (question programs)."""
    c = obs.smt[finding.replay_index]
    return (c.replay.inputs if c.replay is not None else None), c.alt_values


ORACLE_OBJ = register(Oracle(
    "z3-soundness", Severity.CRITICAL, "every decision taken without a guard must follow from the facts, "
    "guards and asserts must imply what the trace relied on (z3)", lambda c: smt_findings(c.program, c.obs),
    per_observation=True, rank=60, replay_input=_smt_replay_input, emits=ORACLES, helps=(
        ("static-soundness", "a decision taken without a guard or assert must follow from what is "
         "known (z3 found values where it is false; the input below is one)"),
        ("guard-soundness", "guards and asserts must imply every decision the trace depends on (z3 "
         "found values they accept where a decision is false; the input below is one)"),
        ("hint-sanity", "every guard must hold at the hints it was recorded with"))))
