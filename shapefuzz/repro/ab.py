"""Repro scripts for A/B findings (shapefuzz/oracles/ab.py).

Note [A/B repro]: an A/B finding is a difference between two torch builds, so no one-torch call
shows it. Its repro.py (and check.py, the same script) carries the case as JSON data and the
baseline (interpreter and environment changes: the finding's ABEvidence, Note [typed evidence]) and runs
the program under both sides, each in a fresh process of its own interpreter and environment:
`python repro.py` is the candidate's interpreter and environment (the one it is run with; that
side runs in the script's own process), and the baseline's command is printed. One side alone
is `python repro.py --side NAME --out FILE`, which runs the finding's (system, config) (and
eager, on the candidate) the way a campaign worker does and writes the observations to FILE. Both sides are printed, the A/B oracle compares
them, and the script exits 1 while the finding's signature is still produced, 0 once it is not.
A slowdown is timed: each side runs its jobs 1 + REPEAT times in its process (the first pays
for lazy imports) and keeps the fastest, and the sides run one after the other, not at once, in
two turns each, candidate-baseline-baseline-candidate, each side keeping its fastest over both:
on a loaded machine a burst of load during one side's only turn made a build 5.5x slower than
itself (unmodified torch 2.13 against itself, export, at load 12), while one that lasts through
both turns of a side also covers the other side's.
The scripts import shapefuzz from the source folder they were written from (both sides must
import the same shapefuzz)."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from shapefuzz import BadInput
from shapefuzz.cases.corpus import _case_from_json
from shapefuzz.oracles import check_all
from shapefuzz.oracles.ab import SPEC_PREFIX, ABEvidence, mark
from shapefuzz.program.kinds import kind_of
from shapefuzz.repro import common
from shapefuzz.repro.forms import Writer, register_writer
from shapefuzz.repro.templates import shapefuzz_replay
from shapefuzz.systems.evidence import of
from shapefuzz.systems.evidence.truth import question_replays
from shapefuzz.systems.jobs import Job, run_job

__all__ = ["SOURCE_ROOT", "WRITER", "Baseline", "baseline_from_flags", "check", "issue", "line_limit", "main"]

#: the source folder holding the shapefuzz package (both sides import it from there)
SOURCE_ROOT = str(Path(__file__).resolve().parents[2])
REPEAT = 3


@dataclass(frozen=True, slots=True)
class Baseline:
    """The baseline side: an interpreter and changes to the candidate's environment (an
    empty value unsets the variable)."""

    python: str
    env: tuple[tuple[str, str], ...] = ()

    def environ(self, base) -> dict[str, str]:
        out = dict(base)
        for k, v in self.env:
            if v:
                out[k] = v
            else:
                out.pop(k, None)
        return out

    def to_json(self) -> dict:
        return {"python": self.python, "env": [list(kv) for kv in self.env]}

    @classmethod
    def from_json(cls, obj: dict) -> Baseline:
        return cls(str(obj["python"]), tuple((str(k), str(v)) for k, v in obj.get("env", ())))

    def command(self, script: str) -> str:
        import shlex

        env = " ".join(f"{k}={shlex.quote(v)}" if v else f"-u {k}" for k, v in self.env)
        return f"env {env} {shlex.quote(self.python)} {shlex.quote(script)}".replace("  ", " ")


def baseline_from_flags(python: str | None, env: tuple[str, ...] | list[str]) -> Baseline | None:
    """--baseline-python / --baseline-env (KEY=VALUE, KEY= unsets) as a Baseline; None when
    neither is given (no A/B mode). BadInput on a malformed flag."""
    if python is None and not env:
        return None
    pairs = []
    for it in env:
        key, sep, val = it.partition("=")
        if not sep or not key:
            raise BadInput(f"--baseline-env {it!r}: expected KEY=VALUE (KEY= unsets KEY), e.g. PYTHONPATH=")
        pairs.append((key, val))
    if python is not None and not os.access(python, os.X_OK):
        raise BadInput(f"--baseline-python {python}: not an executable file; give the baseline "
                       "venv's python, e.g. /path/to/venv/bin/python")
    return Baseline(python or sys.executable, tuple(pairs))


def line_limit(case) -> int:
    return 60


def issue(case, torch_version: str = "") -> str:
    return _script(case, torch_version)


def check(case, torch_version: str = "") -> str:
    return _script(case, torch_version)


def _script(case, torch_version: str) -> str:
    detail = case.finding.detail.splitlines()
    try:
        spec = _spec(case.finding)[0]
        sides = (f"candidate: python repro.py (this interpreter and environment); baseline: "
                 f"{spec.command('repro.py')} --side baseline --out FILE")
    except ValueError:  # no baseline named: main() says so when run
        sides = "the baseline is not named in this case"
    lines = (*(common.safe(x, 600) for x in detail[:8] if not x.startswith(SPEC_PREFIX)),
             "A difference between two torch builds: this script runs the program under the "
             "candidate and the baseline, prints both and compares them (Note [A/B repro] in "
             "shapefuzz/repro/ab.py).", common.safe(sides, 400), "program:",
             *(common.safe(x, 200) for x in case.program.pretty().splitlines()[:20]))
    data = json.dumps(case.to_json(), sort_keys=True)
    return common.script(
        common.doc(case, torch_version, lines, signature=True), common.imports_of(shapefuzz_replay),
        [common.bindings({"SOURCE_ROOT": SOURCE_ROOT, "CASE_JSON": data}) + "\n",
         common.block(shapefuzz_replay, "ab")], banner=False)


# ---- running ------------------------------------------------------------------------------------
def _spec(finding) -> tuple[Baseline, int, ABEvidence]:
    """The baseline the finding's evidence names (Note [typed evidence]), the campaign's seed,
    and the evidence itself (the baseline observations are marked with it)."""
    ev = of(finding, ABEvidence)
    if ev is None:
        raise ValueError("this A/B case names no baseline (its finding carries no A/B evidence)")
    return Baseline(ev.python, ev.env), ev.seed, ev


def _jobs(case, seed: int, side: str) -> list:
    p, f, kind = case.program, case.finding, kind_of(case.program)
    pj = p.dumps()
    eager = [Job(pj, "eager", "default", "[]")] if kind.has_eager and side == "candidate" else []
    return eager + [Job(pj, f.system, f.config, kind.variants_json(p, 6, seed))]


def _run_side(case, jobs, repeat: int) -> list:
    """Each job 1 + repeat times (repeat > 0: timing), keeping the fastest observation."""
    import warnings

    import torch.fx.experimental._config as fxx

    warnings.filterwarnings("ignore")
    for key, value in case.torch_config:
        setattr(fxx, key, value)
    out = []
    for job in jobs:
        runs = [run_job(job) for _ in range(1 + repeat)]
        out.append(min(runs[1:] or runs, key=lambda o: o.elapsed_s))
    return out


class _Later:
    """One side running in its own process; `result()` waits for its observations."""

    def __init__(self, cmd: list[str], env: dict, out: str, tmp, name: str):
        import subprocess

        self.out, self.tmp, self.name = out, tmp, name
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def result(self) -> list:
        import pickle

        _, err = self.proc.communicate(timeout=900)
        try:
            if self.proc.returncode != 0 or not os.path.exists(self.out):
                sys.exit(f"the {self.name} side failed (exit {self.proc.returncode}): {err.strip()[-600:]}")
            with open(self.out, "rb") as fh:
                return pickle.load(fh)  # written just now by our own child process
        finally:
            self.tmp.cleanup()


def _side(python: str, env: dict, script: str, name: str, timed: bool) -> _Later:
    import tempfile

    tmp = tempfile.TemporaryDirectory()
    out = os.path.join(tmp.name, "obs.pickle")
    cmd = [python, script, "--side", name, "--out", out] + (["--timed"] if timed else [])
    return _Later(cmd, env, out, tmp, name)


def _timed(case, spec: Baseline, seed: int, script: str) -> tuple[list, list]:
    """Both sides' observations timed in the order candidate, baseline, baseline, candidate;
    each side's fastest of its two turns, job by job."""
    def base() -> list:
        return _side(spec.python, spec.environ(os.environ), script, "baseline", True).result()

    jobs = _jobs(case, seed, "candidate")
    c1 = _run_side(case, jobs, REPEAT)  # in this process
    b1, b2 = base(), base()
    c2 = _run_side(case, jobs, REPEAT)
    return _fastest(c1, c2), _fastest(b1, b2)


