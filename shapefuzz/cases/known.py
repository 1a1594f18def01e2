"""Known upstream issues: signatures of confirmed torch bugs that campaigns report as `known`
instead of new (so CI fails only on new findings). Data only: loading never evaluates code.

Note [known versions]: an entry (schema 3) records the torch releases its case's repro.py was
seen to reproduce in (`seen_in`) and the first one it was seen fixed in (`fixed_in`, "" while
none). For a running torch the file's own claim is: it reproduces when the version is in
seen_in (a recorded regression after a fix wins), it is fixed when fixed_in <= the version,
and it is open otherwise. `shapefuzz known check` compares that claim with the repro's exit
code; a campaign finding whose entry is fixed in the running torch is a regression of that fix,
never `known` (DESIGN "Torch versions")."""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from shapefuzz import BadInput
from shapefuzz.cases.versions import at_least, release, version_key

__all__ = ["SCHEMA", "Check", "KnownError", "KnownIssue", "check_known", "dump_entries", "expected_status",
           "fixed_regression", "known_note", "load_entries", "load_file", "load_known", "parse_entries",
           "with_observation", "write_entries"]

SCHEMA = 3
#: what each entry holds, in file order (schema 3); schema 2 lacks seen_in and its fixed_in was
#: free text; schema 1 files have signature, upstream (a description) and note
FIELDS = ("signature", "title", "upstream", "fix", "seen_in", "fixed_in", "status", "case", "note")
EXPECTED = ('{"schema": 3, "issues": [{"signature": "...", "seen_in": ["2.13.0"], "fixed_in": "", '
            '"upstream": "...", "case": "corpus/...", "note": "..."}]}')


class KnownError(BadInput):
    pass


@dataclass(frozen=True, slots=True)
class KnownIssue:
    """One known upstream bug: the signature (`*` wildcards allowed) its findings have, the
    upstream issue and fix ("owner/repo#N", "" when none exists), the torch releases its repro
    reproduced in and the first one seen fixed ("" while none; Note [known versions]), and the
    case whose repro.py shows it."""

    signature: str
    title: str = ""
    upstream: str = ""
    fix: str = ""
    seen_in: tuple[str, ...] = ()
    fixed_in: str = ""
    status: str = ""
    case: str = ""
    note: str = ""

    def line(self) -> str:
        """The note a report shows beside a known finding."""
        where = self.upstream or "no upstream issue"
        fix = f", fix {self.fix}" + (f" (in torch {self.fixed_in})" if self.fixed_in else "") if self.fix else ""
        return f"{self.title or 'known'} [{where}{fix}]: {self.note}"

    def name(self) -> str:
        """How a regression of its fix names the entry."""
        return self.title or self.upstream or self.signature


# --- versions ---------------------------------------------------------------------------------
# shapefuzz/cases/versions.py: releases without their local build tag, in PEP 440 order.

def _at_or_before(fixed_in: str, version: str) -> bool:
    return bool(fixed_in) and at_least(version, fixed_in)


# --- loading ----------------------------------------------------------------------------------

def load_entries(extra: tuple[str, ...] = ()) -> list[KnownIssue]:
    """Every entry of the bundled list and of any extra files."""
    text = resources.files("shapefuzz.cases").joinpath("known_issues.json").read_text()
    out = parse_entries(text, "bundled known_issues.json")
    for p in extra:
        out += load_file(Path(p))
    return out


def load_file(path: Path) -> list[KnownIssue]:
    """The entries of one known-issues file (any schema, migrated to 3 in memory)."""
    try:
        text = path.read_text()
    except OSError as e:
        raise KnownError(f"{path}: cannot read known-issues file ({e.strerror})") from None
    return parse_entries(text, str(path))


def parse_entries(text: str, where: str) -> list[KnownIssue]:
    try:
        obj = json.loads(text)
    except ValueError:
        raise KnownError(f"{where}: not a known-issues file (not valid JSON; expected {EXPECTED})") from None
    try:
        return _entries(obj)
    except _Bad as e:
        raise KnownError(f"{where}: not a known-issues file ({e}; expected {EXPECTED})") from None


