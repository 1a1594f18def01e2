"""Oracle 7, spurious DDE [medium, symptom `completeness`]: a system raised a data-dependent error
on an expression that the facts the program itself gave it decide, as z3 shows.

The system asked z3 while it ran (shapefuzz.systems.claims.dde_check over its Observation.axioms
and final backed ranges, an SmtCheck with oracle "spurious-dde"); this oracle reads the verdict:
`unsat` (the facts prove the expression true, or prove it false) is a finding; `deserved` (both
answers possible), unknown and timeout are counted verdicts, never findings. Where `ref`
answered the same question with a claim, its answer is the finding's evidence too (the
system-differential `ok-vs-dde` that KNOWN_DIFFERENCES leaves to this oracle).

On tensor programs (make_fx, export) only a program eager ran is judged, and the facts are those
the ShapeEnv that raised held at that moment (shapefuzz.systems.traced.dde_facts: its guards,
deferred runtime asserts, replacements and finite value-range bounds), none of them false at the
run's own values (else no verdict: a wrong fact is another bug); the expression is the unhinted
one. The signature names the aten op torch was dispatching (or the program op that asked).

Note [facts torch is given]: a DDE is spurious only if what torch was actually told implies the
answer. The facts are the ones a system records as axioms (Note [axioms] in systems/claims.py;
tensor programs: the raising ShapeEnv's own, above):
- a size's creation range (>= 2 under 0/1 specialization, else >= 0), an unbacked tensor size
  >= 0, a nonzero / masked_select count <= its input's numel (tensor programs);
- torch._check(cond), which torch keeps as a guard (backed) or a deferred runtime assert;
  torch._check_is_size(v), which is torch._check(v >= 0) plus a size-like mark;
- a range constraint on a *symbol* (torch._constrain_as_size as traced, constrain_range);
- the guards and deferred asserts recorded so far (earlier questions' guards included);
- a divisor is non-zero wherever the expression divides: the expression is undefined otherwise,
  eager raised ZeroDivisionError before the question, and torch's own translation validator
  assumes it too.
Not facts, and so never the reason for a finding:
- the concrete value of an unbacked symbol (torch is never told it) and the hints of backed
  ones beyond their guards (a hint is for policy, not for semantics);
- a range constraint on a non-symbol expression: constrain_range ignores it (torch's
  `_constrain_range` handles only symbols and constants), so no axiom is recorded for it;
- a nonzero / masked_select count <= the numel of an input with symbolic sizes, in a tensor
  program's DDE: torch records only a bound of numel's range (fake_impls.nonzero), not the
  relation, so a DDE that needs it is a missing fact, not one torch was given and ignored;
- the size-oblivious assumption that a size-like symbol is >= 2: a policy of
  guard_size_oblivious, not a fact about the values;
- questions answered by guard_or_false / guard_or_true / statically_known_true: they never
  raise, so they are no DDE at all (the history oracle looks at their fallbacks).
"""

from __future__ import annotations

from shapefuzz.oracles.agreement import signature
from shapefuzz.oracles.base import Compares, Oracle, register
from shapefuzz.oracles.buckets import expr_class, one_per_bucket, valid_until
from shapefuzz.oracles.findings import Finding, Severity
from shapefuzz.systems.observation import Observation

__all__ = ["expr_class", "one_per_bucket", "root_bucket", "spurious_dde", "valid_until"]

ORACLE = "spurious-dde"
SYMPTOM = "completeness"
#: the torch call a question program's DDE came from, by question mode
_RAISER = {"bool": "bool", "size_oblivious": "guard_size_oblivious"}


def spurious_dde(program, observations, eager: Observation | None = None) -> list[Finding]:
    """Question programs are judged by their truth (valid_until), tensor programs by eager:
    only a program eager ran is valid (its facts hold)."""
    ref = next((o for o in observations if o.system == "ref" and o.config == "default"), None)
    questions = getattr(program, "asks", None) is not None
    if not questions and (eager is None or eager.outcome.status != "ok"):
        return []
    out = []
    for obs in observations:
        c = _verdict(obs)
        if c is None or (questions and not valid_until(program, len(obs.decisions))):
            continue
        cls, raiser = root_bucket(c.claim, obs), _raiser(program, obs)
        evidence = _ref_evidence(program, ref, obs)
        detail = (f"data-dependent error on {c.claim} (raised by {raiser or '?'}), but {c.reason} "
                  f"(z3)\nroot cause: {cls} (whole expression: {expr_class(c.claim)})\n"
                  f"facts: {_facts_text(obs)}" + (f"\n{evidence}" if evidence else ""))
        # Note [root cause bucket]: the signature holds what torch lost, not the raiser
        out.append(Finding(ORACLE, Severity.MEDIUM, obs.system, obs.config, SYMPTOM,
                           f"{obs.system} ({obs.config}): spurious DDE on {c.claim}"[:200], detail,
                           signature(ORACLE, SYMPTOM, obs, obs.outcome.frame, shape=cls),
                           len(obs.decisions) if questions else 0))  # the question that raised
    return one_per_bucket(out)


def root_bucket(claim: str, obs: Observation) -> str:
    """The finding's shape: the root cause (Note [root cause bucket] in oracles/root_cause.py),
    or the whole expression's class when that analysis cannot tell."""
    from shapefuzz.oracles.root_cause import (  # lazy: registry import stays sympy-free
        dde_bucket,
        knowledge,
    )

    return dde_bucket(claim, knowledge(obs)) or expr_class(claim)


def _verdict(obs: Observation):
    """The z3 verdict that the facts decide obs's DDE, or None."""
    if obs.system == "ref" or obs.outcome.status != "dde":
        return None  # ref's reasoning is deliberately smaller than torch's: its DDEs are its own
    return next((c for c in obs.smt if c.oracle == ORACLE and c.status == "unsat"), None)


def _raiser(program, obs: Observation) -> str:
    """The torch call that raised: the question's mode (question programs), else the aten op
    torch was dispatching, or the program's op that asked (a shape branch, a SymInt)."""
    asks = getattr(program, "asks", None)
    if asks is None:
        return obs.outcome.aten or obs.outcome.op
    k = len(obs.decisions)
    pos = asks()
    return _RAISER.get(program.instrs[pos[k]].args[0], "") if k < len(pos) else ""


def _ref_evidence(program, ref: Observation | None, obs: Observation) -> str:
    """What ref answered at the question that raised, when it answered with a claim."""
    k = len(obs.decisions)
    if ref is None or getattr(program, "asks", None) is None or k >= len(ref.decisions):
        return ""
    d = ref.decisions[k]
    return "" if d.how == "fallback" else f"ref answers question {k} ({d.expr}): {d.answer} ({d.how})"


def _facts_text(obs: Observation) -> str:
    return "; ".join(f"[{at}] {origin}: {e}" for at, origin, e in obs.axioms)[:3000] or "(none)"


def _smt_input(finding: Finding, obs: Observation, kind: str) -> tuple:
    return None, None  # the program's own values show it: nothing else to replay


ORACLE_OBJ = register(Oracle(
    ORACLE, Severity.MEDIUM, "a data-dependent error must not be raised on an expression that the facts "
    "the program gave torch decide (z3 proves it from them)",
    lambda c: spurious_dde(c.program, c.observations, c.eager), rank=65,
    replay_input=_smt_input, compares=Compares.PROOF))
