"""Running a known upstream issue's repro.py in a fork of the warm worker template.

Note [warm confirmation]: a finding counts only once its repro.py exits 1 (Note [background
confirmation]), and a fresh interpreter pays torch's import for that: 3-4 CPU seconds each, plus
as much again for the issue-form reduction's trial interpreter. On unmodified torch most findings
of a campaign are known upstream issues (a 30 s torch-env campaign met four, and their
confirmations took 47% of the campaign's CPU on the 2-core machine, beside the worker they
slowed). A known issue's repro was confirmed standalone when its entry was listed; what the
campaign still has to show is that this program's repro.py exits 1. So a known finding's repro.py
runs, unreduced, in a process forked from the worker template (Note [zygote]): the same
interpreter and environment, torch already imported, run as `python repro.py` would run it
(`__main__`, its folder first on sys.path, its output kept in confirm.txt, an uncaught exception
exit 1 as the interpreter makes it). A new finding, and every finding under --strict, is still
confirmed standalone in a fresh interpreter: that repro.py is what a user pastes into an issue."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from shapefuzz.campaign.template import context

__all__ = ["exits_1_warm"]


def exits_1_warm(case_dir: Path, timeout_s: float) -> bool:
    script, log = Path(case_dir) / "repro.py", Path(case_dir) / "confirm.txt"
    proc = context("forkserver").Process(target=_run_script, args=(str(script), str(log)), daemon=True)
    proc.start()
    proc.join(timeout_s)
    if proc.is_alive():  # a hang is not a confirmation
        proc.kill()
        proc.join()
    with log.open("a") as f:
        f.write(f"\nexit {proc.exitcode}\n")
    return proc.exitcode == 1


def _run_script(script: str, log: str) -> None:
    """The body of `python script` in this (forked) process; its exit code is the script's."""
    import runpy
    import traceback

    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"(run in a fork of the warm worker template: Note [warm confirmation])\n")
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    sys.argv = [script]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = _exit_code(e.code)
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _exit_code(code) -> int:
    """What the interpreter exits with for sys.exit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
