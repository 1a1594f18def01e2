"""The z3 soundness oracle (DESIGN.md oracles 3, 4 and 7, and hint sanity): a pure function over
what a system recorded. The system asked the prover about its own claims while its artifact was
alive and replayed each counter-model to confirm it (shapefuzz.systems.claims: Note [axioms],
Note [counterexample replay]); the SmtCheck records it left on Observation.smt are all this
oracle reads. A confirmed refutation (and a DDE the facts decide) is a finding; unknown and
timeout are verdicts, counted in the report, never findings and never passes.
"""

from __future__ import annotations

from shapefuzz.oracles.base import Oracle, register
from shapefuzz.oracles.findings import Finding

__all__ = ["ORACLES", "smt_findings", "verdict_counts"]

ORACLES = ("static-soundness", "guard-soundness", "spurious-dde", "hint-sanity")

_SEVERITY = {"static-soundness": "critical", "guard-soundness": "critical", "spurious-dde": "medium",
             "hint-sanity": "critical"}


def smt_findings(program, obs) -> list[Finding]:
    """A finding per confirmed refutation (and per spurious DDE). The replay input of a tensor
    program's finding is obs.smt[i].replay; run.py reads it through replay_of()."""
    from shapefuzz.oracles.agreement import signature

    out = []
    for i, c in enumerate(getattr(obs, "smt", ())):
        if c.oracle == "spurious-dde":
            # ref's range reasoning is deliberately smaller than torch's (it has no rules for
            # PythonMod equalities, for one): its missed proofs are not torch's, and the system
            # differential already shows where ref raises and torch does not
            if c.status != "unsat" or obs.system == "ref":
                continue
            kind = "spurious-dde"
            detail = f"data-dependent error on {c.claim}, but {c.reason} (facts: {_facts_text(obs)})"
        elif c.status == "sat" and c.confirmed:
            kind = {"static-soundness": "unsound-static", "guard-soundness": "unsound-guards",
                    "hint-sanity": "guard-false-at-hint"}[c.oracle]
            d = obs.decisions[c.decision] if 0 <= c.decision < len(obs.decisions) else None
            what = f"decision {c.decision}: {d.expr} -> {d.answer} ({d.how})" if d else c.claim
            detail = (f"{what}\nclaim: {c.claim}\nz3 model: {dict(c.model)}\nconfirmed: {c.why}\n"
                      f"facts: {_facts_text(obs)}")
        else:
            continue
        shape = _shape(c.claim)
        out.append(Finding(c.oracle, _SEVERITY[c.oracle], obs.system, obs.config, kind,
                           f"{obs.system} ({obs.config}): {kind}: {c.claim}"[:200], detail,
                           signature(c.oracle, kind, obs, shape), i))
    return out[:1] + [f for f in out[1:] if f.signature != out[0].signature][:2]


def _facts_text(obs) -> str:
    return "; ".join(f"[{at}] {kind}: {e}" for at, kind, e in obs.axioms)[:3000]


def _shape(claim: str) -> str:
    """The claim's relation and the functions in it (Eq[FloorDiv,Mod]): stable across programs
    that hit the same wrong rule, unlike the claim text."""
    import re

    fns = sorted(set(re.findall(r"([A-Za-z_]+)\(", claim)) - {"Eq", "Ne", "Not"})
    rel = next((r for r, t in (("Ne", "Ne("), ("Eq", "Eq("), ("Not", "Not("), ("<=", "<="),
                               (">=", ">="), ("<", "<"), (">", ">")) if t in claim), "?")
    return f"{rel}[{','.join(fns)}]"


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
    "z3-soundness", "critical", "every decision taken without a guard must follow from the facts, "
    "guards and asserts must imply what the trace relied on, and a data-dependent error is raised "
    "only on what the facts leave open (z3)", lambda c: smt_findings(c.program, c.obs),
    per_observation=True, rank=60, replay_input=_smt_replay_input, emits=ORACLES,
    compares_by_name=(("spurious-dde", "proof"),), helps=(
        ("static-soundness", "a decision taken without a guard or assert must follow from what is "
         "known (z3 found values where it is false; the input below is one)"),
        ("guard-soundness", "guards and asserts must imply every decision the trace depends on (z3 "
         "found values they accept where a decision is false; the input below is one)"),
        ("hint-sanity", "every guard must hold at the hints it was recorded with"),
        ("spurious-dde", "a data-dependent error must not be raised on an expression the known "
         "facts decide (z3 proved it from them)"))))
