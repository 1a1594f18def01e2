"""Confirming findings in the background while the campaign goes on.

Note [background confirmation]: a finding counts only once its repro.py exits 1 standalone, and
each repro.py is a fresh interpreter importing torch (seconds each, ~7 s on a loaded 2-core
machine). Run one after another at the end, four findings took 27 s past the budget. So a
finding is confirmed as soon as its case is final (shrunk), in a thread that waits on the
subprocess, while generation goes on; what is left at the end runs in parallel. Each
confirmation's timeout ends at the hard deadline (budget + grace, Note [wall budget]); one still
running then is killed and its finding is reported unconfirmed with `confirm_timed_out`. A case
rewritten after its confirmation (repro.py changed, other than by the confirmation itself: it may
reduce the issue form, repro/trial.py) is confirmed again. The shortest confirmation measured (an
unreduced one: late findings get too little time to be reduced) gives the campaign its estimate
of the end phase (`reserve_s`).

Note [step failures]: a campaign survives its own failures. An exception in a background
confirmation (a case that does not load, a reducer that trips, a parser race in the interpreter:
Note [one parser at a time]) is a failure of that finding's confirmation, not of the campaign:
it is kept (`errors`, the traceback by signature) and the finding is reported unconfirmed with
it in report.json ("error"). The same holds for a finding's shrink (Shrinker.pending in shrinking.py) and
its report steps (saving its case, blame: campaign/run.py); the campaign goes on and writes its
report. A bug in shapefuzz stays loud (STYLE 4): the traceback is in report.json and the summary
line counts these failures.

Note [confirmation order]: confirmations run `parallel` at once, and when more are waiting the
most severe goes first (`submit`'s rank: critical before low, a pre-existing one after the
rest), not the first found. In an A/B campaign at load 6 (2026-12-04, mutant d1c031ac2b91 of
benchmarks/mutation) a low `slowdown` (timed, both interpreters, repeated) and a pre-existing
trace error took both slots for the rest of the budget; the critical regression found 11 s
later was cut at the deadline unconfirmed, and the mutant was scored as missed."""

from __future__ import annotations

import hashlib
import heapq
import itertools
import math
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from shapefuzz.cases.corpus import load_case
from shapefuzz.oracles.findings import SEVERITIES
from shapefuzz.repro.trial import confirm_reduced, worth_reducing

__all__ = ["SCRIPT_ERRORS", "SIBLING_RANK", "Confirmer", "confirm", "confirm_rank", "script_error"]


def _digest(case_dir: Path) -> str:
    try:
        return hashlib.sha256((case_dir / "repro.py").read_bytes()).hexdigest()
    except OSError:
        return ""


def _reducible(case_dir: Path) -> bool:
    """Whether confirm_reduced (repro/trial.py) may reduce this case's issue form."""
    try:
        case = load_case(case_dir)
        return case.issue_cut is None and worth_reducing(case)
    except Exception:  # an unreadable case: treated as reducible, the cautious cap
        return True


