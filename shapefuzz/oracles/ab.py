"""Oracle 12, A/B: one program under a candidate torch and a baseline torch (campaign/ab_pool.py).

Note [A/B oracle]: each (system, config) has two observations, the candidate's and the
baseline's (system marked BASELINE). A difference is classified by which side eager, or a
question program's concrete answers, supports; the candidate is always the one blamed:

- regression [critical]: a one-torch oracle (eager agreement, replay, truth, z3 soundness ...)
  finds the candidate contradicting eager where the baseline, on the same program, does not;
  that one-torch finding is then reported once, as the regression (`supersede`);
- lost precision [medium]: the candidate raises a data-dependent error or falls back on a
  question the baseline decided (a claim: static, guard or assert);
- weaker guards [high; critical when the replay disagrees with eager]: an input the candidate's
  guards and asserts accept but the baseline's reject. Found on the replayed inputs (both sides
  run the same ones, and eager's reference is recorded with each) and, where the sampled inputs
  miss it, by z3 (a model of the candidate's guards and asserts and not the baseline's);
- extra specialization [low]: the converse, the candidate rejects what the baseline accepts;
- slowdown [low]: the candidate's observation took more than SLOWDOWN x the baseline's (and at
  least SLOW_MIN_S more), both timed inside their workers;
- improvement (not a finding; `improvements`, listed in the report): the candidate decides where
  the baseline fell back or raised a DDE, and agrees with eager; or it drops a guard or runtime
  assert that the baseline's own traced input fails (Note [the baseline rejects its own input]).

Symbols are numbered by each build's own ShapeEnv, so expressions are never compared as raw
strings: each observation's symbols are renamed by creation order within their prefix (s0 s1 ..
backed, u0 u1 .. unbacked; the numbers torch gives them are creation counters), decisions are
aligned on the renamed expressions, and two expressions that still differ in text are the same
question when z3 proves them equivalent. The z3 guard comparison runs only when both sides have
the same renamed symbols bound to the same values, the one case where the renaming is known to
pair the same symbols."""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from dataclasses import dataclass

from shapefuzz.oracles.agreement import signature
from shapefuzz.oracles.base import (
    BASELINE,
    CheckInput,
    Oracle,
    all_oracles,
    check_all,
    get_oracle,
    register,
)
from shapefuzz.oracles.findings import TORCH_SYSTEMS, Finding, Severity
from shapefuzz.program.kinds import kind_of
from shapefuzz.systems.evidence import declare, of, record
from shapefuzz.systems.evidence.truth import question_replays
from shapefuzz.systems.observation import Observation, compare_runs

__all__ = ["ORACLE", "SLOWDOWN", "SPEC_PREFIX", "ABEvidence", "ab_findings", "baseline_view", "dropped_wrong_facts",
           "improvements", "mark", "self_refuted", "slower", "supersede"]

ORACLE = "ab"
SLOWDOWN = 2.0
SLOW_MIN_S = 0.2  # below this, a ratio is scheduling noise on a loaded machine
CLAIMS = ("static", "guard", "assert")
#: how findings written before typed evidence named their baseline (Note [evidence of older case files])
SPEC_PREFIX = "ab-baseline: "
_SYM = re.compile(r"\b([a-z]+)(\d+)\b")


# ---- the two sides ------------------------------------------------------------------------------
@declare(ORACLE)
@dataclass(frozen=True, slots=True)
class ABEvidence:
    """The baseline an A/B finding was made against (Note [typed evidence]; Note [A/B repro] in
    repro/ab.py: its repro runs the program under both): the baseline's interpreter, its changes
    to the candidate's environment (an empty value unsets the variable) and the campaign's seed."""

    python: str
    env: tuple[tuple[str, str], ...] = ()
    seed: int = 0


def mark(obs: Observation, spec: ABEvidence) -> Observation:
    """A baseline observation as oracles see it: its system marked, the baseline it ran on
    recorded (Note [A/B workers], campaign/ab_pool.py); every A/B finding carries it."""
    return record(dataclasses.replace(obs, system=obs.system + BASELINE), spec)


