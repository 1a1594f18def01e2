"""Oracles 5 and 6 over several observations of one program.

Config differential: a semantics-preserving config (an optimization switched on or off) must give
the baseline's observation: the same outcome class, the same answers and the same way of
answering each question, the same number of guards and asserts, and value expressions that
agree numerically under the binding. An aggressive guard-free level may turn a claim into its
fallback, never into another claim. Blame: for ref, a bisection over the toggles that differ
(Note [blame by bisection]); for other systems, the configs that revert one optimization
("off:<opt>" / "slow:<opt>") and agree with the baseline; when the baseline itself is wrong
against eager, that is what the blame says.

System differential: `ref` vs `torch-env` on the same question program: the same outcome class,
the same answers to the questions both answered with a claim, and value expressions that agree
numerically; `ref` vs `make_fx` and `export` on the same tensor program (one eager runs): the same
outcome among ok / dde and output shapes that agree numerically, each under its own binding.
Understood, systematic differences are listed once in KNOWN_DIFFERENCES."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.oracles.agreement import eager_agreement, signature
from shapefuzz.oracles.base import Compares, Oracle, register
from shapefuzz.oracles.findings import Finding, Severity
from shapefuzz.oracles.observable import observable_mismatch
from shapefuzz.systems.evidence import declare
from shapefuzz.systems.observation import Observation

__all__ = [
    "BASELINES",
    "KNOWN_DIFFERENCES",
    "TORCH_SIDES",
    "Blame",
    "config_differential",
    "config_kind",
    "config_mismatch",
    "system_differential",
    "system_mismatch",
]

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
    "Whether such a DDE is spurious is the spurious-dde oracle's question (DESIGN oracle 7, with "
    "ref's answer as its evidence), not this one's",
    # tensor programs
    ("ref", "make_fx", "dde-vs-ok:squeeze"): "Note [squeeze deviates from torch]: torch's meta "
    "keeps a dim of unknown size in squeeze() while the kernel squeezes it when it is 1 (a known "
    "upstream bug, corpus/squeeze-unbacked-meta-make_fx); ref raises a data-dependent error there",
    ("ref", "export", "dde-vs-ok:squeeze"): "as for make_fx: Note [squeeze deviates from torch]",
    ("ref", "export", "constraint"): "export refuses to specialize a dim declared Dim.DYNAMIC "
    "(outcome constraint); ref, like make_fx, has no user-declared dims, so it just guards",
    ("ref", "export", "dde-vs-ok"): "torch 2.13 export cannot declare an unbacked input dim, so "
    "shapefuzz exports such dims as Dim.DYNAMIC (backed); where ref (and make_fx) raise a DDE on "
    "a question about that dim, export guards. Applies only to programs with an unbacked input dim",
}


def config_kind(name: str) -> str:
    if name.startswith("agfs="):
        return "aggressive"
    if name in ("default", "all-off", "all-slow", "stack-traces-off") or name.startswith(("off:", "slow:")):
        return "preserving"
    return "settings"  # changes what may be assumed (0/1 specialization, duck sizing ...)


def config_mismatch(base: Observation, obs: Observation, aggressive: bool,
                    diverging: bool = False) -> str | None:
    """Why `obs` disagrees with its baseline, or None. `diverging`: the program's path depends
    on the answers (a tensor program: a fallback may send a trace down another meta-function
    path, which asks other questions and may end in a data-dependent error), so under an
    aggressive level nothing after the first claim turned fallback is compared but the values."""
    split = _first_fallback(base, obs) if aggressive and diverging else None
    if base.outcome.status != obs.outcome.status and not (
            split is not None and _same_after_split(base, obs)):
        return f"outcome {base.outcome.status} under {base.config}, {obs.outcome.status} under {obs.config}"
    if diverging:  # a tensor program: what it can observe, not ShapeEnv's internal decisions
        if base.outcome.status != "ok" or (split is not None and _asserted_at_run_time(base, obs)):
            return None
        if aggressive and base.fallback_branches != obs.fallback_branches:  # Note [different arms]
            return None  # (a semantics-preserving config must send the same branches: observable_mismatch)
        return observable_mismatch(base, obs, aggressive)
    for k, (a, b) in enumerate(zip(base.decisions, obs.decisions)):
        if split is not None and k >= split:
            break
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


# Note [different arms]: an aggressive level may turn a branch's claim into its fallback; then
# the two configs' traces sent different branches to the general arm and ran two programs: each is the program with its own branches forced, the reference eager agreement
# judges it by (Note [branch contract], shapefuzz/ops/branch.py). Their outputs agree only when
# the generated arms agree wherever the condition holds, so comparing them tests the generator's
# arms, not the shape system; a wrong arm claim is eager agreement's finding on its own config.
# ref on unmodified torch 2.13 (tests/quality/test_ref_toggles.py, CI): all-off took the fast arm
# of `if guard_or_false(u0 - 1 < 3): 0 else (u0 - 1) // 3`, agfs=2 fell back to the general arm,
# and at u0 = 0 the arms are 0 and -1 (the pattern's fast arm assumes a non-negative operand): a
# config-mismatch that blamed agfs.
def _same_after_split(base: Observation, obs: Observation) -> bool:
    """Whether two different outcomes after an aggressive level's split agree.

    Note [checks moved to run time]: after an aggressive level's first fallback either path
    may meet a data-dependent question the other one never asks (ok vs dde); and a check one
    path fails while tracing, the guard-free path may defer as a runtime assert (torch._check
    on an expression it no longer decides), so its artifact rejects the same input instead
    (error vs ok whose artifact raised on the run's own binding). Whether that artifact's error
    is eager's is the eager-agreement oracle's question, not this one's."""
    statuses = {base.outcome.status, obs.outcome.status}
    if statuses == {"ok", "dde"}:
        return True
    ok = obs if obs.outcome.status == "ok" else base
    return statuses == {"ok", "error"} and ok.artifact is not None and not ok.artifact.ok


def _asserted_at_run_time(base: Observation, obs: Observation) -> bool:
    """Note [checks moved to run time], when both traces succeed: after the aggressive level's
    fallback its trace deferred a check as a runtime assert (broadcasting, agfs=2: is this size
    1? fallback False, so torch._check(size == other) at run time) that the other path decided
    while tracing, and its artifact's assert fails on the run's own binding where the other
    artifact returns."""
    a, b = base.artifact, obs.artifact
    return (a is not None and b is not None and a.ok and not b.ok
            and b.error.startswith("Runtime assertion failed"))


def _first_fallback(base: Observation, obs: Observation) -> int | None:
    for k, (a, b) in enumerate(zip(base.decisions, obs.decisions)):
        if (a.answer, a.how) != (b.answer, b.how) and b.how == "fallback":
            return k
    return None



def config_differential(observations: list[Observation], program=None,
                        eager: Observation | None = None) -> list[Finding]:
    out: list[Finding] = []
    diverging = getattr(program, "kind", "questions") == "tensors"
    by_system: dict[str, dict[str, Observation]] = {}
    for o in observations:
        by_system.setdefault(o.system, {})[o.config] = o
    for system, cfgs in by_system.items():
        base = cfgs.get(BASELINES.get(system, "default"))
        if base is None or base.outcome.status in ("crash", "timeout"):
            continue
        for name, obs in sorted(cfgs.items()):
            cfg_kind = config_kind(name)
            if obs is base or cfg_kind == "settings" or obs.outcome.status in ("crash", "timeout"):
                continue
            why = config_mismatch(base, obs, cfg_kind == "aggressive", diverging)
            if why is None:
                continue
            guilty, line = _blame(base, obs, cfgs, program, eager, diverging)
            if guilty and any(f.system == system and f.signature.config == guilty for f in out):
                continue  # one finding per guilty toggle, not one per config that contains it
            out.append(Finding(
                "config-differential", Severity.HIGH, system, name, "config-mismatch",
                f"{system}: config {name} disagrees with {base.config}"
                + (f" (guilty toggle: {guilty})" if guilty and guilty != base.config else ""),
                f"{why}\nblame: {line}",
                signature("config-differential", "config-mismatch", obs, config=guilty or name),
                evidence=Blame(line)))
    return out


@declare("config-differential")
@dataclass(frozen=True, slots=True)
class Blame:
    """What the config differential's bisection said (Note [blame by bisection]): the guilty
    toggle or minimal pair, that the baseline itself is wrong, or that none was isolated; the
    blame line reads it (Note [blame] in blame.py)."""

    line: str


def _legacy_blame(finding: Finding) -> Blame | None:
    """Note [evidence of older case files]: the detail's 'blame: ' line, where findings written
    before typed evidence kept it."""
    line = next((x[len("blame: "):] for x in finding.detail.splitlines() if x.startswith("blame: ")), None)
    return None if line is None else Blame(line)


def _blame(base: Observation, obs: Observation, cfgs: dict[str, Observation], program, eager,
           diverging: bool) -> tuple[str, str]:
    """(the signature's config field, the blame line) of Note [blame by bisection]."""
    wrong = _baseline_wrong(base, program, eager)
    if wrong:
        return base.config, (f"the baseline {base.config} is itself wrong against "
                             f"{'eager' if eager is not None else 'the concrete answers'} "
                             f"({wrong}); no toggle is named")
    if base.system == "ref" and program is not None:
        found = bisect_toggles(base, obs, program, diverging)
        if found:
            names = "+".join(sorted(p.split(":", 1)[-1] if ":" in p else "agfs" for p in found))
            return names, (f"{names} (changing {' and '.join(found)} alone on top of {base.config} "
                           f"reproduces the difference; configs {base.config} and {obs.config})")
    guilty = _single_toggle_blame(base, cfgs, diverging)
    return guilty, guilty or "unknown (run with --config all)"


def _baseline_wrong(base: Observation, program, eager) -> str:
    """The first finding eager (or, for a question program, its own truth) has against the
    baseline observation, as a summary, or ""."""
    from shapefuzz.oracles.truth import truth_agreement  # lazy: truth registers after this oracle

    if eager is not None:
        found = eager_agreement(eager, base, frozenset()) if base.artifact is not None or \
            base.outcome.status == "error" else []
    elif program is not None and getattr(program, "kind", "") == "questions":
        found = [f for f in truth_agreement(program, base) if f.symptom not in ("crash", "timeout")]
    else:
        found = []
    return found[0].summary if found else ""


# Note [blame by bisection]: the toggles that differ between the baseline and the config that
# disagrees with it are delta-debugged (Zeller's ddmin over the set of changes applied on top of
# the baseline, each tried mix observed afresh by ref in this process): the result is a minimal
# set whose change alone reproduces a difference from the baseline, usually one toggle, else a
# minimal pair. It names the toggle whose *path* differs, whichever of its two paths is wrong.
def bisect_toggles(base: Observation, obs: Observation, program, diverging: bool) -> list[str]:
    """The minimal list of config parts (e.g. ["on:expr-cache"]) that, applied on top of the
    baseline's config, reproduce a difference from it; [] when the full set does not."""
    from shapefuzz.systems.ref.settings import toggle_parts  # lazy: no system at top (test_layers)
    from shapefuzz.systems.ref.system import RefSystem  # lazy: registry import stays z3-free

    memo: dict[frozenset, bool] = {}

    def differs(parts) -> bool:
        key = frozenset(parts)
        if key not in memo:
            o = RefSystem().observe(program, "+".join((base.config, *sorted(key))))
            aggressive = any(p.startswith("agfs=") and p != "agfs=0" for p in key)
            memo[key] = config_mismatch(base, o, aggressive, diverging) is not None
        return memo[key]

    parts = toggle_parts(base.config, obs.config)
    return ddmin(parts, differs) if parts and differs(parts) else []


def ddmin(items: list, test) -> list:
    """A 1-minimal sublist of `items` on which `test` holds (test(items) must hold)."""
    n = 2
    while len(items) >= 2:
        chunks = [items[i * len(items) // n:(i + 1) * len(items) // n] for i in range(n)]
        smaller = next((c for c in chunks if c and test(c)), None)
        if smaller is not None:
            items, n = smaller, 2
            continue
        rest = next((r for c in chunks if c and test(r := [x for x in items if x not in c])), None)
        if rest is not None:
            items, n = rest, max(n - 1, 2)
        elif n >= len(items):
            break
        else:
            n = min(len(items), 2 * n)
    return items


def _single_toggle_blame(base: Observation, cfgs: dict[str, Observation], diverging: bool = False) -> str:
    """For systems bisection cannot observe here (torch-env): the single optimizations whose
    revert ("off:X" / "slow:X") alone makes the system agree with its baseline (judged by the
    rule the finding was, Note [observable behaviour] for tensor programs)."""
    fixes = [name.split(":", 1)[1] for name, o in sorted(cfgs.items())
             if name.startswith(("off:", "slow:")) and config_mismatch(base, o, False, diverging) is None]
    return "+".join(fixes)


def system_differential(observations: list[Observation], eager: Observation | None = None,
                        program=None) -> list[Finding]:
    """`ref` (default config) against each torch system's default config on the same program:
    torch-env for question programs, make_fx and export for tensor programs."""
    ref = _default(observations, "ref")
    if ref is None or ref.outcome.status in ("crash", "timeout"):
        return []
    out = []
    for other in TORCH_SIDES:
        obs = _default(observations, other)
        if obs is None or obs.outcome.status in ("crash", "timeout"):
            continue
        why = system_mismatch(ref, obs, eager, _has_unbacked_input(program))
        if why is not None:
            symptom, extra, text = why
            out.append(Finding("system-differential", Severity.HIGH, other, "default", symptom,
                               f"ref and {other} disagree ({symptom})", text,
                               signature("system-differential", symptom, obs, extra,
                                         systems=("ref", other))))
    return out


#: how ref's squeeze() rule starts its data-dependent error (Note [squeeze deviates from torch])
SQUEEZE_DDE = "squeeze() of a dim that may be 1"

#: the torch systems `ref` is compared with
TORCH_SIDES = ("torch-env", "make_fx", "export")


def _default(observations: list[Observation], system: str) -> Observation | None:
    return next((o for o in observations if o.system == system and o.config == "default"), None)


def _has_unbacked_input(program) -> bool:
    return any("unbacked" in spec.dims for spec in getattr(program, "inputs", ()))


def system_mismatch(ref: Observation, other: Observation, eager: Observation | None = None,
                    unbacked_input: bool = False) -> tuple[str, str, str] | None:
    """(symptom, signature extra, explanation) when `ref` and a torch system disagree beyond the
    KNOWN_DIFFERENCES, else None. Also what a system-differential repro.py checks.
    `unbacked_input`: the tensor program has an unbacked input dim."""
    if other.system == "torch-env":
        return _question_mismatch(ref, other)
    return _tensor_mismatch(ref, other, eager, unbacked_input)


def _question_mismatch(ref: Observation, te: Observation) -> tuple[str, str, str] | None:
    pair = f"{ref.outcome.status}-vs-{te.outcome.status}"
    if ("ref", "torch-env", pair) in KNOWN_DIFFERENCES:
        return None
    if ref.outcome.status != te.outcome.status:
        return "outcome", pair, f"outcome: ref {ref.outcome.short()}; torch-env {te.outcome.short()}"
    for k, (a, b) in enumerate(zip(ref.decisions, te.decisions)):
        if "fallback" not in (a.how, b.how) and a.answer != b.answer:
            return "answer", "", (f"question {k}: ref {a.answer} ({a.how}, {a.expr}); torch-env "
                                  f"{b.answer} ({b.how}, {b.expr})")
    return _value_mismatch(ref, te, "answer")


def _value_mismatch(ref: Observation, other: Observation, symptom: str):
    for k, (a, b) in enumerate(zip(ref.out_eval, other.out_eval)):
        if a and b and a != b:
            return symptom, "", (f"value {k}: ref {ref.out_exprs[k]} = {a}; {other.system} "
                              f"{other.out_exprs[k]} = {b}")
    return None


def _tensor_mismatch(ref: Observation, tr: Observation, eager: Observation | None,
                     unbacked_input: bool):
    """Tensor programs: on a program eager runs (an invalid program may fail at trace time in one
    system and at run time in another), the same outcome among ok / dde, and output shapes that
    agree under each system's own binding. An error on a valid program is already the
    eager-agreement oracle's finding for the system that raised it, so it is not repeated here."""
    if ref.outcome.exc_type == "NoShapeRule" or (eager is not None and eager.outcome.status != "ok"):
        return None
    statuses = (ref.outcome.status, tr.outcome.status)
    if "error" in statuses or ("constraint" in statuses and ("ref", "export", "constraint") in KNOWN_DIFFERENCES):
        return None
    pair = f"{statuses[0]}-vs-{statuses[1]}"
    if ref.outcome.message.startswith(SQUEEZE_DDE):
        pair += ":squeeze"
    if statuses[0] != statuses[1]:
        if ("ref", tr.system, pair) in KNOWN_DIFFERENCES and (
                tr.system != "export" or unbacked_input or pair.endswith(":squeeze")):
            return None
        return "outcome", pair, f"outcome: ref {ref.outcome.short()}; {tr.system} {tr.outcome.short()}"
    if statuses[0] != "ok":
        return None
    return _value_mismatch(ref, tr, "shape")


def _same_system(finding: Finding, universe) -> tuple:
    return tuple(t for t in universe if t[0] == finding.system)


def _ref_and_torch(finding: Finding, universe) -> tuple:
    """system_differential reads only the default configs of ref and the torch side."""
    return tuple(t for t in universe if t[0] in ("ref", finding.system) and t[1] == "default")


CONFIG_DIFFERENTIAL = register(Oracle(
    "config-differential", Severity.HIGH, "switching one optimization on or off must not change any answer",
    lambda c: config_differential(list(c.observations), c.program, c.eager), rank=80,
    targets=_same_system,
    compares=Compares.CONFIGS, evidence=Blame, legacy_evidence=_legacy_blame))
SYSTEM_DIFFERENTIAL = register(Oracle(
    "system-differential", Severity.HIGH, "torch's ShapeEnv and shapefuzz's reference ShapeEnv must agree",
    lambda c: system_differential(list(c.observations), c.eager, c.program), rank=90,
    targets=_ref_and_torch, repro_family="ref"))  # Note [confirming ref findings]