class _Bad(Exception):
    """What is wrong with a file's contents, before the file's name is attached."""


def _entries(obj) -> list[KnownIssue]:
    if not isinstance(obj, dict) or not isinstance(obj.get("issues"), list):
        raise _Bad('no "issues" list')
    schema = obj.get("schema", 1)  # files written before the field existed
    if schema not in (1, 2, 3):
        raise _Bad(f"schema {schema!r} is not 1, 2 or 3")
    return [_entry(it, i, schema) for i, it in enumerate(obj["issues"])]


def _entry(it, i: int, schema: int) -> KnownIssue:
    if not isinstance(it, dict) or not isinstance(it.get("signature"), str) or not it["signature"]:
        raise _Bad(f"issue {i} has no \"signature\" string")
    unknown = sorted(set(it) - set(FIELDS))
    if schema == 3 and unknown:
        raise _Bad(f"issue {i} has unknown field(s) {', '.join(unknown)} (fields: {', '.join(FIELDS)})")
    text = {k: it[k] for k in FIELDS if k in it and k != "seen_in"}
    bad = [k for k, v in text.items() if not isinstance(v, str)]
    if bad:
        raise _Bad(f"issue {i}: {bad[0]} is {text[bad[0]]!r}, not a string")
    if schema < 3:
        return _migrated(KnownIssue(**text))
    seen = it.get("seen_in")
    if not isinstance(seen, list) or not all(isinstance(v, str) and _is_version(v) for v in seen):
        raise _Bad(f"issue {i}: seen_in is {seen!r}, not a list of torch versions")
    if text.get("fixed_in") and not _is_version(text["fixed_in"]):
        raise _Bad(f"issue {i}: fixed_in is {text['fixed_in']!r}, not a torch version or \"\"")
    return KnownIssue(**text, seen_in=tuple(seen))


def _is_version(v: str) -> bool:
    try:
        version_key(v)
    except ValueError:
        return False
    return True


def _migrated(k: KnownIssue) -> KnownIssue:
    """A schema 1/2 entry in schema 3: seen_in from its status text ("open in torch 2.13.0"),
    a free-text fixed_in that is no version moves to the status."""
    seen = tuple(dict.fromkeys(re.findall(r"open in torch (\d+\.\d+(?:\.\d+)?\S*?)[;,.)]?(?:\s|$)", k.status)))
    if k.fixed_in and not _is_version(k.fixed_in):
        return replace(k, seen_in=seen, fixed_in="", status="; ".join(filter(None, (k.status, f"fixed in {k.fixed_in}"))))
    return replace(k, seen_in=seen, fixed_in=release(k.fixed_in) if k.fixed_in else "")


# --- writing ----------------------------------------------------------------------------------

def dump_entries(entries: list[KnownIssue]) -> str:
    """A schema 3 file as the bundled one is formatted: 2-space indent, every field in FIELDS
    order (so a rewrite changes only the entries that changed)."""
    rows = [{f: list(k.seen_in) if f == "seen_in" else getattr(k, f) for f in FIELDS} for k in entries]
    return json.dumps({"schema": SCHEMA, "issues": rows}, indent=2, ensure_ascii=False) + "\n"


def write_entries(path: Path, entries: list[KnownIssue]) -> None:
    """Atomically (temp file + rename): a crash never leaves a half-written list."""
    from shapefuzz.cases.corpus import atomic_write  # lazy: the oracle registry (+50 ms)

    atomic_write(path, dump_entries(entries))


# --- statuses ---------------------------------------------------------------------------------

def _seen(k: KnownIssue, version: str) -> bool:
    return any(version_key(s) == version_key(version) for s in k.seen_in)  # "2.14" is "2.14.0"


