"""The live display of a campaign: on a terminal a rich progress bar over the wall-time budget
with what the campaign is doing (generating / shrinking finding k: n -> m instructions /
confirming), programs, valid %, programs/s now and overall, findings new / known / unconfirmed,
time since the last new finding and where the time goes. Off a terminal it stays quiet (logs
hold the final summary line, which says the same), unless a progress log is asked for: then
every update is appended to that file with a timestamp.

Note [progress ticker]: the campaign calls the display after each program, but while it shrinks,
Hypothesis's engine holds the loop and one evaluation may take seconds; the clock froze for 25 s
that way. So `watch(camp)` starts a daemon thread that redraws every `tick_s` from the
campaign's counters (read-only; a dict changing size under it is retried on the next tick)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["CampaignProgress", "Snapshot", "snapshot_of", "split_text"]


@dataclass(frozen=True, slots=True)
class Snapshot:
    elapsed_s: float
    budget_s: float
    programs: int
    valid: int
    findings: int
    phase: str = "generating"
    rate_now: float | None = None  # programs/s over the last RATE_WINDOW_S
    known: int = 0
    unconfirmed: int = 0
    since_new_s: float | None = None  # None: no finding yet
    split: str = ""
    torch_lines: int = 0  # Note [torch coverage]: lines reached by the sampled jobs
    since_cov_s: float | None = None  # since the last new one

    @property
    def valid_pct(self) -> float:
        return 100.0 * self.valid / self.programs if self.programs else 0.0

    @property
    def rate(self) -> float:
        return self.programs / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def line(self) -> str:
        valid = f"valid {self.valid_pct:.0f}%" if self.programs else "valid -"
        now = f" (now {self.rate_now:.1f})" if self.rate_now is not None else ""
        new = self.findings - self.known
        last = f"  last new {self.since_new_s:.0f} s ago" if self.since_new_s is not None else ""
        left = max(0.0, self.budget_s - self.elapsed_s)
        out = (f"{self.phase}  {left:.0f} s left  programs {self.programs}  {valid}  "
               f"{self.rate:.1f} programs/s{now}  findings {self.findings} ({new} new, {self.known} "
               f"known, {self.unconfirmed} unconfirmed){last}")
        if self.since_cov_s is not None:
            out += f"  torch lines {self.torch_lines} (new {self.since_cov_s:.0f} s ago)"
        return out + (f"  [{self.split}]" if self.split else "")


RATE_WINDOW_S = 10.0


def _rate_now(timeline: list, now_s: float) -> float | None:
    """Programs/s over the last RATE_WINDOW_S, from the (elapsed_s, programs, findings) line."""
    if not timeline:
        return None
    last = timeline[-1]
    k = len(timeline) - 1
    while k > 0 and timeline[k - 1][0] >= now_s - RATE_WINDOW_S:
        k -= 1
    first = timeline[k - 1] if k > 0 else (max(0.0, now_s - RATE_WINDOW_S), 0, 0)
    span = now_s - first[0]
    return (last[1] - first[1]) / span if span > 0 else None


def split_text(phases: dict, systems: dict) -> str:
    """Where the time went, short: the campaign's wall phases, then the workers' busy time."""
    wall = sum(phases.values()) or 1.0
    parts = [f"{k} {100 * v / wall:.0f}%" for k, v in phases.items() if v / wall >= 0.01]
    busy = {"trace": 0.0, "replay": 0.0, "z3": 0.0, "ipc": 0.0}
    for row in systems.values():
        for k in busy:
            busy[k] += row.get(f"{k}_s", 0.0)
    total = sum(busy.values())
    if total > 0:
        parts.append("workers: " + " ".join(f"{k} {100 * v / total:.0f}%" for k, v in busy.items()))
    return " ".join(parts)


def snapshot_of(camp: Any, budget_s: float, known: int = 0, unconfirmed: int = 0) -> Snapshot:
    st, now = camp.stats, camp.elapsed()
    last_new = getattr(camp, "last_new_s", None)
    split = ""
    pool = camp.pool  # None until the campaign runs (its workers start meanwhile); Note [executor]
    if hasattr(camp, "clock"):
        times = pool.times if pool is not None else None
        split = split_text(camp.clock.peek(), times.to_json() if times is not None else {})
    cov = pool.coverage if pool is not None else None
    lines, since_cov = 0, None
    if cov is not None and cov.last_new is not None:
        lines, since_cov = sum(cov.per_area().values()), time.monotonic() - cov.last_new
    return Snapshot(now, budget_s, st.programs, st.valid, len(camp.bugs),
                    getattr(camp, "phase", "generating"), _rate_now(st.timeline, now), known,
                    unconfirmed, None if last_new is None else now - last_new, split, lines, since_cov)


class CampaignProgress:
    """A campaign's on_progress callback. `enabled=None`: on when the console is a terminal.
    `facts(camp) -> (known, unconfirmed)` counts the findings the campaign itself cannot class;
    `log_path`: append every update, timestamped, to this file (on or off a terminal)."""

    def __init__(self, budget_s: float, enabled: bool | None = None, console: Any = None,
                 min_interval_s: float = 0.25, facts: Any = None, log_path: str | None = None,
                 tick_s: float = 0.5):
        from rich.console import Console

        self.console = console or Console(stderr=True)
        self.enabled = self.console.is_terminal if enabled is None else enabled
        self.budget_s = budget_s
        self.min_interval_s = min_interval_s
        self.facts = facts or (lambda camp: (0, 0))
        self.log_path = log_path
        self.tick_s = tick_s
        self.last: Snapshot | None = None
        self._shown = 0.0
        self._bar = None
        self._task = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, camp: Any) -> None:
        try:
            self.update(snapshot_of(camp, self.budget_s, *self.facts(camp)))
        except RuntimeError:
            pass  # Note [progress ticker]: a dict changed size while read; next tick

    def watch(self, camp: Any) -> None:
        """Note [progress ticker]: redraw every tick_s until close()."""
        if self._thread is not None or not (self.enabled or self.log_path):
            return

        def tick() -> None:
            while not self._stop.wait(self.tick_s):
                self(camp)

        self._thread = threading.Thread(target=tick, name="shapefuzz-progress", daemon=True)
        self._thread.start()

    def update(self, snap: Snapshot) -> None:
        with self._lock:
            self.last = snap
            now = time.monotonic()
            if now - self._shown < self.min_interval_s:
                return
            self._shown = now
            if self.log_path:
                with open(self.log_path, "a") as fh:
                    fh.write(f"{time.time():.3f} {snap.elapsed_s:.2f} {snap.line()}\n")
            if not self.enabled:
                return
            if self._bar is None:
                self._start()
            self._bar.update(self._task, completed=min(snap.elapsed_s, self.budget_s),
                             stats=snap.line(), refresh=True)

    def _start(self) -> None:
        from rich.progress import BarColumn, Progress, TextColumn

        self._bar = Progress(TextColumn("[bold]shapefuzz[/]"), BarColumn(bar_width=20),
                             TextColumn("{task.completed:>4.0f}/{task.total:.0f} s"),
                             TextColumn("{task.fields[stats]}", markup=False),  # "[..." is text
                             console=self.console,
                             transient=False, auto_refresh=False)
        self._bar.start()
        self._task = self._bar.add_task("fuzz", total=self.budget_s, stats="starting workers")

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2 * self.tick_s + 1)
            self._thread = None
        with self._lock:
            if self._bar is not None:
                if self.last is not None:
                    self._bar.update(self._task, completed=min(self.last.elapsed_s, self.budget_s),
                                     stats=self.last.line())
                self._bar.refresh()
                self._bar.stop()
                self._bar = None
