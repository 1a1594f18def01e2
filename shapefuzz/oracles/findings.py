"""Findings: what oracles produce. A finding is a value, never an exception (STYLE 4)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from shapefuzz.oracles.signature import Signature

__all__ = ["SEVERITIES", "TORCH_SYSTEMS", "Finding", "blame"]

SEVERITIES = ("critical", "high", "medium", "low")


@dataclass(frozen=True, slots=True)
class Finding:
    oracle: str
    severity: str
    system: str
    config: str
    kind: str  # e.g. wrong-value, accepts-invalid, trace-error
    summary: str  # one line
    detail: str  # what differs, as a user reads it
    signature: Signature  # stable across runs and seeds: the dedupe key (a str is read back)
    replay_index: int = -1  # -1: the program's own inputs; else the index of the replay input
    #: an A/B campaign's one-torch finding on the candidate that the baseline shows too on the same
    #: program: a bug of both builds, not of the change (Note [pre-existing findings], oracles/ab.py)
    pre_existing: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.signature, str):  # a key from a file or a plugin: Signature.from_key
            object.__setattr__(self, "signature", Signature.from_key(self.signature, _configs()))

    @property
    def key(self) -> str:
        """The signature rendered: what files, reports and known_issues.json hold."""
        return self.signature.key()

    def to_json(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["signature"] = self.key
        out["signature_fields"] = self.signature.to_json()
        return out

    @classmethod
    def from_json(cls, obj: dict) -> Finding:
        """The inverse of to_json; "signature_fields" (absent in older files) must render back to
        "signature", else the key alone is kept."""
        sig: Signature | str = obj["signature"]
        try:
            parsed = Signature.from_json(obj["signature_fields"])
            if parsed.key() == sig:
                sig = parsed
        except (KeyError, TypeError, ValueError, AttributeError):
            pass
        return cls(**{**{f.name: obj[f.name] for f in fields(cls) if f.name in obj}, "signature": sig})


def _configs() -> tuple[str, ...]:
    """Every config name (they may hold ':'), for reading a key back."""
    from shapefuzz.systems import CONFIGS

    return tuple(c for cs in CONFIGS.values() for c in cs)


# Note [blame]: one line that tells a torch developer where to look first.
# - config differential: the guilty toggle (or minimal pair), isolated for ref by a bisection over
#   the toggles that differ (Note [blame by bisection] in shapefuzz/oracles/differential.py), for
#   torch-env by the single-toggle configs; the oracle puts it in the signature's config field.
#   When the baseline itself is wrong against eager, the blame says so and names no toggle.
# - a finding against torch (make_fx, export, compile, torch-env): whether `ref`, our independent
#   reference, sides with eager / the concrete answers (torch bug) or with torch (a shared
#   misunderstanding: look at the generator's ground truth before filing).
TORCH_SYSTEMS = ("make_fx", "export", "compile", "torch-env")


def blame(finding: Finding, program, ref=None, eager=None) -> str:
    """The blame line of Note [blame], or "" when there is nothing to say. `ref` is the ref
    observation of the same program (default config), `eager` the eager one (tensor programs)."""
    if finding.oracle == "config-differential":
        return _config_blame(finding)
    if finding.system not in TORCH_SYSTEMS or ref is None:
        return ""
    if ref.outcome.kind != "ok":
        return f"ref cannot tell ({ref.outcome.short()})"
    from shapefuzz.program.kinds import kind_of

    if not kind_of(program).has_eager:  # the program's own truth judges ref (question programs)
        from shapefuzz.oracles.truth import truth_agreement

        wrong = [f for f in truth_agreement(program, ref) if f.kind not in ("crash", "timeout")]
        if not wrong:
            return "torch bug: ref agrees with the concrete answers where torch does not"
        return ("shared misunderstanding: ref disagrees with the concrete answers too; check the "
                "generator's ground truth (shapefuzz/program/questions.py) before filing")
    return _tensor_blame(ref, eager)


def _config_blame(f: Finding) -> str:
    line = next((x[len("blame: "):] for x in f.detail.splitlines() if x.startswith("blame: ")), "")
    if line and not line.startswith("unknown") and f.signature.config not in (f.config, line):
        # the oracle's own line: a bisection (Note [blame by bisection]) or a wrong baseline
        return line if line.startswith("the baseline") else f"guilty toggle: {line}"
    guilty = f.signature.config
    if guilty and guilty != f.config:
        return (f"guilty toggle: {guilty} (reverting it alone makes {f.system} agree with its "
                f"baseline; config {f.config} includes it)")
    return "guilty toggle not isolated: no single-toggle config agrees with the baseline (run --config all)"


def _tensor_blame(ref, eager) -> str:
    if eager is None or eager.outcome.kind != "ok" or eager.reference is None or not eager.reference.ok:
        return ""
    want = [str(v.data[0]) if v.kind == "int" else "[" + ", ".join(map(str, v.shape)) + "]"
            for v in eager.reference.values]
    got = list(ref.out_eval)
    pairs = [(w, g) for w, g in zip(want, got) if g]
    if not pairs:
        return ""
    if all(w == g for w, g in pairs):
        return "torch bug: ref's symbolic shapes agree with eager"
    return ("shared misunderstanding or ref bug: ref's shapes differ from eager too; check the op's "
            "eager semantics and symbolic rule (shapefuzz/ops) before filing")