class Confirmer:
    #: seconds one confirmation is assumed to take before any was measured
    FIRST_GUESS_S = 8.0
    #: no repro.py gets more than this, budget or not (a hang is not a confirmation)
    MAX_S = 180.0

    def __init__(self, confirm_fn: Callable[[Path, float], bool], deadline: float, parallel: int = 2,
                 enabled: bool = True, warm_fn: Callable[[Path, float], bool] | None = None,
                 is_warm: Callable[[str], bool] = lambda sig: False):
        self.confirm_fn = confirm_fn
        #: Note [warm confirmation] (warm_run.py): the signatures `is_warm` names are confirmed
        #: by `warm_fn` (a fork of a warm interpreter), the others by `confirm_fn`
        self.warm_fn, self.is_warm = warm_fn, is_warm
        self.deadline = deadline  # time.monotonic() by which every confirmation is over
        self.parallel = max(1, parallel)
        self.enabled = enabled
        self._pool = ThreadPoolExecutor(max_workers=self.parallel, thread_name_prefix="confirm")
        self._jobs: dict[str, list] = {}  # sig -> [Future, repro.py digest, case folder, warm]
        self._waiting: list = []  # heap of (rank, order, sig, job) not started
        self._order = itertools.count()
        self._ranks: dict[str, int] = {}
        self._durations: list[float] = []  # of standalone confirmations: the reserve's estimate
        self._warm_durations: list[float] = []
        self._lock = threading.Lock()
        #: signature -> the traceback of its confirmation's exception (Note [step failures])
        self.errors: dict[str, str] = {}
        #: before any confirmation was measured: what a fresh interpreter with torch takes here
        #: (run.py: the first worker's start-up), when it says more than FIRST_GUESS_S
        self.hint: Callable[[], float] = lambda: 0.0

    def submit(self, sig: str, case_dir: Path, rank: int | None = None) -> None:
        """Confirm this case (again, if its repro.py changed since). Waiting ones start by `rank`
        (lower first; Note [confirmation order]), the one given before when None."""
        if not self.enabled:
            return
        old = self._jobs.get(sig)
        if old is not None and old[0].running():
            return  # running: it may be rewriting repro.py itself (a reduced issue form)
        # read only now: a job that is done wrote repro.py and then its digest (job[1]) before its
        # result, so a digest read while it was still writing (half a file) cannot slip through
        # once it has ended (a second confirmation, torch 2.14.1 CI: [1, 1])
        digest = _digest(case_dir)
        if old is not None and old[1] == digest:
            return
        if old is not None:
            old[0].cancel()  # queued: not needed any more
        if rank is not None:
            self._ranks[sig] = rank
        job: list = [Future(), digest, case_dir, self._warm(sig)]
        with self._lock:
            heapq.heappush(self._waiting, (self._ranks.get(sig, 0), next(self._order), sig, job))
        self._jobs[sig] = job
        self._pool.submit(self._next)  # one slot per job: it runs the best one waiting then

    def _next(self) -> None:
        with self._lock:
            while self._waiting:
                _, _, sig, job = heapq.heappop(self._waiting)
                if job[0].set_running_or_notify_cancel():
                    break
            else:
                return
        job[0].set_result(self._guarded(sig, job))

    def _guarded(self, sig: str, job: list) -> tuple[bool, bool]:
        """_run; an exception is that finding's, unconfirmed (Note [step failures])."""
        self.errors.pop(sig, None)  # confirmed again: judged again
        try:
            return self._run(job)
        except Exception:
            self.errors[sig] = traceback.format_exc()
            return False, False

    def _run(self, job: list) -> tuple[bool, bool]:
        """(confirmed, timed out at the deadline)."""
        left = self.deadline - time.monotonic()
        if left <= 0.5:
            return False, True
        t = time.monotonic()
        if job[3]:
            ok = self.warm_fn(job[2], min(left, self.MAX_S))
        else:
            ok = self.confirm_fn(job[2], self._timeout(left, job[2]))
        took = time.monotonic() - t
        job[1] = _digest(job[2])  # what it confirmed (a reduced issue form, maybe)
        with self._lock:
            (self._warm_durations if job[3] else self._durations).append(took)
        return ok, not ok and took >= left - 0.5

    #: confirm_reduced (repro/trial.py) reduces the issue form only with this much time or more
    REDUCE_MIN_S = 30.0

    def _timeout(self, left: float, case_dir: Path) -> float:
        """Time for one confirmation. A reduction (a trial interpreter, then up to two standalone
        runs) needs about three confirmations' time: when the deadline leaves less, the full form
        is confirmed alone, under REDUCE_MIN_S (a --budget 60 run under load gave a reduction
        34 s, and the finding was cut at the deadline unconfirmed). A case that is not reduced
        anyway (an A/B finding's two-interpreter repro.py took 30-60 s at load 12) keeps the
        time the deadline leaves."""
        if left < 3.5 * self.estimate_s() and _reducible(case_dir):
            return min(left, self.REDUCE_MIN_S - 1.0)
        return min(left, self.MAX_S)

    def estimate_s(self) -> float:
        with self._lock:
            if self._durations:
                return min(self._durations)
        return max(self.FIRST_GUESS_S, self.hint())

    def _warm(self, sig: str) -> bool:
        return self.warm_fn is not None and self.is_warm(sig)

    def warm_estimate_s(self) -> float:
        with self._lock:
            return min(self._warm_durations) if self._warm_durations else 1.0

    def unfinished(self, warm: bool | None = None) -> int:
        """Confirmations not over yet (`warm`: only the warm ones, or only the others)."""
        return sum(not job[0].done() for job in list(self._jobs.values()) if warm in (None, job[3]))

    def failed(self) -> int:
        """Confirmations over whose repro.py did not exit 1 (the progress line's unconfirmed)."""
        return sum(f.done() and not f.cancelled() and not f.result()[0]
                   for f, *_ in list(self._jobs.values()))

    def reserve_s(self, not_submitted: Iterable[str] = ()) -> float:
        """Wall time the confirmations still to run need, run `parallel` at once;
        `not_submitted`: the signatures of findings still to be submitted (still shrinking)."""
        if not self.enabled:
            return 0.0
        later = [self._warm(sig) for sig in not_submitted
                 if sig not in self._jobs]  # one submitted is counted as unfinished, or done
        waiting = self.unfinished(warm=False) + later.count(False)
        warm = self.unfinished(warm=True) + later.count(True)
        return (math.ceil(waiting / self.parallel) * self.estimate_s()
                + math.ceil(warm / self.parallel) * self.warm_estimate_s())

    def results(self, cases: dict[str, Path]) -> dict[str, tuple[bool, bool]]:
        """Confirm every case of `cases` not yet confirmed as it is now; wait for all of them."""
        for sig, d in cases.items():
            self.submit(sig, d)
        out = {}
        for sig in cases:
            fut = self._jobs[sig][0] if self.enabled else None
            out[sig] = (True, False) if fut is None else fut.result()
        return out

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            for *_, job in self._waiting:
                job[0].cancel()
            self._waiting.clear()


