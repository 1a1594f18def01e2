"""An upstream issue draft for one finding, in the form of PyTorch's bug report template
(`### 🐛 Describe the bug`, the repro inline, expected vs actual, `### Versions`).

The draft says only what the case folder and a fresh run of its repro.py show: the finding's
fields come from case.json (loaded as data, never evaluated), the repro is pasted as it is, and
"Actual" is what it printed under the running torch. A repro that exits 0 here does not
reproduce, so there is no draft (the caller exits 1): an issue filed from stale output would
report a bug this torch may not have."""

from __future__ import annotations

import platform
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from shapefuzz import BadInput
from shapefuzz.cases.corpus import load_case

__all__ = ["REPRO_TIMEOUT_S", "TITLE_MAX", "Draft", "ReproRun", "draft_issue", "issue_title", "run_repro",
           "versions_text"]

#: PyTorch's issue titles are read in lists; a longer title is cut at a word
TITLE_MAX = 99
#: a repro of the issue form runs in seconds; one past this is hung, not slow
REPRO_TIMEOUT_S = 120.0
#: how much of a repro's output the draft shows (a traceback's tail is what a reader needs)
OUTPUT_LINES = 60


@dataclass(frozen=True, slots=True)
class ReproRun:
    """One run of a repro.py: its exit code (None: timed out) and what it printed (stdout, then
    stderr)."""

    returncode: int | None
    output: str

    @property
    def reproduces(self) -> bool:
        return self.returncode == 1


@dataclass(frozen=True, slots=True)
class Draft:
    title: str
    body: str

    def text(self) -> str:
        return f"{self.title}\n\n{self.body}"


def draft_issue(folder: str | Path, run: ReproRun | None = None) -> Draft:
    """The draft for a finding folder (case.json + repro.py); `run` defaults to running its
    repro.py with this interpreter. BadInput when the folder is not a finding."""
    path = _folder(folder)
    case = load_case(path)
    repro = (path / "repro.py").read_text()
    run = run or run_repro(path / "repro.py")
    return Draft(issue_title(case.finding.summary, case.finding.oracle, case.finding.key),
                 _body(case, repro, run))


def _folder(folder: str | Path) -> Path:
    path = Path(folder)
    missing = [n for n in ("case.json", "repro.py") if not (path / n).is_file()]
    if missing:
        raise BadInput(f"CASE {str(folder)!r}: not a finding folder (no {' or '.join(missing)}); give a folder "
                       f"a campaign wrote, e.g. corpus/pending-unbacked-narrow-make_fx")
    return path


def run_repro(repro: Path, timeout_s: float = REPRO_TIMEOUT_S) -> ReproRun:
    """Run repro.py with this interpreter, in its own folder (so its messages name `repro.py`,
    not this machine's paths)."""
    try:
        p = subprocess.run([sys.executable, repro.name], cwd=repro.parent, capture_output=True, text=True,
                           timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        return ReproRun(None, _text(e.stdout) + _text(e.stderr))
    return ReproRun(p.returncode, p.stdout + p.stderr)


def _text(out: bytes | str | None) -> str:
    return out.decode(errors="replace") if isinstance(out, bytes) else out or ""


def issue_title(summary: str, oracle: str, signature: str) -> str:
    """"<oracle>: <what goes wrong> (<op>)", cut to TITLE_MAX characters at a word."""
    m = re.search(r"\bat=[\w-]+\.(\w+)", signature)  # Note [root cause]: at=<family>.<op>[@aten op]
    tail = f" ({m.group(1)})" if m else ""
    head = f"{oracle}: {summary}"
    if len(head) + len(tail) > TITLE_MAX:
        head = head[:TITLE_MAX - len(tail) - 1].rsplit(" ", 1)[0] + "…"
    return head + tail


def _body(case, repro: str, run: ReproRun) -> str:
    f = case.finding
    return "\n".join([
        "### 🐛 Describe the bug", "",
        f"With `{f.system}` (config `{f.config}`), {f.summary.rstrip('.')}. Found by shapefuzz, a "
        f"differential fuzzer of PyTorch's symbolic shapes (its `{f.oracle}` oracle).", *_said(repro), "",
        "```python", repro.rstrip("\n"), "```", "",
        "### Expected", "", *_expected(repro, run.output), "",
        "### Actual", "", f"`python repro.py` {_exit(run)}:", "", "```", _tail(run.output), "```", "",
        "### Versions", "", "```", versions_text(), "```", ""])


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:].rstrip(".")


def _docstring(repro: str) -> list[str]:
    m = re.match(r'\s*"""(.*?)"""', repro, re.S)
    return m.group(1).splitlines() if m else []


def _said(repro: str) -> list[str]:
    """The repro's own account of the finding: its docstring lines after the title, without
    the oracle's rule (Expected holds that) and the provenance line."""
    lines = _docstring(repro)[1:]
    keep = [x for x in lines if x.strip() and not x.startswith(("oracle ", "system "))]
    return ["", *keep] if keep else []


def _expected(repro: str, output: str) -> list[str]:
    rule = next((x.split(": ", 1)[1] for x in _docstring(repro) if x.startswith("oracle ") and ": " in x), "")
    said = [x for x in output.splitlines() if "expected" in x.lower() and not x.startswith("BUG")]
    out = [_sentence(rule) + "." if rule else "The program behaves as eager does (repro.py exits 0)."]
    return out + (["", "```", *said, "```"] if said else [])


def _exit(run: ReproRun) -> str:
    if run.returncode is None:
        return f"ran past {REPRO_TIMEOUT_S:g} s and was stopped; it printed"
    return f"exits {run.returncode} and prints"


def _tail(output: str) -> str:
    lines = output.rstrip("\n").splitlines()
    if len(lines) <= OUTPUT_LINES:
        return "\n".join(lines)
    return "\n".join([f"[... {len(lines) - OUTPUT_LINES} earlier lines]", *lines[-OUTPUT_LINES:]])


def versions_text() -> str:
    """torch's version and git commit, Python's and the platform: what a triager asks first."""
    import torch

    git = getattr(torch.version, "git_version", "") or "unknown"
    return "\n".join([f"PyTorch version: {torch.__version__}", f"PyTorch git version: {git}",
                      f"Python version: {platform.python_version()} ({platform.python_implementation()})",
                      f"Platform: {platform.platform()}"])
