"""The live terminal display of a campaign: a rich progress bar over the time budget with
programs, valid %, findings and programs/s. Shown only on a terminal: piped output, log files and
CI (no TTY) stay quiet, so logs hold the final summary and not a thousand redraws."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

__all__ = ["CampaignProgress", "Snapshot", "snapshot_of"]


@dataclass(frozen=True, slots=True)
class Snapshot:
    elapsed_s: float
    budget_s: float
    programs: int
    valid: int
    findings: int

    @property
    def valid_pct(self) -> float:
        return 100.0 * self.valid / self.programs if self.programs else 0.0

    @property
    def rate(self) -> float:
        return self.programs / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def line(self) -> str:
        return (f"programs {self.programs}  valid {self.valid_pct:.0f}%  findings {self.findings}  "
                f"{self.rate:.1f} programs/s")


def snapshot_of(camp: Any, budget_s: float) -> Snapshot:
    st = camp.stats
    return Snapshot(camp.elapsed(), budget_s, st.programs, st.valid, len(camp.bugs))


class CampaignProgress:
    """A campaign's on_progress callback. `enabled=None`: on when the console is a terminal."""

    def __init__(self, budget_s: float, enabled: bool | None = None, console: Any = None,
                 min_interval_s: float = 0.25):
        from rich.console import Console

        self.console = console or Console(stderr=True)
        self.enabled = self.console.is_terminal if enabled is None else enabled
        self.budget_s = budget_s
        self.min_interval_s = min_interval_s
        self.last: Snapshot | None = None
        self._shown = 0.0
        self._bar = None
        self._task = None

    def __call__(self, camp: Any) -> None:
        self.update(snapshot_of(camp, self.budget_s))

    def update(self, snap: Snapshot) -> None:
        self.last = snap
        now = time.monotonic()
        if not self.enabled or now - self._shown < self.min_interval_s:
            return
        self._shown = now
        if self._bar is None:
            self._start()
        self._bar.update(self._task, completed=min(snap.elapsed_s, self.budget_s), stats=snap.line(),
                         refresh=True)

    def _start(self) -> None:
        from rich.progress import BarColumn, Progress, TextColumn

        self._bar = Progress(TextColumn("[bold]shapefuzz[/]"), BarColumn(),
                             TextColumn("{task.completed:>6.0f}/{task.total:.0f} s"),
                             TextColumn("{task.fields[stats]}"), console=self.console,
                             transient=False, auto_refresh=False)
        self._bar.start()
        self._task = self._bar.add_task("fuzz", total=self.budget_s, stats="starting workers")

    def close(self) -> None:
        if self._bar is not None:
            if self.last is not None:
                self._bar.update(self._task, completed=min(self.last.elapsed_s, self.budget_s),
                                 stats=self.last.line())
            self._bar.refresh()
            self._bar.stop()
            self._bar = None