def expected_status(k: KnownIssue, version: str) -> str:
    """What the file says for this torch: "reproduces" or "fixed" (Note [known versions])."""
    if _seen(k, version):
        return "reproduces"
    return "fixed" if _at_or_before(k.fixed_in, version) else "reproduces"


def with_observation(k: KnownIssue, version: str, reproduces: bool) -> KnownIssue:
    """The entry with what this torch showed written in: its release joins seen_in, or becomes
    fixed_in when it is the first seen fixed (and leaves seen_in, whose claim would win)."""
    v = release(version)
    if reproduces:
        return k if _seen(k, v) else replace(k, seen_in=tuple(sorted({*k.seen_in, v}, key=version_key)))
    first = v if not k.fixed_in or version_key(v) < version_key(k.fixed_in) else k.fixed_in
    return replace(k, seen_in=tuple(s for s in k.seen_in if version_key(s) != version_key(v)), fixed_in=first)


@dataclass(frozen=True, slots=True)
class Check:
    """One entry checked under one torch. status: "reproduces", "fixed here", "regressed" (it
    had fixed_in <= this version and reproduces again), "no case", or what went wrong running
    its repro; changed: the status differs from what the file says (or could not be told);
    updated: the entry with this version written in (the same entry when nothing was seen)."""

    entry: KnownIssue
    status: str
    changed: bool
    updated: KnownIssue


def check_known(entries: list[KnownIssue], root: Path, run: Callable[[Path], int], version: str) -> list[Check]:
    """Run each entry's case repro.py (`run(path) -> exit code`) under the torch `version` names:
    exit 1 = reproduces, 0 = fixed here."""
    return [_check(k, root, run, version) for k in entries]


def _check(k: KnownIssue, root: Path, run: Callable[[Path], int], version: str) -> Check:
    if not k.case:
        return Check(k, "no case", False, k)
    repro = root / k.case / "repro.py"
    if not repro.is_file():
        return Check(k, f"missing {repro}", True, k)  # the file's claim can no longer be checked
    rc = run(repro)
    if rc not in (0, 1):
        return Check(k, f"repro.py exited {rc}", True, k)
    was = expected_status(k, version)
    if rc == 0:
        return Check(k, "fixed here", was != "fixed", with_observation(k, version, False))
    status = "regressed" if _at_or_before(k.fixed_in, version) else "reproduces"
    return Check(k, status, was != "reproduces", with_observation(k, version, True))


# --- campaigns --------------------------------------------------------------------------------

def _match(known: dict | None, signature: str):
    """The value a signature's known entry has in `known`, or None. A known signature may hold
    `*` wildcards (matched with fnmatch, case-sensitive), so one upstream bug seen through many
    configs of one system is listed once: `eager-agreement:symbolic-shape:make_fx:*:rank+1:tensor`."""
    if not known:
        return None
    if signature in known:
        return known[signature]
    for pattern, value in known.items():
        # `[` is literal: signatures hold brackets (`Cmp[FloorDiv]`), fnmatch's character classes
        if "*" in pattern and fnmatch.fnmatchcase(signature, pattern.replace("[", "[[]")):
            return value
    return None


def load_known(extra: tuple[str, ...] = ()) -> dict[str, KnownIssue]:
    """signature -> entry, from the bundled list and any extra files."""
    return {k.signature: k for k in load_entries(extra)}


def known_note(known: dict | None, signature: str) -> str | None:
    """The note of the known issue a signature belongs to, or None. `known` maps signatures to
    entries (load_known) or to notes."""
    value = _match(known, signature)
    return value.line() if isinstance(value, KnownIssue) else value


def fixed_regression(known: dict | None, signature: str, version: str) -> str | None:
    """"<entry> fixed in X" when the signature's known entry is fixed in this torch (Note [known
    versions]): the finding is a regression of that fix and fails the run, else None."""
    value = _match(known, signature)
    if not isinstance(value, KnownIssue) or expected_status(value, version) != "fixed":
        return None
    return f"{value.name()} fixed in {value.fixed_in}"
