"""Truth agreement for shape-question programs (the eager-agreement oracle of Note [question
truth]): every claim a ShapeEnv makes (an answer that is not its mode's fallback) must equal the
concrete answer; every fallback must be the mode's fallback value; every value's expression must
evaluate, under the binding, to the concrete value; a valid program must not raise an error, nor
a question whose mode falls back a data-dependent one (Note [guard-free questions])."""

from __future__ import annotations

from shapefuzz.oracles.agreement import signature
from shapefuzz.oracles.base import Oracle, register
from shapefuzz.oracles.findings import Finding, Severity
from shapefuzz.program import Ref
from shapefuzz.program.questions import FALLBACK, QProgram, truth
from shapefuzz.systems.evidence.truth import question_replays
from shapefuzz.systems.observation import Observation

__all__ = ["truth_agreement"]

ORACLE = "truth"
#: the modes that promise to add no guard and no runtime assert either (Note [guard-free questions])
NO_GUARD_MODES = ("statically_known_true", "statically_known_false")
#: size-oblivious answers assume every size-like symbol is >= 2 (by design, not by proof), so
#: they are claims about that assumption, not about the concrete values
UNCHECKED_MODES = ("size_oblivious",)


def truth_agreement(program: QProgram, obs: Observation) -> list[Finding]:
    t = truth(program)
    status = obs.outcome.status
    if status in ("crash", "timeout"):  # the status is the finding's symptom
        return [Finding(ORACLE, Severity.HIGH, obs.system, obs.config, status, f"{obs.system} {status}ed",
                        obs.outcome.message, signature(ORACLE, status, obs))]
    if status == "error" and t.failed_check is None and obs.outcome.exc_type != "Unsupported":
        o = obs.outcome
        return [Finding(ORACLE, Severity.CRITICAL, obs.system, obs.config, "error-on-valid",
                        f"{obs.system} raised {o.exc_type} on a valid question program",
                        f"{o.exc_type}: {o.message}", signature(ORACLE, "error-on-valid", obs, o.exc_type, o.frame))]
    asks = program.asks()
    if status == "dde":
        return _guard_free_dde(program, obs, t)
    valid_asks = [k for k, pos in enumerate(asks) if t.failed_check is None or pos < t.failed_check]
    for k in valid_asks:
        if k >= len(obs.decisions) or k >= len(t.answers):
            break
        d, want = obs.decisions[k], t.answers[k]
        mode = program.instrs[asks[k]].args[0]
        if mode in UNCHECKED_MODES:
            continue
        if mode in NO_GUARD_MODES and d.how in ("guard", "assert"):
            return [Finding(ORACLE, Severity.HIGH, obs.system, obs.config, "guard-in-static",
                            f"{obs.system} ({obs.config}): {mode} added a {d.how}",
                            f"question {k}: {mode}({d.expr}) answered {d.answer} by a {d.how}; it "
                            "promises to add none (Note [guard-free questions])",
                            signature(ORACLE, "guard-in-static", obs, mode))]
        if d.how == "fallback":
            fb = FALLBACK[mode]
            if fb is not None and d.answer != str(fb):
                return [_f(obs, "wrong-fallback", f"question {k} ({mode}) fell back to {d.answer}, "
                           f"but its fallback is {fb}", d.expr, mode)]
            continue
        if d.answer != str(want):
            v = _wrong_operand(program, k, obs.out_eval, t.values)
            if v is not None and t.failed_check is None:  # Note [a claim over a wrong value]
                return _values(program, obs, t)
            return [_f(obs, f"wrong-{d.how}", f"question {k}: {mode}({d.expr}) answered {d.answer} "
                       f"({d.how}); the concrete answer is {want}", d.expr, mode, answer=d.answer,
                       question=_question(program, obs, k))]
    return _values(program, obs, t) or _replays(program, obs)