def _fastest(a: list, b: list) -> list:
    return [min(x, y, key=lambda o: o.elapsed_s) for x, y in zip(a, b)]


def _show(name: str, o) -> None:
    hows: dict[str, int] = {}
    for d in o.decisions:
        hows[d.how] = hows.get(d.how, 0) + 1
    acc = "".join("a" if r.accepted else "r" for r in (o.replays or question_replays(o)))
    print(f"{name}: {o.system} [{o.config}] {o.outcome.short()}; decisions {hows}; "
          f"{len(o.guards)} guards, {len(o.asserts)} asserts; replays {acc or '-'}; {o.elapsed_s:.3f} s")


def main(case_json: dict, argv: list[str]) -> int:
    case = _case_from_json(case_json, "<repro>")
    spec, seed, ev = _spec(case.finding)
    timed = case.finding.symptom == "slowdown"
    if "--side" in argv:
        import pickle

        side = argv[argv.index("--side") + 1]
        obs = _run_side(case, _jobs(case, seed, side), REPEAT if "--timed" in argv else 0)
        with open(argv[argv.index("--out") + 1], "wb") as fh:
            pickle.dump(obs, fh)
        return 0
    return _compare(case, spec, ev, seed, argv[0], timed)


def _compare(case, spec: Baseline, ev: ABEvidence, seed: int, script: str, timed: bool) -> int:
    f = case.finding
    print(f"finding: {f.summary}\nsignature: {common.key_of(f)}\nprogram:\n{case.program.pretty()}\n")
    print(f"candidate: {sys.executable} {script}\nbaseline:  {spec.command(script)}\n")
    if timed:  # one side at a time, so neither slows the other down (Note [A/B repro])
        cand, base = _timed(case, spec, seed, script)
    else:  # the baseline's process starts (and imports torch) while this one runs
        later = _side(spec.python, spec.environ(os.environ), script, "baseline", timed)
        cand, base = _run_side(case, _jobs(case, seed, "candidate"), 0), later.result()
    _show("candidate", cand[-1])
    _show("baseline ", base[-1])
    eager = cand[0] if kind_of(case.program).has_eager else None
    obs = [*cand[1 if eager is not None else 0:], *(mark(o, ev) for o in base)]
    hits = [x for x in check_all(case.program, eager, obs) if x.key == f.key]
    if not hits:
        print("OK: the candidate and the baseline no longer differ this way")
        return 0
    print(f"BUG ({f.oracle} {f.symptom}): {hits[0].detail}")
    return 1


WRITER = register_writer(Writer("ab", issue, check, line_limit))  # Note [repro forms]