def legacy_evidence(finding: Finding) -> ABEvidence | None:
    """Note [evidence of older case files]: an A/B finding written before findings carried
    evidence named its baseline in its detail's last line, SPEC_PREFIX + JSON (data: parsed,
    never evaluated)."""
    line = next((x for x in reversed(finding.detail.splitlines()) if x.startswith(SPEC_PREFIX)), "")
    try:
        obj = json.loads(line[len(SPEC_PREFIX):]) if line else None
        return None if obj is None else ABEvidence(str(obj["python"]), tuple(
            (str(k), str(v)) for k, v in obj.get("env", ())), int(obj.get("seed", 0)))
    except (ValueError, KeyError, TypeError, AttributeError):  # a damaged line: no baseline named
        return None


def _pairs(c: CheckInput):
    cand = {(o.system, o.config): o for o in c.observations if not o.system.endswith(BASELINE)}
    for b in c.observations:
        if b.system.endswith(BASELINE):
            mine = cand.get((b.system[: -len(BASELINE)], b.config))
            if mine is not None:
                yield mine, dataclasses.replace(b, system=mine.system)


def _spec(b: Observation) -> ABEvidence | None:
    return of(b, ABEvidence)


def _wrong(program, eager, obs: Observation, undefined) -> dict:
    """(oracle, symptom) -> the finding, for every critical finding a one-torch per-observation
    oracle makes on `obs` (a timeout is the machine's load, not the build)."""
    return _one_torch(program, eager, obs, undefined, lambda f: f.severity == Severity.CRITICAL and f.symptom != "timeout")


def _one_torch(program, eager, obs: Observation, undefined, keep=lambda f: True) -> dict:
    """(oracle, symptom) -> the first finding `keep` accepts of each one-torch per-observation
    oracle on `obs`."""
    one = CheckInput(program, eager, (obs,), obs, undefined)
    kind = kind_of(program).name
    out: dict = {}
    for o in all_oracles():
        if o.per_observation and not o.both_sides and kind in o.kinds:
            for f in o.check(one):
                if keep(f):
                    out.setdefault((f.oracle, f.symptom), f)
    return out


# ---- symbols by creation order ------------------------------------------------------------------
def _renaming(obs: Observation) -> dict[str, str]:
    names = {n for n, _ in (*obs.binding, *obs.ranges)}  # var_to_range: every symbol created
    for text in (*(d.expr for d in obs.decisions), *obs.guards, *obs.asserts):
        names.update(m.group(0) for m in _SYM.finditer(text))
    by_prefix: dict[str, list[int]] = {}
    for n in names:
        m = _SYM.fullmatch(n)
        if m:
            by_prefix.setdefault(m.group(1), []).append(int(m.group(2)))
    return {f"{p}{i}": f"{p}{rank}" for p, idx in by_prefix.items() for rank, i in enumerate(sorted(idx))}


def _canon(text: str, ren: dict[str, str]) -> str:
    return _SYM.sub(lambda m: ren.get(m.group(0), m.group(0)), text)


def _equivalent(a: str, b: str) -> bool:
    """Two boolean expressions are the same question (z3 proves each from the other)."""
    try:
        from shapefuzz.systems.prover.smt import parse, prove  # lazy: registry import stays z3-free

        ea, eb = parse(a), parse(b)
        return prove([ea], eb).proved and prove([eb], ea).proved
    except Exception:  # unparsable or untranslatable (sympy, z3 errors): not shown equivalent
        return False


