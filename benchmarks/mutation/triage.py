"""Triage of a mutant before it is scored (issue 30 item 2), cheapest question first:

- broken: the mutated function does not compile, or the smoke script (smoke.py: import torch,
  trace a few dynamic-shape programs with make_fx and export) fails or times out under it;
- unreached: no line of the mutated node, nor its statement's first line, is executed by the
  generator's fixed program set (coverage.py, measured once per torch and program count);
- equivalent-looking: a short fixed-seed campaign (`shapefuzz fuzz --seed 0 --max-examples N
  --no-confirm --workers 1`) reports the same under the mutant as without it (Note [noise]);
- counted: the rest, the mutants the score is over.

Note [noise]: what "the same report" means is measured, not assumed: the unmodified campaign runs
twice, and a field of the fingerprint (outcome counts, decision kinds, error messages, finding
signatures, program counts) that differs between those two runs is left out of every comparison,
so timing noise (a shrink cut short, a timeout) never makes a mutant look observable."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from mutation.apply import clean_env, compile_error, mutant_env, write_patch
from mutation.mutants import Mutant

__all__ = ["Triage", "TriageSettings", "Triager", "Verdict", "fingerprint"]

HERE = Path(__file__).resolve().parent
BENCHMARKS = HERE.parent


class Verdict(Enum):
    BROKEN = "broken"
    UNREACHED = "unreached"
    EQUIVALENT = "equivalent-looking"
    COUNTED = "counted"


@dataclass(frozen=True, slots=True)
class TriageSettings:
    work: Path  # patch folders, coverage, the campaigns
    coverage_programs: int = 200
    examples: int = 200  # programs of the equivalence campaign
    smoke_timeout_s: float = 300.0
    campaign_timeout_s: float = 3600.0
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


def fingerprint(report: dict) -> dict:
    """What a campaign observed, for Note [noise]."""
    rows = report.get("findings", []) + report.get("unconfirmed", [])
    return {"programs": report.get("programs"), "valid_programs": report.get("valid_programs"),
            "outcomes": report.get("outcomes"), "decisions": report.get("decisions"),
            "error_messages": report.get("error_messages"),
            "findings": sorted({f["signature"] for f in rows})}


def differences(a: dict, b: dict, noisy: set[str]) -> list[str]:
    return [k for k in sorted(a) if k not in noisy and a.get(k) != b.get(k)]


class Triager:
    """Classifies mutants; the unmodified side (coverage, the reference campaigns) is measured
    on first need and cached in the work folder."""

    def __init__(self, settings: TriageSettings, paths: set[str]) -> None:
        self.s, self.paths = settings, paths
        self.clean = clean_env(settings.env)
        self._lines: dict[str, set[int]] | None = None
        self._reference: tuple[dict, set[str]] | None = None

    # ---- the unmodified side
    def check_smoke(self) -> None:
        """The smoke script must pass without a mutant, else every mutant would look broken."""
        ok, why = self._smoke(self.clean)
        if not ok:
            raise SystemExit(f"the smoke script fails on unmodified torch ({why}); fix "
                             f"{HERE / 'smoke.py'} before triaging")

    def lines(self) -> dict[str, set[int]]:
        if self._lines is None:
            out = self.s.work / f"coverage-{self.s.coverage_programs}.json"
            if not out.exists():
                args = [a for p in sorted(self.paths) for a in ("--path", p)]
                boot = f"import sys; sys.path.insert(0, {str(BENCHMARKS)!r}); from mutation.coverage import main; main()"
                self._run([self.s.python, "-c", boot, "--programs", str(self.s.coverage_programs),
                           *args, "--out", str(out)], self.clean, None, "coverage")
            data = json.loads(out.read_text())
            self._lines = {p: set(v) for p, v in data["lines"].items()}
        return self._lines

    def reference(self) -> tuple[dict, set[str]]:
        """The unmodified campaign's fingerprint and its noisy fields (Note [noise])."""
        if self._reference is None:
            prints = [fingerprint(self._campaign(self.clean, self.s.work / "reference" / f"run{k}"))
                      for k in (1, 2)]
            self._reference = prints[0], set(differences(prints[0], prints[1], set()))
        return self._reference

    # ---- one mutant
    def __call__(self, m: Mutant) -> Triage:
        t0 = time.monotonic()
        verdict, reason = self._classify(m)
        return Triage(m.id, verdict, reason, round(time.monotonic() - t0, 1))

    def _classify(self, m: Mutant) -> tuple[Verdict, str]:
        bad = compile_error(m)
        if bad:
            return Verdict.BROKEN, f"does not compile: {bad}"
        env = mutant_env(write_patch(m, self.s.work / "patches" / m.id), self.s.env)
        ok, why = self._smoke(env)
        if not ok:
            return Verdict.BROKEN, f"smoke script: {why}"
        if not self.reached(m):
            return Verdict.UNREACHED, f"line {m.line} (statement at {m.stmt_line}) not executed by " \
                                      f"{self.s.coverage_programs} generated programs"
        return self._equivalence(m, env)

    def reached(self, m: Mutant) -> bool:
        covered = self.lines().get(m.path, set())
        return m.stmt_line in covered or any(k in covered for k in range(m.line, m.end_line + 1))

    def _equivalence(self, m: Mutant, env: dict) -> tuple[Verdict, str]:
        base, noisy = self.reference()
        try:
            report = self._campaign(env, self.s.work / "triage" / m.id)
        except RuntimeError as e:
            return Verdict.COUNTED, f"the campaign fails under it: {e}"
        diff = differences(fingerprint(report), base, noisy)
        if not diff:
            return Verdict.EQUIVALENT, f"same {', '.join(sorted(set(base) - noisy))} over {self.s.examples} programs"
        return Verdict.COUNTED, f"differs in {', '.join(diff)}"

    # ---- subprocesses
    def _smoke(self, env: dict) -> tuple[bool, str]:
        try:
            p = subprocess.run([self.s.python, str(HERE / "smoke.py")], env=env, capture_output=True,
                               text=True, timeout=self.s.smoke_timeout_s, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return False, f"timed out after {self.s.smoke_timeout_s:.0f} s"
        return p.returncode == 0, f"exit {p.returncode}: {_last_line(p.stderr or p.stdout)}"

    def _campaign(self, env: dict, out: Path) -> dict:
        report = out / "report.json"
        if report.exists():
            return json.loads(report.read_text())  # a finished campaign of an interrupted run
        cmd = [self.s.python, "-m", "shapefuzz", "fuzz", "--seed", "0", "--max-examples", str(self.s.examples),
               "--budget", str(self.s.campaign_timeout_s), "--no-confirm", "--workers", "1", "--quiet",
               "--out", str(out)]
        self._run(cmd, env, (0, 1), "campaign")
        return json.loads(report.read_text())

    def _run(self, cmd: list[str], env: dict, ok: tuple[int, ...] | None, what: str) -> None:
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                               timeout=self.s.campaign_timeout_s + 300)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{what} timed out") from None
        if p.returncode not in (ok or (0,)):
            raise RuntimeError(f"{what} exit {p.returncode}: {_last_line(p.stderr or p.stdout)}")