def _guard_free_dde(program: QProgram, obs: Observation, t) -> list[Finding]:
    """A DDE of a question that falls back (Note [guard-free questions]).

    Note [guard-free questions]: guard_or_false, guard_or_true, statically_known_true and
    statically_known_false (the modes with a FALLBACK) promise never to raise a data-dependent
    error: where the answer is not known they fall back. One that raised broke its API
    whatever the facts (the spurious-dde oracle's z3 verdict is for the modes that may raise:
    a DDE of guard_or_false on an expression the facts do not decide was `deserved` there, and
    no finding: mutant d5c320962d5d of torch's _guard_or, which guards under
    backed_size_oblivious, survived both campaigns). The raising question is Outcome.op
    (`ask:<mode>`, torch-env) and must be one the program's facts reach (valid).
    statically_known_true and statically_known_false promise more: no guard and no runtime
    assert, and a bool, so a caller's `if` adds none either (a statically_known_true that
    returned its SymBool guarded in the caller's `if`: mutant 0a4a97871c90)."""
    asks, k = program.asks(), len(obs.decisions)
    if k >= len(asks) or (t.failed_check is not None and asks[k] > t.failed_check):
        return []
    mode = program.instrs[asks[k]].args[0]
    if FALLBACK[mode] is None or obs.outcome.op != f"ask:{mode}":
        return []
    o = obs.outcome
    return [Finding(ORACLE, Severity.HIGH, obs.system, obs.config, "dde-in-guard-free",
                    f"{obs.system} ({obs.config}): {mode} raised a data-dependent error",
                    f"question {k}: {mode}({o.expr}) raised {o.exc_type}; it falls back to "
                    f"{FALLBACK[mode]} where the answer is not known\n(at {o.frame})",
                    signature(ORACLE, "dde-in-guard-free", obs, mode, o.frame))]


def _replays(program: QProgram, obs: Observation) -> list[Finding]:
    """Oracle 4 by sampling (shapefuzz.systems.qreplay): under other values that satisfy every
    guard and assert, every claim must still hold and every value expression still evaluate to
    the concrete value."""
    from shapefuzz.systems.qreplay import with_values  # lazy: registry import stays sympy-free

    if obs.outcome.status != "ok":
        return []
    asks = program.asks()
    for i, r in enumerate(question_replays(obs)):
        if not r.accepted:
            continue
        p2 = with_values(program, r.values)
        t2 = truth(p2)
        if t2.failed_check is not None:
            continue  # the new values break a check the trace did not turn into an assert
        for k, d in enumerate(obs.decisions[: len(t2.answers)]):
            mode = program.instrs[asks[k]].args[0]
            if d.how != "fallback" and mode not in UNCHECKED_MODES and d.answer != str(t2.answers[k]):
                if _wrong_operand(program, k, r.out_eval, t2.values) is not None:
                    break  # Note [a claim over a wrong value]: the values' loop below names it
                return [_f(obs, "unsound-guards", f"question {k}: {mode}({d.expr}) was answered {d.answer} "
                           f"({d.how}); with values {list(r.values)} every guard and assert holds "
                           f"but the concrete answer is {t2.answers[k]}\nguards: {list(obs.guards)}"
                           f"\nasserts: {list(obs.asserts)}", d.expr, mode, i, answer=d.answer,
                           question=_question(program, obs, k))]
        for k, (got, expr) in enumerate(zip(r.out_eval, obs.out_exprs)):
            if got and got != str(t2.values[k]):
                return [_f(obs, "unsound-value-expr", f"value v{k} = {expr} evaluates to {got} with values "
                           f"{list(r.values)} (guards and asserts hold); concretely {t2.values[k]}",
                           expr, "value", i, at=_wrong_at(program, obs, k))]
    return []


# Note [a claim over a wrong value]: a question reads values whose expressions torch built
# earlier; when an operand's expression already evaluates wrong (torch folded `max(s0, 1)` to
# `s0` assuming a size-0 backed symbol is positive), the claim over it is wrong only through
# that value: its question, over the operands' expressions, is `s0 == s0`, which no assumption
# is needed for, so the claim's bucket was its folded text `C`, a new bucket for the known root
# cause (torch 2.13.0, campaign_bench torch-env seed 1). The wrong value is reported instead,
# with its own root-cause bucket (_wrong_at), as the values' check would have.
def _wrong_operand(program: QProgram, k: int, evaluated, values) -> int | None:
    """The first operand of question k whose expression evaluates to other than its concrete
    value (`evaluated`: the observation's or a replay's out_eval), or None."""
    _, _, a, b = program.instrs[program.asks()[k]].args
    for x in (a, b):
        if isinstance(x, Ref) and x.index < min(len(evaluated), len(values)):
            got = evaluated[x.index]
            if got and got != str(values[x.index]):
                return x.index
    return None


