"""The blame line of a finding: read off the finding, ref's observation and the program's own
truth, so it sits above the oracle it asks (truth) and the findings it reads.

Note [blame]: one line that tells a torch developer where to look first.
- config differential: the guilty toggle (or minimal pair), isolated for ref by a bisection over
  the toggles that differ (Note [blame by bisection] in shapefuzz/oracles/differential.py), for
  torch-env by the single-toggle configs; the oracle puts it in the signature's config field.
  When the baseline itself is wrong against eager, the blame says so and names no toggle.
- a finding against torch (make_fx, export, compile, torch-env): whether `ref`, our independent
  reference, sides with eager / the concrete answers (torch bug) or with torch (a shared
  misunderstanding: look at the generator's ground truth before filing).
"""

from __future__ import annotations

from shapefuzz.oracles.differential import Blame
from shapefuzz.oracles.findings import TORCH_SYSTEMS, Finding
from shapefuzz.oracles.truth import truth_agreement
from shapefuzz.program.kinds import kind_of
from shapefuzz.systems.evidence import of

__all__ = ["blame"]


def blame(finding: Finding, program, ref=None, eager=None) -> str:
    """The blame line of Note [blame], or "" when there is nothing to say. `ref` is the ref
    observation of the same program (default config), `eager` the eager one (tensor programs)."""
    if finding.oracle == "config-differential":
        return _config_blame(finding)
    if finding.system not in TORCH_SYSTEMS or ref is None:
        return ""
    if ref.outcome.status != "ok":
        return f"ref cannot tell ({ref.outcome.short()})"
    if not kind_of(program).has_eager:  # the program's own truth judges ref (question programs)
        wrong = [f for f in truth_agreement(program, ref) if f.symptom not in ("crash", "timeout")]
        if not wrong:
            return "torch bug: ref agrees with the concrete answers where torch does not"
        return ("shared misunderstanding: ref disagrees with the concrete answers too; check the "
                "generator's ground truth (shapefuzz/program/questions.py) before filing")
    return _tensor_blame(ref, eager)


def _config_blame(f: Finding) -> str:
    ev = of(f, Blame)  # the oracle's own bisection (Note [typed evidence])
    line = ev.line if ev is not None else ""
    if line and not line.startswith("unknown") and f.signature.config not in (f.config, line):
        # the oracle's own line: a bisection (Note [blame by bisection]) or a wrong baseline
        return line if line.startswith("the baseline") else f"guilty toggle: {line}"
    guilty = f.signature.config
    if guilty and guilty != f.config:
        return (f"guilty toggle: {guilty} (reverting it alone makes {f.system} agree with its "
                f"baseline; config {f.config} includes it)")
    return "guilty toggle not isolated: no single-toggle config agrees with the baseline (run --config all)"


def _tensor_blame(ref, eager) -> str:
    if eager is None or eager.outcome.status != "ok" or eager.reference is None or not eager.reference.ok:
        return ""
    want = [str(v.data[0]) if v.sort == "int" else "[" + ", ".join(map(str, v.shape)) + "]"
            for v in eager.reference.values]
    got = list(ref.out_eval)
    pairs = [(w, g) for w, g in zip(want, got) if g]
    if not pairs:
        return ""
    if all(w == g for w, g in pairs):
        return "torch bug: ref's symbolic shapes agree with eager"
    return ("shared misunderstanding or ref bug: ref's shapes differ from eager too; check the op's "
            "eager semantics and symbolic rule (shapefuzz/ops) before filing")
