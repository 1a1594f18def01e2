"""Oracle 9, performance [medium], one torch alone: a program's family scaled by n (Note
[scaling family] in shapefuzz/systems/scaling.py: the program n times over, copies that share
nothing) must cost the shape system n times the work. A finding when the trace's CPU time, or
its guards' and asserts' size, grows with an order ORDER_MARGIN above the family's own (and at
the largest n is above its floor, with EXCESS_SHARE of it beyond the line: `superlinear_kinds`
in systems/observation.py). Its detail carries the measurements and a cProfile of the hottest torch functions at the largest n; its repro.py
measures the family again in a fresh interpreter (shapefuzz/repro/scaling.py) and exits 1 when
the rule still holds.

An A/B campaign compares the candidate's and the baseline's time per program (oracles/ab.py
`slowdown`); this oracle needs no baseline: it compares a torch with itself at several sizes,
so an accidentally quadratic pass is found on the torch a user runs today."""

from __future__ import annotations

from shapefuzz.oracles.agreement import signature
from shapefuzz.oracles.base import Compares, Oracle, register
from shapefuzz.oracles.findings import Finding, Severity
from shapefuzz.systems.evidence import of
from shapefuzz.systems.evidence.performance import Scaling, ScalingEvidence
from shapefuzz.systems.observation import ORDER_MARGIN, Observation, growth_order, superlinear_kinds

__all__ = ["ORACLE", "families", "scaling_findings"]

ORACLE = "performance"


def _table(s: Scaling) -> str:
    rows = [f"n = {n}: {c:.3f} s CPU, expression size {z}" for n, c, z in zip(s.ns, s.cpu_s, s.sizes)]
    return "\n".join(rows + [f"(family {s.family!r}, expected order {s.expected_order:g}; "
                             f"least CPU time over {s.rounds} interleaved round(s))"])


def _finding(obs: Observation, s: Scaling, symptom: str, what: str, ys) -> Finding:
    order = growth_order(s.ns, ys)
    detail = _table(s) + (f"\n\nhottest torch functions at n = {s.profile_n or s.ns[-1]} (cProfile, by own time):\n"
                          + s.profile if s.profile else "")
    return Finding(ORACLE, Severity.MEDIUM, obs.system, obs.config, symptom,
                   f"{obs.system}: {what} grows with order {order:.1f} over {s.family} of the "
                   f"program (n = {', '.join(map(str, s.ns))}); expected {s.expected_order:g}",
                   detail, signature(ORACLE, symptom, obs), evidence=ScalingEvidence((s,)))


def families(obs: Observation) -> tuple[Scaling, ...]:
    """The families make_fx measured on `obs` (Note [typed evidence])."""
    ev = of(obs, ScalingEvidence)
    return ev.families if ev is not None else ()


def scaling_findings(obs: Observation) -> list[Finding]:
    return [_finding(obs, s, symptom, *_SERIES[symptom](s)) for s in families(obs)
            for symptom in superlinear_kinds(s.ns, s.cpu_s, s.sizes, s.expected_order, ORDER_MARGIN)]


#: finding symptom -> (what grows, as the summary says it; its measurements)
_SERIES = {"superlinear-time": lambda s: ("trace time", s.cpu_s),
           "superlinear-size": lambda s: ("the guards' and asserts' size", s.sizes)}


ORACLE_OBJ = register(Oracle(
    ORACLE, Severity.MEDIUM, "a program run n times over (copies sharing nothing) must cost the shape "
    "system order n: trace CPU time and guard/assert size", lambda c: scaling_findings(c.obs),
    kinds=("tensors",), per_observation=True, rank=90, compares=Compares.SIZES, repro_family="scaling",
    evidence=ScalingEvidence))
