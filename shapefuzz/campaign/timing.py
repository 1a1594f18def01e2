"""Where a campaign's time goes (report.json's `time_split`).

Note [time split]: two clocks, because the campaign process and its workers run at once.
- The campaign's wall clock is split into exclusive phases (`PhaseClock`): `startup` (process
  start and imports before the campaign loop), `generate` (Hypothesis drawing programs, eager
  runs for generation included), `wait` (blocked on workers), `oracles` (check_all on a
  program's observations), `shrink`, `confirm`, `report`, `bookkeeping` (checkpoints,
  progress). They add up to the run's elapsed wall time.
- Each worker times every job it runs (`JobTimer`), split into `replay` (re-running the traced
  artifact on other inputs), `z3` (prove() calls actually sent to z3; answers from claims'
  cache are free) and `trace` (the rest of the job: the system's own trace and checks), summed
  per system; `ipc` is the parent's send-to-answer time of a job minus the worker's job time
  (pickling, pipes, queueing behind the worker). Worker time is CPU-ish busy time and may
  exceed wall time with several workers.
The workers wrap shapefuzz's own replay and prove functions (never torch's) at start-up, so
the systems need no timing code; a wrapped function nested inside another counts only for the
innermost one."""

from __future__ import annotations

import time
from contextlib import contextmanager

__all__ = ["JobTimer", "PhaseClock", "SystemTimes", "install_job_timer"]

PHASES = ("startup", "generate", "wait", "oracles", "shrink", "confirm", "report", "bookkeeping")
#: phases inside which nested phase marks are ignored: their whole wall time is theirs
STICKY = ("shrink", "confirm", "report")


class PhaseClock:
    """Exclusive wall-clock phases: `with clock.phase(name)` charges the time inside to `name`
    and pauses the enclosing phase."""

    def __init__(self, start: str = "bookkeeping") -> None:
        self.totals: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self._stack = [start]
        self._since = time.perf_counter()

    @property
    def current(self) -> str:
        return self._stack[-1]

    def _charge(self) -> None:
        now = time.perf_counter()
        self.totals[self._stack[-1]] = self.totals.get(self._stack[-1], 0.0) + now - self._since
        self._since = now

    @contextmanager
    def phase(self, name: str):
        if self._stack[-1] in STICKY and name != self._stack[-1]:
            yield
            return
        self._charge()
        self._stack.append(name)
        try:
            yield
        finally:
            self._charge()
            self._stack.pop()

    def restart(self, startup_s: float = 0.0) -> None:
        """Start afresh now; `startup_s`: the time spent before (process start, imports)."""
        self.totals = dict.fromkeys(PHASES, 0.0)
        self.totals["startup"] = startup_s
        self._stack, self._since = self._stack[:1], time.perf_counter()

    def snapshot(self) -> dict[str, float]:
        self._charge()
        return dict(self.totals)

    def peek(self) -> dict[str, float]:
        """The totals so far without touching the clock (safe from the progress thread)."""
        out, top = dict(self.totals), self._stack[-1]
        out[top] = out.get(top, 0.0) + time.perf_counter() - self._since
        return out


class SystemTimes:
    """Worker-side job time per system (Note [time split])."""

    KEYS = ("jobs", "job_s", "trace_s", "replay_s", "z3_s", "z3_calls", "ipc_s")

    def __init__(self) -> None:
        self.per: dict[str, dict[str, float]] = {}

    def add(self, system: str, split: dict, round_trip_s: float) -> None:
        row = self.per.setdefault(system, dict.fromkeys(self.KEYS, 0.0))
        job = split.get("job_s", 0.0)
        row["jobs"] += 1
        row["job_s"] += job
        row["replay_s"] += split.get("replay_s", 0.0)
        row["z3_s"] += split.get("z3_s", 0.0)
        row["z3_calls"] += split.get("z3_calls", 0)
        row["trace_s"] += max(0.0, job - split.get("replay_s", 0.0) - split.get("z3_s", 0.0))
        row["ipc_s"] += max(0.0, round_trip_s - job)

    def to_json(self) -> dict:
        return {s: {k: round(v, 3) for k, v in row.items()} for s, row in sorted(self.per.items())}

    @classmethod
    def from_json(cls, d: dict) -> SystemTimes:
        out = cls()
        out.per = {s: {k: float(row.get(k, 0.0)) for k in cls.KEYS} for s, row in d.items()}
        return out


# ---- inside a worker ---------------------------------------------------------------------------
class JobTimer:
    """Exclusive time of the wrapped functions during one job (Note [time split])."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.spent: dict[str, float] = {"replay_s": 0.0, "z3_s": 0.0}
        self.calls = 0
        self._stack: list[list] = []  # [key, start, time spent in nested wrapped calls]

    def wrap(self, key: str, fn):
        def timed(*a, **kw):
            frame = [key, time.perf_counter(), 0.0]
            self._stack.append(frame)
            try:
                return fn(*a, **kw)
            finally:
                self._stack.pop()
                total = time.perf_counter() - frame[1]
                self.spent[key] += total - frame[2]
                if self._stack:
                    self._stack[-1][2] += total
                self.calls += key == "z3_s"

        timed.__wrapped__ = fn
        return timed

    def split(self, job_s: float) -> dict:
        return {"job_s": job_s, **self.spent, "z3_calls": self.calls}


#: (module, attribute, key): where the systems look up replay and prove functions at call time
_WRAPPED = (("shapefuzz.systems.traced", "_replay", "replay_s"),
            ("shapefuzz.systems.torch_env", "replay_questions", "replay_s"),
            ("shapefuzz.systems.claims", "prove", "z3_s"))


def install_job_timer() -> JobTimer:
    """Wrap the replay and prove functions of this (worker) process; a module that cannot be
    imported (a build without it) is left alone."""
    import importlib

    timer = JobTimer()
    for mod_name, attr, key in _WRAPPED:
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        fn = getattr(mod, attr, None)
        if fn is not None and not hasattr(fn, "__wrapped__"):
            setattr(mod, attr, timer.wrap(key, fn))
    return timer
