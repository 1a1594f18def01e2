"""Oracle 8, metamorphic, for question programs: a fresh replay of the same program gives the
same observation (outcome, answers and how, values); with a redundant statically_known_true
before every question, each original question keeps its outcome class and its answer, except
that a claim may become its fallback (a fallback is always allowed)."""

from __future__ import annotations

from shapefuzz.oracles.agreement import signature
from shapefuzz.oracles.base import Compares, Oracle, register
from shapefuzz.oracles.findings import Finding, Severity
from shapefuzz.program.metamorphic import ask_map, echo_of
from shapefuzz.systems.evidence import of
from shapefuzz.systems.evidence.metamorphic import Echo, Echoes
from shapefuzz.systems.observation import Observation

__all__ = ["echoes_of", "metamorphic"]

ORACLE = "metamorphic"


def echoes_of(obs: Observation) -> tuple[Echo, ...]:
    """What each variant run said (Note [typed evidence])."""
    ev = of(obs, Echoes)
    return ev.echoes if ev is not None else ()


def metamorphic(program, obs: Observation) -> list[Finding]:
    echoes = echoes_of(obs)
    if obs.outcome.status in ("crash", "timeout") or not echoes:
        return []
    base = echo_of("base", obs)
    for e in echoes:
        why = _fresh_diff(base, e) if e.label == "fresh" else _redundant_diff(program, base, e)
        if why:
            return [Finding(ORACLE, Severity.MEDIUM, obs.system, obs.config, e.label,
                            f"{obs.system}: answers change under a {e.label} replay", why,
                            signature(ORACLE, e.label, obs))]
    return []


def _fresh_diff(base, e) -> str:
    if (base.outcome, base.answers, base.out_eval) != (e.outcome, e.answers, e.out_eval):
        return (f"first run: {base.outcome} {list(base.answers)} {list(base.out_eval)}\n"
                f"fresh env, same process: {e.outcome} {list(e.answers)} {list(e.out_eval)}")
    return ""


def _redundant_diff(program, base, e) -> str:
    if base.outcome != e.outcome:
        return f"outcome {base.outcome}, with redundant questions {e.outcome}"
    m = ask_map(program)
    for k, (a, how) in enumerate(base.answers):
        if m[k] >= len(e.answers):
            break
        b, how_b = e.answers[m[k]]
        if a != b and "fallback" not in (how, how_b):
            return f"question {k}: {a} ({how}); after a redundant statically_known_true: {b} ({how_b})"
    return ""


ORACLE_OBJ = register(Oracle(
    ORACLE, Severity.MEDIUM, "the same questions asked again (fresh env, or after redundant questions) must "
    "get the same answers", lambda c: metamorphic(c.program, c.obs), kinds=("questions",),
    per_observation=True, rank=50, compares=Compares.RUNS))
