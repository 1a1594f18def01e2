"""Oracles 5 and 6 over several observations of one program.

Config differential: a semantics-preserving config (an optimization switched on or off) must give
the baseline's observation: the same outcome class, the same answers and the same way of
answering each question, the same number of guards and asserts, and value expressions that
agree numerically under the binding. An aggressive guard-free level may turn a claim into its
fallback, never into another claim. Blame: among the configs that revert one optimization
("off:<opt>" / "slow:<opt>"), those that agree with the baseline where the full config does not
name the guilty toggle (an opt-bisect over single toggles).

System differential: `ref` vs `torch-env` on the same question program: the same outcome class,
the same answers to the questions both answered with a claim, and value expressions that agree
numerically. Understood, systematic differences are listed once in KNOWN_DIFFERENCES."""

from __future__ import annotations

from shapefuzz.findings import Finding
from shapefuzz.observation import Observation
from shapefuzz.oracles.agreement import signature

__all__ = ["config_differential", "system_differential", "config_kind", "BASELINES",
           "KNOWN_DIFFERENCES"]

#: the config every other config of a system is compared with
BASELINES = {"ref": "all-off", "torch-env": "all-slow", "make_fx": "default", "export": "default"}

#: (system, system, what) -> why; a difference listed here is not a finding
KNOWN_DIFFERENCES: dict[tuple[str, str, str], str] = {
    ("ref", "torch-env", "how"): "ref and torch may prove a fact at different steps (torch's "
    "_maybe_guard_rel and axioms differ from ref's range analysis); only answers and values are "
    "compared across systems",
    ("ref", "torch-env", "ok-vs-dde"): "ref is sharper than torch: it uses axioms, != refinement, "
    "passes a replaced symbol's range on, treats _check(u >= 0) as size-like for size-oblivious "
    "questions and replaces equalities of any size; so where ref decides, torch may raise a DDE. "
    "Whether such a DDE is spurious is the z3 oracle's question (DESIGN oracle 7), not this one's",
}


def config_kind(name: str) -> str:
    if name.startswith("agfs="):
        return "aggressive"
    if name in ("default", "all-off", "all-slow", "stack-traces-off") or name.startswith(("off:", "slow:")):
        return "preserving"
    return "settings"  # changes what may be assumed (0/1 specialization, duck sizing ...)


def _diff(base: Observation, obs: Observation, aggressive: bool) -> str | None:
    if base.outcome.kind != obs.outcome.kind:
        return f"outcome {base.outcome.kind} under {base.config}, {obs.outcome.kind} under {obs.config}"
    for k, (a, b) in enumerate(zip(base.decisions, obs.decisions)):
        if (a.answer, a.how) == (b.answer, b.how):
            continue
        if aggressive and b.how == "fallback":
            continue  # a claim may become its fallback
        return (f"question {k}: {base.config} says {a.answer} ({a.how}) for {a.expr}; "
                f"{obs.config} says {b.answer} ({b.how}) for {b.expr}")
    if len(base.decisions) != len(obs.decisions) and not aggressive:
        return f"{len(base.decisions)} questions answered under {base.config}, {len(obs.decisions)} under {obs.config}"
    if not aggressive and (len(base.guards), len(base.asserts)) != (len(obs.guards), len(obs.asserts)):
        return (f"{len(base.guards)} guards / {len(base.asserts)} asserts under {base.config}, "
                f"{len(obs.guards)} / {len(obs.asserts)} under {obs.config}")
    for k, (a, b) in enumerate(zip(base.out_eval, obs.out_eval)):
        if a and b and a != b:
            return f"value {k}: {base.out_exprs[k]} = {a} under {base.config}, {obs.out_exprs[k]} = {b} under {obs.config}"
    return None


def config_differential(observations: list[Observation]) -> list[Finding]:
    out: list[Finding] = []
    by_system: dict[str, dict[str, Observation]] = {}
    for o in observations:
        by_system.setdefault(o.system, {})[o.config] = o
    for system, cfgs in by_system.items():
        base = cfgs.get(BASELINES.get(system, "default"))
        if base is None or base.outcome.kind in ("crash", "timeout"):
            continue
        for name, obs in sorted(cfgs.items()):
            kind = config_kind(name)
            if obs is base or kind == "settings" or obs.outcome.kind in ("crash", "timeout"):
                continue
            why = _diff(base, obs, kind == "aggressive")
            if why is None:
                continue
            guilty = _blame(base, obs, cfgs)
            if guilty and any(f.system == system and f.signature.endswith(":" + guilty) for f in out):
                continue  # one finding per guilty toggle, not one per config that contains it
            out.append(Finding(
                "config-differential", "high", system, name, "config-mismatch",
                f"{system}: config {name} disagrees with {base.config}"
                + (f" (guilty toggle: {guilty})" if guilty else ""),
                why + (f"\nblame: {guilty}" if guilty else "\nblame: unknown (run with --config all)"),
                signature("config-differential", "config-mismatch", obs, config=guilty or name)))
    return out


def _blame(base: Observation, obs: Observation, cfgs: dict[str, Observation]) -> str:
    """The single optimizations whose revert ("off:X" / "slow:X") alone makes the system agree
    with its baseline: whichever path of X (fast or slow) is wrong, only the configs that share
    the baseline's choice for X agree with it."""
    fixes = [name.split(":", 1)[1] for name, o in sorted(cfgs.items())
             if name.startswith(("off:", "slow:")) and _diff(base, o, False) is None]
    return "+".join(fixes)


def system_differential(observations: list[Observation]) -> list[Finding]:
    ref = next((o for o in observations if o.system == "ref" and o.config == "default"), None)
    te = next((o for o in observations if o.system == "torch-env" and o.config == "default"), None)
    if ref is None or te is None or "crash" in (ref.outcome.kind, te.outcome.kind) or "timeout" in (
            ref.outcome.kind, te.outcome.kind):
        return []
    why = None
    if ("ref", "torch-env", f"{ref.outcome.kind}-vs-{te.outcome.kind}") in KNOWN_DIFFERENCES:
        return []
    if ref.outcome.kind != te.outcome.kind:
        why = f"outcome: ref {ref.outcome.short()}; torch-env {te.outcome.short()}"
    else:
        for k, (a, b) in enumerate(zip(ref.decisions, te.decisions)):
            if "fallback" not in (a.how, b.how) and a.answer != b.answer:
                why = f"question {k}: ref {a.answer} ({a.how}, {a.expr}); torch-env {b.answer} ({b.how}, {b.expr})"
                break
        for k, (a, b) in enumerate(zip(ref.out_eval, te.out_eval)):
            if why is None and a and b and a != b:
                why = f"value {k}: ref {ref.out_exprs[k]} = {a}; torch-env {te.out_exprs[k]} = {b}"
    if why is None:
        return []
    kind = "outcome" if ref.outcome.kind != te.outcome.kind else "answer"
    sig_extra = f"{ref.outcome.kind}-vs-{te.outcome.kind}" if kind == "outcome" else ""
    return [Finding("system-differential", "high", "torch-env", "default", kind,
                    f"ref and torch-env disagree ({kind})", why,
                    signature("system-differential", kind, te, sig_extra, systems=("ref", "torch-env")))]
