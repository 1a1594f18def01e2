"""Front-end differential (DESIGN oracle 6): the same program through make_fx, export (strict
and non-strict) and torch.compile must reach the same outcome class (ok / dde / constraint)
when the front-ends are asked the same question, i.e. when they declare the same dims dynamic:

- export:default (non-strict, Dim.DYNAMIC on non-static dims >= 2) and export:strict;
- export:default and compile:mark-dynamic (mark_dynamic on the same dims, fullgraph, first call);
- make_fx:no-duck-shape and export:default, for programs without unbacked input dims (make_fx
  traces those unbacked; export cannot declare them).

Differences that are understood are listed in EXPLAINED with the reason; the rest are findings.
Eager agreement already covers values and shapes of each front-end against eager, so this
oracle compares what the front-ends decided about the program, not values again."""

from __future__ import annotations

from shapefuzz.oracles.base import Oracle, register
from shapefuzz.oracles.findings import Finding, Severity
from shapefuzz.oracles.signature import Signature
from shapefuzz.systems.observation import Observation

__all__ = ["EXPLAINED", "PAIRS", "frontend_differential", "pair_of"]

ORACLE = "frontend-differential"

#: (system, config) pairs that declare the same dims dynamic
PAIRS = ((("export", "default"), ("export", "strict")),
         (("export", "default"), ("compile", "mark-dynamic")),
         (("make_fx", "no-duck-shape"), ("export", "default")))

#: (left system, right system, left outcome, right outcome) -> why it is not a bug
EXPLAINED = {
    ("make_fx", "export", "ok", "constraint"): "make_fx has no declared dims: specializing a dim is "
    "a guard there and a constraint violation for export's Dim.DYNAMIC",
    ("export", "compile", "constraint", "ok"): "compile checks mark_dynamic constraints only for "
    "dims of the frame's inputs that it keeps; export checks every declared dim",
}


def pair_of(f: Finding) -> tuple[tuple[str, str], ...]:
    """The two (system, config) targets a front-end finding compares (its signature's pair)."""
    return f.signature.pair or ((f.system, f.config),)


def _status(o: Observation) -> str:
    return o.outcome.status


def frontend_differential(program, observations: list[Observation]) -> list[Finding]:
    by = {(o.system, o.config): o for o in observations}
    out = []
    for a, b in PAIRS:
        oa, ob = by.get(a), by.get(b)
        if oa is None or ob is None:
            continue
        if a[0] == "make_fx" and any("unbacked" in s.dims for s in program.inputs):
            continue
        ka, kb = _status(oa), _status(ob)
        comparable = {"ok", "dde", "constraint"}
        if ka == kb or ka not in comparable or kb not in comparable:
            continue  # errors, crashes and timeouts are eager agreement's to judge
        if (a[0], b[0], ka, kb) in EXPLAINED:
            continue
        out.append(Finding(
            ORACLE, Severity.HIGH, b[0], b[1], "outcome",
            f"{a[0]} ({a[1]}) and {b[0]} ({b[1]}) disagree on the outcome: {ka} vs {kb}",
            f"{a[0]}:{a[1]}: {oa.outcome.short()}\n{b[0]}:{b[1]}: {ob.outcome.short()}",
            Signature(ORACLE, "outcome", (a[0], b[0]), b[1], where=(f"{ka}-vs-{kb}",), pair=(a, b))))
    return out


def _pair_targets(finding: Finding, universe) -> tuple:
    return tuple(t for t in universe if t in pair_of(finding))


ORACLE_OBJ = register(Oracle(
    ORACLE, Severity.HIGH, "front-ends that declare the same dims dynamic must reach the same outcome (ok, "
    "data-dependent error, constraint violation)", lambda c: frontend_differential(c.program, list(c.observations)),
    kinds=("tensors",), rank=70, targets=_pair_targets, repro_family="frontends"))