def _aligned(cand: Observation, base: Observation):
    """(candidate decision, baseline decision, renamed expr) of the questions both asked."""
    rc, rb = _renaming(cand), _renaming(base)
    ca = [_canon(d.expr, rc) for d in cand.decisions]
    cb = [_canon(d.expr, rb) for d in base.decisions]
    sm = difflib.SequenceMatcher(None, ca, cb, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal" or (op == "replace" and i2 - i1 == j2 - j1):
            for i, j in zip(range(i1, i2), range(j1, j2)):
                dc, db = cand.decisions[i], base.decisions[j]
                if op == "equal" or (_cls(dc) != _cls(db) and _equivalent(ca[i], cb[j])):
                    yield dc, db, ca[i]


def _cls(d) -> str:
    return "claim" if d.how in CLAIMS else d.how


def _default_replay_input(name: str) -> bool:
    """The inner finding's replay index points into the observation's replays (not, say, into
    its z3 verdicts), so it means the same for an A/B finding."""
    return get_oracle(name).replay_input is Oracle.__dataclass_fields__["replay_input"].default


# ---- the classes --------------------------------------------------------------------------------
def _finding(symptom, severity, cand, summary, detail, spec, *where, expr="", shape="", index=-1):
    return Finding(ORACLE, severity, cand.system, cand.config, symptom, summary, detail,
                   signature(ORACLE, symptom, cand, *where, expr=expr, shape=shape), index, evidence=spec)


def _regressions(program, eager, cand, base, undefined, spec) -> list[Finding]:
    """What the candidate gets wrong where the baseline agrees with eager. A baseline that did
    not trace (a DDE, an error, a timeout) never got as far: it shows nothing about what the candidate traced beyond
    it, so that is the candidate's one-torch finding, not a regression (AB6, seed 331: 2.14.1
    fixed a DDE at a torch.cond, then met row 2's squeeze, which 2.13.0 never reached)."""
    if cand.outcome.status == "ok" and base.outcome.status != "ok":
        return []
    mine, theirs = _wrong(program, eager, cand, undefined), _wrong(program, eager, base, undefined)
    out = []
    for key, f in mine.items():
        if key not in theirs:
            keep = f.replay_index if _default_replay_input(f.oracle) else -1
            out.append(_finding("regression", Severity.CRITICAL, cand, f"candidate {f.summary}; the baseline "
                                "agrees with eager here", f"{f.oracle}: {f.detail}", spec, f.oracle,
                                f.symptom, shape=f.signature.shape, index=keep))
    return out


def _lost(cand, base, spec) -> list[Finding]:
    if cand.outcome.status == "dde" and base.outcome.status == "ok":
        return [_finding("lost-precision", Severity.MEDIUM, cand, f"candidate {cand.system} raises a "
                         "data-dependent error where the baseline traces",
                         f"candidate: {cand.outcome.short()}\nbaseline: ok", spec, "dde",
                         expr=_canon(cand.outcome.expr, _renaming(cand)))]
    for dc, db, expr in _aligned(cand, base):
        if dc.how == "fallback" and db.how in CLAIMS:
            return [_finding("lost-precision", Severity.MEDIUM, cand, f"candidate {cand.system} falls back "
                             "on a question the baseline decides", f"question {expr}: candidate "
                             f"fell back to {dc.answer}; baseline answered {db.answer} ({db.how})",
                             spec, "fallback", expr=expr)]
    return []


# Note [the baseline rejects its own input]: a baseline guard or deferred runtime assert that is
# false under the baseline's own binding (the values of the run it traced), on a program eager
# runs, rejects the very input the baseline traced: the baseline was wrong there, so the candidate
# that drops it is an improvement, not weaker guards. Seen between torch 2.14.1 and 2.13.0:
# causal SDPA with unbacked sizes, 2.13 defers `0 <= 1/sqrt(float(u1))`, which fails at the traced
# u1 = 0; 2.14.1 matches eager and was reported ab:weaker-guards. Such a fact is left out of the
# baseline's side of the guard comparison (z3), and an input only the baseline rejects is no
# finding where the candidate agrees with eager on it (the sampled replays carry no binding to
# tell which baseline fact rejected them). A fact that cannot be evaluated (an unbound symbol, an
# unparsable expression) is kept: only a fact shown false is set aside.
def _holds(text: str, subs: dict) -> bool | None:
    """Whether the fact holds under `subs` (None: not evaluated). A comparison with an undefined
    side (a division by zero, sqrt of 0 inverted: sympy's zoo) cannot pass: torch's runtime check
    raises on it."""
    import sympy

    from shapefuzz.systems.prover.smt import parse  # lazy: registry import stays z3-free

    try:
        e = parse(text)
    except Exception:  # unparsable: not evaluated
        return None
    try:
        got = e.subs(subs)
    except ZeroDivisionError:
        return False
    except TypeError:  # sympy refuses to order zoo or nan
        return False if _undefined_side(e, subs) else None
    return bool(got) if got in (sympy.true, sympy.false) else None


def _undefined_side(e, subs: dict) -> bool:
    import sympy

    try:
        return any(a.subs(subs).has(sympy.zoo, sympy.nan) for a in e.args)
    except ZeroDivisionError:
        return True


def self_refuted(obs: Observation, facts: list[str] | None = None) -> list[str]:
    """The facts (default: the guards and runtime asserts of `obs`), symbols renamed by creation
    order, that are false under `obs`'s own binding (Note [the baseline rejects its own input])."""
    import sympy

    ren = _renaming(obs)
    bound = {ren.get(n, n): v for n, v in obs.binding}
    subs = {sympy.Symbol(n, integer=True): v for n, v in bound.items()}
    facts = [_canon(g, ren) for g in (*obs.guards, *obs.asserts)] if facts is None else facts
    return [g for g in facts
            if {m.group(0) for m in _SYM.finditer(g)} <= bound.keys() and _holds(g, subs) is False]


def dropped_wrong_facts(eager, cand: Observation, base: Observation) -> list[str]:
    """The baseline's facts its own traced input fails that the candidate does not have, on a
    program eager (or the question program's own values: `eager` None) accepts. Only the facts
    the candidate lacks are evaluated: on most programs both builds have the same, and none is."""
    if eager is not None and eager.outcome.status != "ok":
        return []
    missing = sorted(set(_facts(base)) - set(_facts(cand)))
    return self_refuted(base, missing) if missing else []


def _replay_guards(cand, base, undefined, spec, excused=False) -> list[Finding]:
    """`excused`: the baseline rejects its own traced input (Note [the baseline rejects its own
    input]): an input only it rejects is a finding only where the candidate is wrong on it."""
    recs = list(zip(cand.replays, base.replays)) or list(zip(question_replays(cand), question_replays(base)))
    for i, (rc, rb) in enumerate(recs):
        if getattr(rc, "inputs", getattr(rc, "values", None)) != getattr(rb, "inputs", getattr(rb, "values", None)):
            continue  # not the same input (a question replay drawn from other values)
        if rc.accepted and not rb.accepted:
            wrong = getattr(rc, "artifact", None) is not None and compare_runs(
                rc.reference, rc.artifact, undefined) is not None
            if excused and not wrong:
                continue
            sev, how = (Severity.CRITICAL, "and disagrees with eager on it") if wrong else (Severity.HIGH, "(eager agrees)")
            return [_finding("weaker-guards", sev, cand, f"candidate {cand.system}'s guards accept "
                             "an input the baseline's reject", f"replay input {i}: accepted by the "
                             f"candidate {how}; rejected by the baseline", spec, index=i)]
        if rb.accepted and not rc.accepted:
            return [_finding("extra-specialization", Severity.LOW, cand, f"candidate {cand.system}'s guards "
                             "reject an input the baseline's accept", f"replay input {i}: rejected "
                             "by the candidate, accepted by the baseline", spec, index=i)]
    return []


_RANGE = re.compile(r"\[\s*(-?\d+|-?int_oo|-?oo)\s*,\s*(-?\d+|int_oo|oo)\s*\]")


def _facts(obs: Observation) -> list[str]:
    """What an input must satisfy to be accepted: guards, asserts and each symbol's range
    (torch checks a backed symbol's range with its guards), symbols renamed."""
    ren = _renaming(obs)
    out = {_canon(g, ren) for g in (*obs.guards, *obs.asserts)}
    for name, text in obs.ranges:
        m = _RANGE.search(text)
        if m and _SYM.fullmatch(name):
            lo, hi = m.groups()
            out.update(f"{ren.get(name, name)} {op} {v}" for op, v in ((">=", lo), ("<=", hi)) if "oo" not in v)
    return sorted(out)


def _z3_guards(cand, base, spec, wrong_facts=()) -> list[Finding]:
    """Where the sampled inputs did not show it: a model of the candidate's guards and asserts
    that violates the baseline's (only when the renaming pairs the same symbols). Replayed on
    the candidate's own claims: one that is false at the model (the symbols of the guards it
    lacks moved there, the others at their traced values) is a wrong answer on an input its
    guards accept, so critical. `wrong_facts`: baseline facts its own input fails, left out
    (Note [the baseline rejects its own input])."""
    fc, fb = _facts(cand), [g for g in _facts(base) if g not in wrong_facts]
    if fc == fb or not fb or cand.outcome.status != "ok" or base.outcome.status != "ok":
        return []
    rc, rb = _renaming(cand), _renaming(base)
    if sorted((rc.get(n, n), v) for n, v in cand.binding) != sorted((rb.get(n, n), v) for n, v in base.binding):
        return []
    try:
        import sympy

        from shapefuzz.systems.prover.smt import parse, prove  # lazy: registry import stays z3-free

        v = prove([parse(x) for x in fc], sympy.And(*[parse(x) for x in fb]))
    except Exception:  # untranslatable guards (sympy, z3 errors): nothing shown
        return []
    if v.status != "sat":
        return []
    # only the symbols the missing guards constrain move; the rest keep their traced values, so
    # a claim both builds make without proof is not blamed on the candidate's guards
    moved = {m.group(0) for g in set(fb) - set(fc) for m in _SYM.finditer(g)}
    values = {**{rc.get(n, n): x for n, x in cand.binding}, **{n: x for n, x in v.model if n in moved}}
    wrong = _false_claim(cand, rc, values)
    model = ", ".join(f"{n}={x}" for n, x in v.model)
    sev, how = (Severity.CRITICAL, f"; there the candidate's claim {wrong} is false") if wrong else (Severity.HIGH, "")
    return [_finding("weaker-guards", sev, cand, f"candidate {cand.system}'s guards accept "
                     f"values the baseline's reject (z3){how}", f"z3 model (symbols by creation order): "
                     f"{model}\ncandidate guards: {fc}\nbaseline guards: {fb}", spec, "z3")]


def _false_claim(cand, ren: dict[str, str], values: dict[str, int]) -> str:
    """The first claim of the candidate that evaluates against its answer under `values`."""
    import sympy

    from shapefuzz.systems.prover.smt import parse  # lazy: registry import stays z3-free

    subs = {sympy.Symbol(n, integer=True): x for n, x in values.items()}
    for d in cand.decisions:
        if d.how not in CLAIMS or d.answer not in ("True", "False"):
            continue
        try:
            got = parse(_canon(d.expr, ren)).subs(subs)
        except Exception:  # unparsable: not evaluated
            continue
        if got in (sympy.true, sympy.false) and str(bool(got)) != d.answer:
            return f"{_canon(d.expr, ren)} = {d.answer} ({d.how})"
    return ""


def slower(cand: Observation, base: Observation) -> bool:
    """The slowdown rule: SLOWDOWN x the baseline's time and SLOW_MIN_S more, same outcome."""
    c, b = cand.elapsed_s, base.elapsed_s
    return cand.outcome.status == base.outcome.status and c > SLOWDOWN * b and c - b >= SLOW_MIN_S


def _slowdown(cand, base, spec) -> list[Finding]:
    if not slower(cand, base):
        return []
    c, b = cand.elapsed_s, base.elapsed_s
    return [_finding("slowdown", Severity.LOW, cand, f"candidate {cand.system} is {c / b:.1f}x slower than "
                     "the baseline on this program", f"candidate {c:.3f} s, baseline {b:.3f} s "
                     "(each timed in its worker)", spec)]


def compare(program, eager, cand, base, undefined=frozenset()) -> list[Finding]:
    """Note [A/B oracle]: the findings of one (system, config) pair."""
    spec = _spec(base)
    wrong = dropped_wrong_facts(eager, cand, base)
    guards = (_replay_guards(cand, base, undefined, spec, excused=bool(wrong))
              or _z3_guards(cand, base, spec, wrong_facts=wrong))
    return (_regressions(program, eager, cand, base, undefined, spec) + _lost(cand, base, spec)
            + guards + _slowdown(cand, base, spec))


def ab_findings(c: CheckInput) -> list[Finding]:
    return [f for cand, base in _pairs(c) for f in compare(c.program, c.eager, cand, base, c.undefined)]


def improvements(program, eager, cand: Observation, base: Observation) -> list[str]:
    """What the candidate decides that the baseline did not, where the candidate agrees with
    eager (listed in the report, never a finding)."""
    if cand.outcome.status not in ("ok", "dde") or _wrong(program, eager, cand, program.undefined_outputs()):
        return []
    if cand.outcome.status == "ok" and dropped_wrong_facts(eager, cand, base):
        return ["drops a guard or runtime assert that the baseline's own traced input fails"]
    if cand.outcome.status == "ok" and base.outcome.status == "dde":
        return ["traces where the baseline raised a data-dependent error"]
    if cand.outcome.status != base.outcome.status:
        return []
    return ["decides a question the baseline fell back on" for dc, db, _ in _aligned(cand, base)
            if dc.how in CLAIMS and db.how == "fallback"][:1]


def supersede(c: CheckInput, found: list[Finding]) -> list[Finding]:
    """A one-torch finding on the candidate that a regression was made from is reported once, as
    the regression (its signature's where starts with the inner oracle and symptom): shrinking and
    confirming it twice cost two more A/B runs, each two interpreters. One the baseline shows too
    is marked pre-existing (Note [pre-existing findings])."""
    made_from = {(f.system, f.config, *f.signature.where[:2]) for f in found
                 if f.oracle == ORACLE and f.symptom == "regression"}
    kept = [f for f in found if f.oracle == ORACLE or (f.system, f.config, f.oracle, f.symptom) not in made_from]
    return _mark_pre_existing(c, kept)


# Note [pre-existing findings]: in an A/B campaign a one-torch oracle's finding on the candidate
# that the baseline shows too on the same program, by (system, config, oracle, symptom, where), is a bug of
# both builds: reported as any finding (it is one of torch's), but marked pre_existing, so that the
# campaign shrinks it only as long as a known upstream issue's (Note [known shrink]) and it fails
# the run only under --strict (run.exit_code): an A/B campaign is a gate on the change under test,
# and unmodified torch against itself must pass it. On unmodified torch 2.13 one such bug (an
# unbacked squeeze seen through replay) took 29 s of a 90 s A/B campaign to shrink, and the plant
# the campaign was looking for was not met. "Shows too" is judged twice:
# - here, by every one-torch oracle (check_all) over the program as a campaign on the baseline
#   alone would have seen it: the baseline's observations under the candidate's system names, with
#   the torch-independent ones (eager, ref: run once, Note [A/B workers]). Per-observation oracles
#   and the ones that compare observations (config differential, history, spurious-dde, frontends)
#   alike;
# - at confirmation (Note [pre-existing at confirmation], campaign/ab_confirm.py): a confirmed
#   finding not marked here whose repro.py exits 1 under the baseline's interpreter and
#   environment too, with the same symptom.
def baseline_view(c: CheckInput) -> tuple[Observation, ...]:
    """The program's observations as a one-torch campaign on the baseline would have them."""
    theirs = tuple(dataclasses.replace(b, system=b.system[: -len(BASELINE)])
                   for b in c.observations if b.system.endswith(BASELINE))
    once = tuple(o for o in c.observations if not o.system.endswith(BASELINE) and o.system not in TORCH_SYSTEMS)
    return once + theirs


def _mark_pre_existing(c: CheckInput, found: list[Finding]) -> list[Finding]:
    if not any(f.oracle != ORACLE for f in found) or not any(o.system.endswith(BASELINE) for o in c.observations):
        return found  # nothing to judge, or not an A/B campaign
    theirs = {_same_bug(f) for f in check_all(c.program, c.eager, baseline_view(c))}
    return [dataclasses.replace(f, pre_existing=True) if f.oracle != ORACLE and _same_bug(f) in theirs else f
            for f in found]


def _same_bug(f: Finding) -> tuple:
    """What a baseline finding must share with the candidate's to be the same bug: system,
    config, oracle, symptom and where (the exception and torch frame, the output's sort): a trace
    error of another exception on the baseline is another bug (mutant d1c031ac2b91 of
    benchmarks/mutation: the candidate's AssertionError in create_symintnode was marked
    pre-existing for a baseline error elsewhere, and the A/B campaign missed the mutant)."""
    return f.system, f.config, f.oracle, f.symptom, f.signature.where


ORACLE_OBJ = register(Oracle(
    ORACLE, Severity.CRITICAL, "under the same program, the candidate torch must agree with eager wherever "
    "the baseline does, decide what the baseline decides, and guard at least as much (A/B)",
    ab_findings, rank=95, both_sides=True, repro_family="ab", supersedes=supersede, evidence=ABEvidence,
    legacy_evidence=legacy_evidence))
