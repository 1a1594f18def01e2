"""A finding's failed steps: what a campaign keeps when shrinking, confirming or reporting one of
its findings raises (Note [step failures] in confirming.py)."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from shapefuzz.campaign.phases import Step

__all__ = ["StepFailure", "StepFailures", "confirm_all", "shrink_guarded"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StepFailure:
    step: str  # shrink | confirm | report
    traceback: str

    @property
    def last_line(self) -> str:
        """The exception itself ("SystemError: ..."), for one line on stderr."""
        lines = [x for x in self.traceback.strip().splitlines() if x.strip()]
        return lines[-1][:300] if lines else "?"


@dataclass(frozen=True, slots=True)
class StepFailures:
    """Signature -> its first failed step (a frozen holder of one dict the campaign fills in as
    it goes). The campaign's own record: a finding that has one is
    reported unconfirmed with it (report.json "error"), and each is a shapefuzz bug (stderr,
    report.json's shapefuzz_bugs, exit 1: never a silent pass)."""

    by_sig: dict[str, StepFailure] = field(default_factory=dict)

    def run(self, step: str, sig: str, fn: Callable[[], T]) -> T | None:
        """fn(), or None when it raised (recorded against `sig`)."""
        try:
            return fn()
        except Exception:
            self.add(sig, step, traceback.format_exc())
            return None

    def add(self, sig: str, step: str, trace: str) -> None:
        self.by_sig.setdefault(sig, StepFailure(step, trace))  # the first: later ones follow from it

    def __contains__(self, sig: str) -> bool:
        return sig in self.by_sig

    def add_shrinks(self, bugs: dict) -> None:
        """The shrinks that raised (FoundBug.error, campaign/engine.py)."""
        for sig, bug in bugs.items():
            if bug.error:
                self.add(sig, "shrink", bug.error)

    def add_confirmations(self, errors: dict[str, str]) -> None:
        """The confirmations that raised (Confirmer.errors)."""
        for sig, trace in errors.items():
            self.add(sig, "confirm", trace)

    def verdicts(self) -> dict[str, tuple[bool, bool]]:
        """(confirmed, timed out) of each failed finding: unconfirmed, not for lack of time."""
        return dict.fromkeys(self.by_sig, (False, False))

    def mark(self, rows: list[dict]) -> None:
        """report.json's rows of the failed findings: the step and its traceback."""
        for row in rows:
            f = self.by_sig.get(row["signature"])
            if f is not None:
                row["error"], row["error_step"] = f.traceback, f.step

    def as_bugs(self) -> list[dict]:
        """Entries of report.json's shapefuzz_bugs (Note [shapefuzz bugs], workers.py)."""
        return [{"message": f"the {f.step} step of finding {sig} raised {f.last_line} (the finding is "
                            "reported unconfirmed, its traceback under \"error\" in report.json)",
                 "signature": sig, "step": f.step, "traceback": f.traceback, "torch_owned": False}
                for sig, f in self.by_sig.items()]


def shrink_guarded(camp, shrink: Callable[[], None]) -> None:
    """Shrinker.pending: an exception while shrinking the pending finding is that
    finding's (FoundBug.error; its smallest program so far is kept) and the campaign goes on.
    Hypothesis re-raises an exception its test body raised once it is done, so one raised by an
    evaluation inside the shrink ends up here too."""
    sig = camp.pending_shrink["signature"]
    try:
        shrink()
    except Exception:
        bug = camp.bugs[sig]
        bug.error, bug.shrunk = traceback.format_exc(), True  # shrunk: not tried again
        camp.phase, camp.step = "generating", Step.GENERATE


def confirm_all(confirmer, dirs: dict, bugs: dict, failures: StepFailures) -> dict[str, tuple[bool, bool]]:
    """Every finding's (confirmed, timed out), the confirmer closed; one whose shrink, report step
    or confirmation raised is unconfirmed and not confirmed at all (no time spent on it)."""
    failures.add_shrinks(bugs)
    verdicts = confirmer.results({sig: d for sig, d in dirs.items() if sig not in failures})
    confirmer.close()
    failures.add_confirmations(confirmer.errors)
    return {**verdicts, **failures.verdicts()}
