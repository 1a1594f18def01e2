"""Reducing an issue form at confirmation (Note [issue form reduction] in reduce.py).

`confirm_reduced` is what a campaign calls in place of a bare confirmation: when the case is worth
reducing, one subprocess (`python -m shapefuzz.repro.trial CASE_DIR SECONDS`, the *trial*) runs
the full issue form and the reduced ones in one interpreter (one torch import for all of them,
each form exec'd as a script, Dynamo reset between them) and prints the smallest cut whose form
fails as the full one does. That form is then written and confirmed standalone; if it does not
exit 1 there, the full form is written back and confirmed instead. So a finding costs at most
three subprocesses (trial, reduced, full) and confirmation keeps its meaning: the repro.py on disk
exits 1 standalone.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from shapefuzz.cases.corpus import IssueCut, atomic_write, load_case
from shapefuzz.repro import line_limit, repro_source
from shapefuzz.repro.forms import choose
from shapefuzz.repro.reduce import output_cut, prefix_cut, question_cut, raise_cut
from shapefuzz.systems.observation import to_jsonable

__all__ = ["confirm_reduced", "symptom", "worth_reducing"]

#: a program with more instructions than this, or a sequence with more calls, is worth a trial
#: even when its full form is within the line limit (a shrunk program rarely is)
_SMALL_PROGRAM, _FEW_CALLS = 5, 2
#: seconds a trial may spend on reduced forms (its torch import not counted); a confirmation
#: with less time than three standalone runs is not reduced
_TRIAL_S, _MIN_RUN_S = 60.0, 10.0


def symptom(stdout: str) -> str:
    """What a failing form says, up to numbers and names with numbers: its first BUG line up to
    the second colon ("BUG: got GuardOnDataDependentSymNode"), so a reduction that fails some
    other way is not taken for the same bug."""
    line = next((x for x in stdout.splitlines() if x.startswith("BUG")), "")
    return re.sub(r"\w*\d\w*", "N", ":".join(line.split(":")[:2]).strip())


def strategy(case) -> str:
    """How its issue form is reduced: "raise" (a trace that raises: the shortest failing prefix,
    then the raising instruction's slice), "outputs" (slices of the outputs), "calls" (calls
    dropped, then outputs), "questions" (the slice of one question), or "" (not reduced)."""
    return choose(case).writer.reduction(case)  # a plugin form's harness writer: "" (not ours to cut)


def worth_reducing(case) -> bool:
    how = strategy(case)
    if not how:
        return False
    if how != "questions" and (len(case.program.instrs) > _SMALL_PROGRAM or _n_calls(case) > _FEW_CALLS):
        return True  # (a question program, a few lines an instruction, only when too long)
    return len(repro_source(case).splitlines()) > line_limit(case)


def _n_calls(case) -> int:
    return max(case.finding.replay_index + 1, 0) + 1 if case.finding.system == "compile" else 0


def confirm_reduced(folder: Path, run: Callable[[Path, float], bool], timeout_s: float = 180.0) -> bool:
    """Reduce the case's issue form (when worth it), then confirm what repro.py holds with
    `run(folder, seconds)` (exit 1 standalone); all of it within `timeout_s`."""
    folder, end = Path(folder), time.monotonic() + timeout_s
    case = load_case(folder)
    if case.issue_cut is not None or not worth_reducing(case) or timeout_s < 3 * _MIN_RUN_S:
        return run(folder, timeout_s)
    cut = _trial(folder, min(_TRIAL_S, timeout_s / 3))
    if cut is None:
        return run(folder, max(1.0, end - time.monotonic()))
    if _write(folder, replace(case, issue_cut=cut)) and run(folder, max(1.0, (end - time.monotonic()) / 2)):
        return True
    _write(folder, case)  # the reduced form passes standalone: the full form it is
    return run(folder, max(1.0, end - time.monotonic()))


def _write(folder: Path, case) -> bool:
    """repro.py of the case, and its cut in case.json (the rest of the file as it was); False,
    writing nothing, when the folder holds another program by now (the campaign saved a smaller
    one while this one was being reduced: its own confirmation follows)."""
    obj = json.loads((folder / "case.json").read_text())
    if obj.get("program") != json.loads(json.dumps(case.program.to_json())):
        return False
    obj["issue_cut"] = None if case.issue_cut is None else to_jsonable(case.issue_cut)
    atomic_write(folder / "repro.py", repro_source(case))
    atomic_write(folder / "case.json", json.dumps(obj, indent=1, sort_keys=True))
    return True


def _trial(folder: Path, seconds: float):
    """The cut the trial subprocess found (its last CUT line), or None."""
    cmd = [sys.executable, "-m", "shapefuzz.repro.trial", str(folder), str(seconds)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 2 * _MIN_RUN_S).stdout
    except subprocess.TimeoutExpired as e:  # what it found before it was stopped still counts
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    lines = [x[4:] for x in out.splitlines() if x.startswith("CUT ")]
    if not lines:
        return None
    obj = json.loads(lines[-1])
    return IssueCut(*(None if obj[k] is None else tuple(obj[k]) for k in ("instrs", "outputs", "calls")))


# ---- the trial subprocess ------------------------------------------------------------------------


class _Trial:
    """Runs issue forms of one case in this interpreter, until a deadline."""

    def __init__(self, case, seconds: float):
        self.case, self.deadline = case, time.monotonic() + seconds
        self.want = ""  # the full form's symptom

    def fails(self, cut) -> bool:
        """Its form exits 1 with the full form's symptom (False past the deadline)."""
        if time.monotonic() > self.deadline:
            return False
        try:
            src = repro_source(replace(self.case, issue_cut=cut))
        except Exception:  # a cut the program's types refuse
            return False
        code, out = _run(src)
        if cut is None:
            self.want = symptom(out)
        return code == 1 and symptom(out) == self.want

    def smaller(self, cut, than) -> bool:
        size = [len(repro_source(replace(self.case, issue_cut=c)).splitlines()) for c in (cut, than)]
        return size[0] < size[1]


