"""`shapefuzz promote CASE`: copy a finding's case folder into the corpus, where the test suite
(tests/test_corpus.py, or `pytest --shapefuzz-corpus DIR`) replays it from then on. The case is
validated first (loading never evaluates code) and its repro.py regenerated from case.json."""

from __future__ import annotations

import json
import re
from pathlib import Path

from shapefuzz import BadInput
from shapefuzz.cases.corpus import STATUSES, CaseError, atomic_write, load_case

__all__ = ["PromoteError", "promote_case"]


class PromoteError(BadInput):
    """The case cannot be promoted; the message says why and what to do."""


def promote_case(case_path: str | Path, corpus: str | Path, name: str = "", status: str = "bug",
                 upstream: str = "", force: bool = False) -> Path:
    """Copy the case into corpus/<name> with the given status; returns the new folder."""
    from shapefuzz.repro import write_scripts  # lazy: repro is above cases (UPWARD)

    if status not in STATUSES:
        raise PromoteError(f"--status {status!r}: must be one of {', '.join(STATUSES)}")
    if status == "known-upstream" and not upstream:
        raise PromoteError("--status known-upstream needs --upstream TEXT (the upstream issue or torch version)")
    src = Path(case_path)
    case = load_case(src)  # raises CaseError with the file and the problem
    src_dir = src if src.is_dir() else src.parent
    corpus = Path(corpus)
    if not corpus.is_dir():
        raise PromoteError(f"{corpus}: no corpus folder (create it, or pass --corpus DIR)")
    name = name or src_dir.name
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._=+-]{0,120}", name):
        raise PromoteError(f"--name {name!r}: use letters, digits and ._=+- only")
    dest = corpus / name
    if dest.resolve() == src_dir.resolve():
        raise PromoteError(f"{src_dir} is already in the corpus")
    if (dest / "case.json").exists() and not force:
        raise PromoteError(f"{dest} already holds a case (pick another --name, or --force)")
    obj = json.loads((src_dir / "case.json").read_text())
    obj["status"], obj["upstream"] = status, upstream or obj.get("upstream", "")
    log = src_dir / "log.txt"
    atomic_write(dest / "log.txt", log.read_text() if log.exists() else case.finding.detail)
    atomic_write(dest / "case.json", json.dumps(obj, indent=1, sort_keys=True))
    try:
        write_scripts(dest, load_case(dest))  # repro.py and check.py
    except CaseError as e:  # cannot happen for a case that loaded above; say so loudly
        raise PromoteError(f"{dest}: the promoted case does not load ({e})") from None
    return dest
