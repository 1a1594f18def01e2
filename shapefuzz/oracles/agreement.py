"""Oracle 1, eager agreement: on the program's own inputs, the traced artifact returns what eager
returns (shapes and values), its symbolic output shapes evaluate under the binding to eager's
shapes, it does not fail where eager succeeds, and it does not succeed where eager fails.

The reference is eager with the trace's fallback branches forced (Note [branch contract])."""

from __future__ import annotations

from shapefuzz.oracles.base import Oracle, register
from shapefuzz.oracles.findings import Finding, Severity
from shapefuzz.oracles.signature import Signature, make_signature, mismatch_shape, root_where
from shapefuzz.systems.observation import Observation, RunResult, compare_runs

__all__ = ["eager_agreement", "first_wrong", "is_assert_rejection", "root_signature", "signature"]

ORACLE = "eager-agreement"


def signature(oracle: str, symptom: str, obs: Observation, *extra: str, expr: str = "",
              systems: tuple[str, ...] = (), config: str = "", shape: str = "") -> Signature:
    """The Signature of a finding (shapefuzz/oracles/signature.py, Note [signature]); `expr` is the
    expression involved (or `shape` its normalized shape), `systems`/`config` override the
    observation's (differentials)."""
    return make_signature(oracle, symptom, systems or obs.system, config or obs.config, *extra,
                          expr=expr, shape=shape)


def eager_agreement(eager: Observation, obs: Observation, undefined: frozenset[int]) -> list[Finding]:
    if obs.system == "eager":
        return []
    status = obs.outcome.status
    if status in ("dde", "constraint"):
        return []  # expected: later oracles (z3) decide whether the DDE was deserved
    if status in ("crash", "timeout"):  # the status is the finding's symptom
        return [Finding(ORACLE, Severity.HIGH, obs.system, obs.config, status, f"{obs.system} {status}ed",
                        obs.outcome.message, signature(ORACLE, status, obs))]
    if status == "error":
        if eager.outcome.status != "ok":
            return []  # both reject the program
        o = obs.outcome
        f = Finding(ORACLE, Severity.CRITICAL, obs.system, obs.config, "trace-error",
                    f"{obs.system} raised {o.exc_type} where eager succeeds",
                    f"{o.exc_type}: {o.message}\n(at {o.frame})",
                    signature(ORACLE, "trace-error", obs, o.exc_type, o.frame, root_where(o.op, o.aten)))
        # an instruction before the one that raised already went wrong (a squeeze that kept a
        # dim, then a permute of the wrong rank): that one is the root cause (Note [root cause])
        return [_root_finding(obs, f) if obs.diverges else f]
    return _artifact_findings(obs, undefined)


def is_assert_rejection(r: RunResult) -> bool:
    """A deferred runtime assert refused the input: loud, and by design for unbacked symbols
    (e.g. "unbacked sizes do not broadcast"), so not a finding by itself."""
    return not r.ok and "Runtime assertion failed" in r.error


def _artifact_findings(obs: Observation, undefined: frozenset[int]) -> list[Finding]:
    out = []
    if is_assert_rejection(obs.artifact):
        return out
    diff = compare_runs(obs.reference, obs.artifact, undefined)
    if diff is not None:
        k, key, why = diff
        final = Finding(ORACLE, Severity.CRITICAL, obs.system, obs.config, k,
                        f"{obs.system} disagrees with eager on the traced inputs ({k})", why,
                        signature(ORACLE, k, obs, key))
        if obs.diverges:  # Note [root cause]: one bug, one bucket, whatever its symptom
            return [_root_finding(obs, final)]
        out.append(final)
    if obs.reference.ok and obs.artifact.ok:
        for k, (v, got, expr) in enumerate(zip(obs.reference.values, obs.out_eval, obs.out_exprs)):
            if k in undefined and v.sort == "int":
                continue  # an int read from torch.empty's data
            want = str(v.data[0]) if v.sort == "int" else "[" + ", ".join(map(str, v.shape)) + "]"
            if got and got != want:
                out.append(Finding(
                    ORACLE, Severity.CRITICAL, obs.system, obs.config, "symbolic-shape",
                    f"{obs.system}'s symbolic output {k} evaluates to {got}, eager gives {want}",
                    f"output {k}: symbolic {expr} under {dict(obs.binding)} = {got}; eager {want}",
                    signature(ORACLE, "symbolic-shape", obs, v.sort, shape=mismatch_shape(expr, got, want))))
                if obs.diverges:  # bucketed by where it went wrong first (Note [root cause])
                    out[-1] = _root_finding(obs, out[-1])
                break
    return out


def _root_finding(obs: Observation, final: Finding) -> Finding:
    """Note [root cause]: a wrong symbolic output shape, or an artifact that returns another
    shape or value than eager, bucketed by the first instruction whose symbolic result differs
    from eager's, whichever way it reached the outputs (broadcast, summed ...) and whichever
    symptom it showed there: the signature holds that instruction's op and what is wrong with
    its result. (A squeeze that keeps an unbacked dim of size 1 gives a wrong symbolic shape
    when returned, and a graph that returns another shape than eager when broadcast afterwards:
    one bug.) `final` is the finding at the outputs: its symptom stays the finding's (what the
    repro checks), its detail follows."""
    op, _, _, got, want = obs.diverges
    return Finding(
        ORACLE, Severity.CRITICAL, obs.system, obs.config, final.symptom,
        f"{obs.system}'s symbolic shape of {op} evaluates to {got}, eager gives {want}",
        f"{first_wrong(obs.diverges)}\nat the outputs ({final.symptom}): {final.detail}",
        root_signature(ORACLE, obs, obs.diverges))


def first_wrong(diverges: tuple[str, ...]) -> str:
    """The detail line of a finding's root cause (Note [root cause])."""
    op, family, expr, got, want = diverges
    return f"first wrong: {op} ({family}): symbolic {expr} = {got}; eager {want}"


def root_signature(oracle: str, obs: Observation, diverges: tuple[str, ...]) -> Signature:
    """Note [root cause]: the signature of a wrong symbolic result, by the first instruction
    whose result differs from eager's (`diverges`: Observation.diverges or a replay's) and what
    is wrong with it, whichever oracle met it at the outputs."""
    op, family, expr, got, want = diverges
    sort = "tensor" if expr.lstrip().startswith("[") else "int"
    return signature(oracle, "symbolic-shape", obs, sort, root_where(op, family=family),
                     shape=mismatch_shape(expr, got, want))


ORACLE_OBJ = register(Oracle(
    ORACLE, Severity.CRITICAL, "on the inputs it was traced with, the traced program must behave as eager",
    lambda c: eager_agreement(c.eager, c.obs, c.undefined), kinds=("tensors",),
    per_observation=True, rank=10))
