"""Known upstream issues: signatures of confirmed torch bugs that campaigns report as `known`
instead of new (so CI fails only on new findings). Data only: loading never evaluates code."""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from shapefuzz import BadInput

__all__ = ["KnownError", "KnownIssue", "check_known", "known_note", "load_entries", "load_known"]

#: what each entry holds (schema 2); schema 1 files have signature, upstream (a description), note
FIELDS = ("signature", "title", "upstream", "fix", "fixed_in", "status", "case", "note")


class KnownError(BadInput):
    pass


@dataclass(frozen=True, slots=True)
class KnownIssue:
    """One known upstream bug: the signature (`*` wildcards allowed) its findings have, the
    upstream issue and fix ("owner/repo#N", "" when none exists), the first torch release that
    has the fix ("" when none does yet), and the corpus case whose repro.py shows it."""

    signature: str
    title: str = ""
    upstream: str = ""
    fix: str = ""
    fixed_in: str = ""
    status: str = ""
    case: str = ""
    note: str = ""

    def line(self) -> str:
        """The note a report shows beside a known finding."""
        where = self.upstream or "no upstream issue"
        fix = f", fix {self.fix}" + (f" (in torch {self.fixed_in})" if self.fixed_in else "") if self.fix else ""
        return f"{self.title or 'known'} [{where}{fix}]: {self.note}"


def load_entries(extra: tuple[str, ...] = ()) -> list[KnownIssue]:
    """Every entry of the bundled list and of any extra files."""
    texts = [("bundled known_issues.json", resources.files("shapefuzz.cases").joinpath("known_issues.json").read_text())]
    for p in extra:
        try:
            texts.append((p, Path(p).read_text()))
        except OSError as e:
            raise KnownError(f"{p}: cannot read known-issues file ({e.strerror})") from None
    out: list[KnownIssue] = []
    for where, text in texts:
        try:
            out += [KnownIssue(str(it["signature"]), **{k: str(it[k]) for k in FIELDS[1:] if k in it})
                    for it in json.loads(text)["issues"]]
        except (ValueError, KeyError, TypeError):
            raise KnownError(f"{where}: not a known-issues file (expected {{\"schema\": 2, \"issues\": "
                             f"[{{\"signature\": ..., \"upstream\": ..., \"note\": ...}}]}})") from None
    return out


def load_known(extra: tuple[str, ...] = ()) -> dict[str, str]:
    """signature -> note, from the bundled list and any extra files."""
    return {k.signature: k.line() for k in load_entries(extra)}


def check_known(entries: list[KnownIssue], root: Path, run) -> list[tuple[KnownIssue, str]]:
    """(entry, verdict) for each entry: "reproduces", "no longer reproduces" (its case's
    repro.py exited 0: fixed in this torch, promote the case to fixed), "no case" or the
    repro's failure. `run(path) -> exit code` runs a repro.py."""
    out = []
    for k in entries:
        repro = root / k.case / "repro.py"
        if not k.case:
            out.append((k, "no case"))
        elif not repro.is_file():
            out.append((k, f"missing {repro}"))
        else:
            rc = run(repro)
            out.append((k, {0: "no longer reproduces", 1: "reproduces"}.get(rc, f"repro.py exited {rc}")))
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
        # `[` is literal: signatures hold brackets (`Cmp[FloorDiv]`), fnmatch's character classes
        if "*" in pattern and fnmatch.fnmatchcase(signature, pattern.replace("[", "[[]")):
            return note
    return None
