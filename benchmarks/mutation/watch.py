"""Note [early stop]: a campaign of the score stops at its first detection.

A detected mutant's campaign has nothing left to measure once one finding's repro.py exits 1
under the mutant and 0 without it (Note [detected] in bench.py), yet it ran its whole budget:
most detections come 5-40 s into a 90 s campaign, so the score's campaigns spent about half of
their time after their answer. The watcher reads the campaign's finding folders while it runs
(a case folder is complete once its case.json is there: corpus.save_case writes that file last)
and runs each new finding's repro.py both ways at once; the first that detects, checked before
the budget ends, stops the campaign.

The verdict does not change, only its cost: a finding is checked the same way, and a campaign
without a detection runs to its end and is judged from its report as before (the rows the
watcher checked are reused, not run again). What the watcher leaves to the report:
- findings known upstream and, in A/B, those the baseline shows too (pre-existing): they fail
  under the unmodified torch as well, so checking them would only take CPU from the campaign;
- timing findings (a slowdown): one exit code of a timing repro under load is noise; the
  campaign's own confirmation judges them.
It reads only the case folders, so it works with any shapefuzz version: the score's "before"
side runs an older checkout."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["TIMING_SYMPTOMS", "Watch"]

#: finding symptoms (the signature's second field) judged only by the campaign's report
TIMING_SYMPTOMS = frozenset({"slowdown"})

#: a case.json younger than this may belong to a folder still being written by an older version
SETTLE_S = 1.0


@dataclass(frozen=True, slots=True)
class Seen:
    """A case folder the watcher has looked at; exits None when it left the case to the report."""
    signature: str
    oracle: str
    mutant_exit: int | None = None
    clean_exit: int | None = None
    checked: bool = False

    @property
    def detects(self) -> bool:
        return self.checked and self.mutant_exit == 1 and self.clean_exit == 0


@dataclass
class Watch:
    """The finding folders of one running campaign (`out`/findings), each new one checked once.

    `check(case_dir)` -> (exit under the mutant, exit without it); `is_known(signature)`."""
    out: Path
    check: Callable[[Path], tuple[int | None, int | None]]
    is_known: Callable[[str], bool] = lambda sig: False
    seen: dict[Path, Seen] = field(default_factory=dict)

    def poll(self) -> Seen | None:
        """Check the folders that appeared since the last poll; the first detection, or None."""
        for case_file in sorted((self.out / "findings").glob("*/case.json")):
            case_dir = case_file.parent.resolve()
            if case_dir in self.seen or time.time() - case_file.stat().st_mtime < SETTLE_S:
                continue
            finding = _finding(case_file)
            if finding is None:
                continue  # unreadable: looked at again at the next poll
            seen = self._look(case_dir, finding)
            self.seen[case_dir] = seen
            if seen.detects:
                return seen
        return None

    def _look(self, case_dir: Path, finding: dict) -> Seen:
        sig = str(finding.get("signature", ""))
        oracle = str(finding.get("oracle") or sig.split(":", 1)[0])
        if finding.get("pre_existing") or self.is_known(sig) or _symptom(sig) in TIMING_SYMPTOMS:
            return Seen(sig, oracle)
        mutant_exit, clean_exit = self.check(case_dir)
        return Seen(sig, oracle, mutant_exit, clean_exit, checked=True)

    def checked(self, case_dir: Path) -> Seen | None:
        """The watcher's check of `case_dir`, when it ran one."""
        seen = self.seen.get(case_dir.resolve())
        return seen if seen is not None and seen.checked else None


def _symptom(signature: str) -> str:
    parts = signature.split(":")
    return parts[1] if len(parts) > 1 else ""


def _finding(case_file: Path) -> dict | None:
    """The finding of a case.json (data only: json, never code), None when not readable yet."""
    try:
        finding = json.loads(case_file.read_text()).get("finding")
    except (OSError, ValueError, AttributeError):
        return None
    return finding if isinstance(finding, dict) else None


def known_signatures() -> Callable[[str], bool]:
    """The installed shapefuzz's list of known upstream issues (any version that has one), so
    the watcher skips what a campaign reports as known; nothing is known without it."""
    try:
        from shapefuzz.cases.known import known_note, load_known
        known = load_known()
    except Exception:  # an older shapefuzz without the list: every finding is checked
        return lambda sig: False
    return lambda sig: known_note(known, sig) is not None
