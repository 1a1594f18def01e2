"""Findings: what oracles produce. A finding is a value, never an exception (STYLE 4)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from shapefuzz.oracles.signature import Signature
from shapefuzz.systems.evidence import from_json as evidence_from_json
from shapefuzz.systems.evidence import to_json as evidence_json

__all__ = ["FILE_KEYS", "SEVERITIES", "TORCH_SYSTEMS", "Finding", "Severity"]


class Severity(StrEnum):
    """Most severe first (reports and confirmation order by it). A str: files and reports hold
    the value."""

    CRITICAL = "critical"  # a wrong answer: the shape system disagrees with eager or the facts
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


SEVERITIES = tuple(Severity)

#: Note [file keys] (systems/observation.py): case.json, report.json and campaign-state.json keep
#: the finding's symptom under its old key "kind"
FILE_KEYS = {"symptom": "kind"}


@dataclass(frozen=True, slots=True)
class Finding:
    oracle: str
    severity: Severity  # a str naming one is taken (files, plugins) and checked
    system: str
    config: str
    symptom: str  # e.g. wrong-value, accepts-invalid, trace-error: the signature's symptom
    summary: str  # one line
    detail: str  # what differs, as a user reads it
    signature: Signature  # stable across runs and seeds: the dedupe key (a str is read back)
    replay_index: int = -1  # -1: the program's own inputs; else the index of the replay input
    #: an A/B campaign's one-torch finding on the candidate that the baseline shows too on the same
    #: program: a bug of both builds, not of the change (Note [pre-existing findings], oracles/ab.py)
    pre_existing: bool = False
    #: the oracle's typed evidence of this finding (Note [typed evidence] in
    #: shapefuzz.systems.evidence): what repro forms read, where `detail` is only for people
    evidence: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", Severity(self.severity))  # ValueError names an unknown one
        if isinstance(self.signature, str):  # a key from a file or a plugin: Signature.from_key
            object.__setattr__(self, "signature", Signature.from_key(self.signature, _configs()))

    @property
    def key(self) -> str:
        """The signature rendered: what files, reports and known_issues.json hold."""
        return self.signature.key()

    def to_json(self) -> dict:
        out = {FILE_KEYS.get(f.name, f.name): getattr(self, f.name) for f in fields(self)}
        out["signature"] = self.key
        out["signature_fields"] = self.signature.to_json()
        out["evidence"] = evidence_json(self.evidence)
        return out

    @classmethod
    def from_json(cls, obj: dict) -> Finding:
        """The inverse of to_json; "signature_fields" (absent in older files) must render back to
        "signature", else the key alone is kept; "evidence" (absent in older files: None) is read
        as data (shapefuzz.systems.evidence.from_json; a ValueError names what does not fit)."""
        sig: Signature | str = obj["signature"]
        try:
            parsed = Signature.from_json(obj["signature_fields"])
            if parsed.key() == sig:
                sig = parsed
        except (KeyError, TypeError, ValueError, AttributeError):
            pass
        keys = {f.name: FILE_KEYS.get(f.name, f.name) for f in fields(cls)}
        return cls(**{**{name: obj[key] for name, key in keys.items() if key in obj}, "signature": sig,
                      "evidence": evidence_from_json(obj.get("evidence"))})


def _configs() -> tuple[str, ...]:
    """Every config name (they may hold ':'), for reading a key back."""
    from shapefuzz.systems import CONFIGS  # lazy: no system at top (test_layers)

    return tuple(c for cs in CONFIGS.values() for c in cs)


#: the systems that run torch (the others: eager, ref); Note [blame] in blame.py
TORCH_SYSTEMS = ("make_fx", "export", "compile", "torch-env")