def _values(program: QProgram, obs: Observation, t) -> list[Finding]:
    if t.failed_check is not None:
        return []  # a false check's replacement rewrites earlier values too: nothing to compare
    for k, (got, expr) in enumerate(zip(obs.out_eval, obs.out_exprs)):
        if got and got != str(t.values[k]):
            return [_f(obs, "wrong-value-expr", f"value v{k} = {expr} evaluates to {got} under "
                       f"{dict(obs.binding)}; its concrete value is {t.values[k]}", expr, "value",
                       at=_wrong_at(program, obs, k))]
    return []


def _f(obs: Observation, symptom: str, detail: str, expr: str, mode: str, replay: int = -1,
       answer: str = "", question: str = "", at: str = "") -> Finding:
    """`replay`: index into the question replays (evidence.truth) of the values that show an
    unsound claim; `answer`: the claim's answer (a wrong claim is bucketed by the assumption
    that makes it, when one does: Note [root cause bucket]); `question`: the question over the values' expressions, for an
    `expr` torch's sympy already folded to a constant (the assumption was made there); `at`: a
    wrong value's root-cause bucket (_wrong_at)."""
    folded = question and not any(ch.isalpha() for ch in expr.replace("True", "").replace("False", ""))
    shape = at or (_assumed(obs, question if folded else expr, answer) if answer else "")
    return Finding(ORACLE, Severity.CRITICAL, obs.system, obs.config, symptom,
                   f"{obs.system} ({obs.config}): {symptom} on {mode}", detail + (
                       f"\nroot cause: {shape}" if shape else ""),
                   signature(ORACLE, symptom, obs, mode if symptom == "wrong-fallback" else "",
                             expr="" if shape else expr, shape=shape),
                   replay)  # the mode only matters when the fallback is wrong (Note [signature])


def _wrong_at(program: QProgram, obs: Observation, k: int) -> str:
    """Note [root cause bucket] for a wrong value: values are checked in program order, so value
    k is the first wrong one and its operands evaluate right; the bug is the rule torch applied
    to build it, named by the program op and the head of each operand's expression (what torch's
    simplification rules look at): `(a // b) // c` folded with a negative c is
    `wrong[//(FloorDiv,sym)]` whatever a, b and the values are. "" when it cannot tell."""
    ins = next((i for i, n in program.definitions() if n == k), None)
    if ins is None:
        return ""
    if ins.op != "binop":
        return f"wrong[{ins.op}]"
    op, a, b = ins.args
    return f"wrong[{op}({_head(obs, a, Ref)},{_head(obs, b, Ref)})]"


def _head(obs: Observation, x, ref_type) -> str:
    """An operand's head: const, sym, or the head function of its expression (FloorDiv, Add ...)."""
    from shapefuzz.oracles.read_expr import read_expr  # lazy: registry import stays sympy-free

    if not isinstance(x, ref_type):
        return "const"
    try:
        e = read_expr(obs.out_exprs[x.index])
    except Exception:  # an expression the reader does not know: an unnamed head, not a crash
        return "other"  # (not "?": known_issues.json's wildcards read it as any character)
    return "const" if e.is_Number else "sym" if e.is_Symbol else type(e).__name__


def _question(program: QProgram, obs: Observation, k: int) -> str:
    """Question k as torch was asked it: its comparison over the values' expressions."""
    _, cmp, a, b = program.instrs[program.asks()[k]].args
    if any(isinstance(x, Ref) and x.index >= len(obs.out_exprs) for x in (a, b)):
        return ""
    side = lambda x: f"({obs.out_exprs[x.index]})" if isinstance(x, Ref) else str(x)
    return f"{side(a)} {cmp} {side(b)}"


def _assumed(obs: Observation, expr: str, answer: str) -> str:
    """`assumes[...]` for the claim `expr` is `answer` (shapefuzz/oracles/root_cause.py)."""
    from shapefuzz.oracles.root_cause import (  # lazy: registry import stays sympy-free
        assumption_bucket,
        knowledge,
    )

    claim = {"True": expr, "False": f"Not({expr})"}.get(answer, f"Eq({expr}, {answer})")
    return assumption_bucket(claim, knowledge(obs))


ORACLE_OBJ = register(Oracle(
    ORACLE, Severity.CRITICAL, "every answer the ShapeEnv claims (not an undecided fallback) must equal the "
    "concrete answer for the values the sizes really have, also for other values its guards accept",
    lambda c: truth_agreement(c.program, c.obs), kinds=("questions",), per_observation=True,
    rank=40))