def confirm(case_dir: Path, timeout_s: float = 180.0) -> bool:
    """A finding counts only if its issue form, repro.py, exits 1 standalone (shapefuzz/repro/),
    once reduced (Note [issue form reduction] in shapefuzz/repro/reduce.py)."""
    return confirm_reduced(case_dir, _exits_1, timeout_s)


def _exits_1(case_dir: Path, timeout_s: float) -> bool:
    try:
        r = subprocess.run([sys.executable, str(case_dir / "repro.py")], capture_output=True,
                           text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return False
    (case_dir / "confirm.txt").write_text(f"exit {r.returncode}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}")
    return r.returncode == 1 and not script_error(r.stderr, case_dir / "repro.py")


#: exceptions of a script that does not run as written (a name it lacks, an import it cannot make)
SCRIPT_ERRORS = ("NameError", "UnboundLocalError", "SyntaxError", "IndentationError", "ImportError",
                 "ModuleNotFoundError")


def script_error(stderr: str, script: Path) -> bool:
    """Did the script die of its own error, raised in its own code? Its exit 1 then confirms
    nothing (a repro.py that lacked an import of guard_or_true exited 1 under both torches). The
    same exception raised inside torch is torch's, and counts."""
    lines = stderr.strip().splitlines()
    if not lines or lines[-1].split(":")[0].strip() not in SCRIPT_ERRORS:
        return False
    frames = [line for line in lines if line.lstrip().startswith('File "')]
    return (bool(frames) and f'File "{script}"' in frames[-1]) or (not frames and "SyntaxError" in lines[-1])


#: the rank from which a confirmation is a bucket sibling's (Note [sibling confirmations])
SIBLING_RANK = 2 * len(SEVERITIES)


def confirm_rank(finding, sibling: bool = False) -> int:
    """Note [confirmation order]: by severity, a pre-existing one (a bug of both builds, which
    fails no A/B run) after every other, and a bucket sibling after all of them.

    Note [sibling confirmations]: a finding whose bucket (its signature up to the config,
    Signature.bucket) met a finding before it is a sibling. Its confirmation (a fresh
    interpreter: seconds of CPU) is submitted only once generation is over (run.py), ranked after
    every other, and the end phase's reserve does not count it while it shrinks
    (run.unshrunk_firsts), so it neither stops generation nor takes its CPU; the deadline cuts
    one not reached (it is reported unconfirmed, confirm_timed_out). One ShapeEnv bug met under 16 torch-env
    configs reserved 8 confirmations' time and stopped a 40 s campaign's generation at 16 s."""
    rank = SEVERITIES.index(finding.severity) + (len(SEVERITIES) if finding.pre_existing else 0)
    return rank + (SIBLING_RANK if sibling else 0)
