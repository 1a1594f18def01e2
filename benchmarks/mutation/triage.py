"""Triage of a mutant before it is scored (issue 30 item 2), cheapest question first:

- broken: the mutated function does not compile or cannot be swapped in, the smoke script's
  programs (smoke.py: trace a few dynamic-shape programs with make_fx and export) fail or hang
  under it, or, for a mutant that would count, `import torch` plus the smoke script fails with
  its patch folder on PYTHONPATH (what a patch author would see at once: no measure of oracles);
- unreached: no program of the fixed set executes a line of the mutated node or its statement's
  first line (probe.py records each program's torch lines in its first reference run);
- equivalent-looking: no program that reaches it changes anything observable (Note [observable]
  in probe.py), checked in a child of the probe's warm interpreter (Note [probe]);
- counted: the rest, the mutants the score is over.

The probe replaces a short campaign per mutant (35-75 s each, most of it generation and start-up,
and over a program set other than the one coverage measured): it generates the programs once and
runs only the ones that reach the mutant."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from mutation.apply import clean_env, compile_error, mutant_env, spec_of, write_patch
from mutation.mutants import Mutant

__all__ = ["Triage", "TriageSettings", "Triager", "Verdict"]

HERE = Path(__file__).resolve().parent
BENCHMARKS = HERE.parent


class Verdict(Enum):
    BROKEN = "broken"
    UNREACHED = "unreached"
    EQUIVALENT = "equivalent-looking"
    COUNTED = "counted"


@dataclass(frozen=True, slots=True)
class TriageSettings:
    work: Path  # patch folders, the probe's reference runs
    programs: int = 200  # the fixed program set of coverage and observation (probe.py)
    smoke_timeout_s: float = 300.0
    python: str = sys.executable
    env: dict = field(default_factory=dict)  # the environment without any mutant


@dataclass(frozen=True, slots=True)
class Triage:
    id: str
    verdict: Verdict
    reason: str  # one line: why (the failing command's last line, the first differing field)
    seconds: float

    def to_json(self) -> dict:
        return {"id": self.id, "verdict": self.verdict.value, "reason": self.reason, "seconds": self.seconds}

    @classmethod
    def from_json(cls, d: dict) -> Triage:
        return cls(d["id"], Verdict(d["verdict"]), d["reason"], d["seconds"])


def _last_line(text: str) -> str:
    lines = [s for s in text.strip().splitlines() if s.strip()]
    return lines[-1][:300] if lines else "no output"


class Triager:
    """Classifies mutants; the probe interpreter (and its reference runs, cached in the work
    folder) starts on first need and lives until close()."""

    def __init__(self, settings: TriageSettings, paths: set[str]) -> None:
        self.s, self.paths = settings, paths
        self.clean = clean_env(settings.env)
        self._lines: dict[str, dict[int, list[int]]] | None = None
        self._probe: subprocess.Popen | None = None

    # ---- the unmodified side
    def check_smoke(self) -> None:
        """The smoke script must pass without a mutant, else every mutant would look broken."""
        ok, why = self._smoke(self.clean)
        if not ok:
            raise SystemExit(f"the smoke script fails on unmodified torch ({why}); fix "
                             f"{HERE / 'smoke.py'} before triaging")

    def lines(self) -> dict[str, dict[int, list[int]]]:
        """{torch file: {line: the programs that execute it}} (the probe's first reference run)."""
        if self._lines is None:
            self._lines = {p: {int(k): v for k, v in by.items()} for p, by in self._start()["lines"].items()}
        return self._lines

    def _start(self) -> dict:
        args = [a for p in sorted(self.paths) for a in ("--path", p)]
        boot = f"import sys; sys.path.insert(0, {str(BENCHMARKS)!r}); from mutation.probe import main; main()"
        work = self.s.work / f"probe-{self.s.programs}"
        work.mkdir(parents=True, exist_ok=True)
        with open(self.s.work / "probe.log", "a") as log:  # the child keeps its own descriptor
            self._probe = subprocess.Popen([self.s.python, "-c", boot, "--programs", str(self.s.programs),
                                            *args, "--work", str(work)], env=self.clean, stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=log, text=True)
        return self._read("the probe's reference runs")

    def _read(self, what: str) -> dict:
        line = self._probe.stdout.readline()
        if not line:
            raise SystemExit(f"the probe stopped during {what}; see {self.s.work / 'probe.log'}")
        return json.loads(line)

    def close(self) -> None:
        if self._probe is not None:
            self._probe.stdin.close()
            self._probe.wait(timeout=60)
            self._probe = None

    # ---- one mutant
    def __call__(self, m: Mutant) -> Triage:
        t0 = time.monotonic()
        verdict, reason = self._classify(m)
        return Triage(m.id, verdict, reason, round(time.monotonic() - t0, 1))

    def _classify(self, m: Mutant) -> tuple[Verdict, str]:
        bad = compile_error(m)
        if bad:
            return Verdict.BROKEN, f"does not compile: {bad}"
        programs = self.reaching(m)
        if not programs:
            return Verdict.UNREACHED, f"line {m.line} (statement at {m.stmt_line}) not executed by " \
                                      f"{self.s.programs} generated programs"
        self._probe.stdin.write(json.dumps({"spec": spec_of(m), "programs": programs}) + "\n")
        self._probe.stdin.flush()
        answer = self._read(f"mutant {m.id}")
        verdict = Verdict(answer["verdict"])
        if verdict is not Verdict.COUNTED:
            return verdict, answer["reason"]
        ok, why = self._smoke(mutant_env(write_patch(m, self.s.work / "patches" / m.id), self.s.env))
        return (Verdict.COUNTED, answer["reason"]) if ok else (Verdict.BROKEN, f"smoke script: {why}")

    def reaching(self, m: Mutant) -> list[int]:
        """The programs that execute the mutated node's lines or its statement's first line."""
        by_line = self.lines().get(m.path, {})
        lines = {m.stmt_line, *range(m.line, m.end_line + 1)}
        return sorted({k for line in lines for k in by_line.get(line, ())})

    # ---- subprocesses
    def _smoke(self, env: dict) -> tuple[bool, str]:
        try:
            p = subprocess.run([self.s.python, str(HERE / "smoke.py")], env=env, capture_output=True,
                               text=True, timeout=self.s.smoke_timeout_s, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return False, f"timed out after {self.s.smoke_timeout_s:.0f} s"
        return p.returncode == 0, f"exit {p.returncode}: {_last_line(p.stderr or p.stdout)}"
