"""What a tensor program can observe of a trace, compared across two configs of one system
(the config differential's rule for tensor programs, shapefuzz/oracles/differential.py).

Note [observable behaviour]: a semantics-preserving config must not change what the program
and its user can see: which arm each of the program's own branches took (its questions), the
artifact's outputs on the traced inputs (shapes and values), the output shapes evaluated under
the binding, and what the artifact accepts: its guards and runtime asserts, compared up to z3
equivalence (each side's conjunction implies every fact of the other). The order and number of
ShapeEnv's internal decisions are not observable: a slow path may ask `s71 >= 2` where the fast
one asked `Eq(u1, 0)` and end in the same graph, so they are not compared (a `pytest
--shapefuzz-budget 30` run showed 21 such rows, all with equal outputs). A z3 query that is
unknown or times out counts as equivalent: the oracle never reports what it cannot show."""

from __future__ import annotations

from shapefuzz.systems.observation import Observation

__all__ = ["TIMEOUT_MS", "facts_mismatch", "observable_mismatch"]

#: z3's budget per query; an equivalence needs a few queries per fact
TIMEOUT_MS = 500


def observable_mismatch(base: Observation, obs: Observation, aggressive: bool) -> str | None:
    """Why `obs` shows the program something else than `base` does, or None."""
    b, o = base.config, obs.config
    if not aggressive and base.fallback_branches != obs.fallback_branches:
        return (f"branches sent to their general arm: {list(base.fallback_branches)} under {b}, "
                f"{list(obs.fallback_branches)} under {o}")
    why = _artifact_mismatch(base, obs)
    if why:
        return why
    for k, (x, y) in enumerate(zip(base.out_eval, obs.out_eval)):
        if x and y and x != y:
            return f"value {k}: {base.out_exprs[k]} = {x} under {b}, {obs.out_exprs[k]} = {y} under {o}"
    return None if aggressive else facts_mismatch(base, obs)


def _artifact_mismatch(base: Observation, obs: Observation) -> str | None:
    x, y = base.artifact, obs.artifact
    if x is None or y is None:
        return None
    if x.ok != y.ok:
        return (f"the artifact {'returned' if x.ok else 'raised ' + x.error} under {base.config}, "
                f"{'returned' if y.ok else 'raised ' + y.error} under {obs.config}")
    for k, (a, c) in enumerate(zip(x.values, y.values)):
        if not a.same_as(c):
            return f"output {k}: {a.describe()} under {base.config}, {c.describe()} under {obs.config}"
    return None


def facts_mismatch(base: Observation, obs: Observation, timeout_ms: int = TIMEOUT_MS) -> str | None:
    """A guard or assert of one side that the other side's guards and asserts do not imply (z3,
    with each side's input axioms), or None."""
    from shapefuzz.systems.prover import SmtSettings  # lazy: registry import stays z3-free

    settings = SmtSettings(timeout_ms=timeout_ms)
    for one, other in ((base, obs), (obs, base)):
        missing = _not_implied(_facts(other), _facts(one), _axioms(other), settings)
        if missing:
            return (f"under {other.config}, the artifact's guards and asserts do not imply "
                    f"{missing} (a fact under {one.config})")
    return None


def _facts(o: Observation) -> list[str]:
    return list(o.guards) + list(o.asserts)


def _axioms(o: Observation) -> list[str]:
    return [e for _, origin, e in o.axioms if origin in ("input", "range", "size")]


def _not_implied(have: list[str], want: list[str], axioms: list[str], settings) -> str:
    from shapefuzz.systems.prover import parse, prove  # lazy: registry import stays z3-free

    known = set(have)
    if all(text in known for text in want):
        return ""  # the same facts (the usual case): nothing to parse or prove
    try:
        facts = [parse(t) for t in have + axioms]
    except Exception:  # a fact sympy cannot read back: nothing to compare with
        return ""
    for text in want:
        if text in known:
            continue
        try:
            claim = parse(text)
        except Exception:
            continue
        if prove(facts, claim, settings).status == "sat":
            return text
    return ""