def _run(src: str) -> tuple[object, str]:
    """(exit code, stdout) of a script exec'd here; an exception it lets escape is code "error"."""
    out = io.StringIO()
    code: object = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            exec(compile(src, "repro.py", "exec"), {"__name__": "__main__"})
        except SystemExit as e:
            code = e.code
        except Exception:
            code = "error"
    if "torch._dynamo" in sys.modules:
        sys.modules["torch._dynamo"].reset()
    return code, out.getvalue()


def _raise_cut(t: _Trial):
    """The shortest prefix that still raises (binary search), then its last instruction's slice."""
    p = t.case.program
    lo, hi = 0, len(p.instrs) - 1  # prefix `hi` fails (the whole program)
    while lo < hi:
        mid = (lo + hi) // 2
        if t.fails(prefix_cut(p, mid)):
            hi = mid
        else:
            lo = mid + 1
    sliced = raise_cut(p, hi)
    if t.fails(sliced):
        return sliced
    return prefix_cut(p, hi) if hi < len(p.instrs) - 1 else None


def _output_cut(t: _Trial, calls=None):
    """The smallest slice of one output, or of all of them, that still fails."""
    p = t.case.program
    cuts = [output_cut(p, (o,)) for o in dict.fromkeys(p.outputs)] + [output_cut(p, p.outputs)]
    cuts = [replace(c, calls=calls) for c in sorted(cuts, key=lambda c: len(c.instrs))]
    return next((c for c in cuts if len(c.instrs) < len(p.instrs) and t.fails(c)), None)


def _calls_cut(t: _Trial):
    """The last call alone, or after the first (the one that compiles); else each earlier call
    dropped when the form still fails without it. Then the outputs."""
    n = _n_calls(t.case)
    keep = next((list(c) for c in ((n - 1,), (0, n - 1)) if len(c) < n and t.fails(IssueCut(calls=c))), None)
    if keep is None:
        keep = list(range(n))
        for i in range(n - 1):
            trial = [k for k in keep if k != i]
            if t.fails(IssueCut(calls=tuple(trial))):
                keep = trial
    calls = tuple(keep) if len(keep) < n else None
    return _output_cut(t, calls) or (IssueCut(calls=calls) if calls else None)


def _question_cut(t: _Trial):
    """The smallest slice of one question that still fails (or of the family's own cuts:
    questions.issue_cuts, for the forms a one-question slice cannot show)."""
    p = t.case.program
    own = choose(t.case).writer.issue_cuts(t.case)
    cuts = own if own is not None else [question_cut(p, k) for k in range(len(p.asks()))]
    cuts = sorted(cuts, key=lambda c: len(c.instrs))
    return next((c for c in cuts if len(c.instrs) < len(p.instrs) and t.fails(c)), None)


def main(folder: str, seconds: float) -> int:
    case = replace(load_case(folder), issue_cut=None)
    t = _Trial(case, seconds)
    how = strategy(case)
    if not how or not t.fails(None):
        return 0
    cut = {"raise": _raise_cut, "outputs": _output_cut, "calls": _calls_cut, "questions": _question_cut}[how](t)
    if cut is not None and t.smaller(cut, None):
        print("CUT " + json.dumps(to_jsonable(cut)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], float(sys.argv[2])))
