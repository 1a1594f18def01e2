"""Known upstream issues: signatures of confirmed torch bugs that campaigns report as `known`
instead of new (so CI fails only on new findings). Data only: loading never evaluates code."""

from __future__ import annotations

import fnmatch
import json
from importlib import resources
from pathlib import Path

from shapefuzz import BadInput

__all__ = ["KnownError", "known_note", "load_known"]


class KnownError(BadInput):
    pass


def load_known(extra: tuple[str, ...] = ()) -> dict[str, str]:
    """signature -> note, from the bundled list and any extra files."""
    texts = [("bundled known_issues.json", resources.files("shapefuzz.cases").joinpath("known_issues.json").read_text())]
    for p in extra:
        try:
            texts.append((p, Path(p).read_text()))
        except OSError as e:
            raise KnownError(f"{p}: cannot read known-issues file ({e.strerror})") from None
    out: dict[str, str] = {}
    for where, text in texts:
        try:
            obj = json.loads(text)
            items = obj["issues"]
            for it in items:
                out[str(it["signature"])] = f"{it.get('upstream', '')}: {it.get('note', '')}"
        except (ValueError, KeyError, TypeError):
            raise KnownError(f"{where}: not a known-issues file (expected {{\"schema\": 1, \"issues\": "
                             f"[{{\"signature\": ..., \"upstream\": ..., \"note\": ...}}]}})") from None
    return out


def known_note(known: dict[str, str] | None, signature: str) -> str | None:
    """The note of the known issue a signature belongs to, or None. A known signature may hold
    `*` wildcards (matched with fnmatch, case-sensitive), so one upstream bug seen through many
    configs of one system is listed once: `eager-agreement:symbolic-shape:make_fx:*:rank+1:tensor`."""
    if not known:
        return None
    if signature in known:
        return known[signature]
    for pattern, note in known.items():
        if "*" in pattern and fnmatch.fnmatchcase(signature, pattern):
            return note
    return None
