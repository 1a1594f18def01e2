"""Whole campaigns through the CLI, as a user runs them:

- a planted abort and a planted hang (test-only op, tests/reliability/planted_ops.py) become
  `crash` / `timeout` findings with their programs, and the campaign finishes on budget;
- the same seed gives the same set of programs with 1 and 2 workers (Note [parallel rounds]);
- a campaign killed with SIGKILL and started again with the same --out resumes: it keeps every
  finding already saved, counts both parts, and processes the same programs as a run that was
  never interrupted (Note [resume]).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

#: small programs with the planted op; "wrong" gives ordinary (cheap) findings to shrink
WRONG = ["--system", "make_fx", "--family", "planted", "--family", "pointwise", "--max-ops", "3",
         "--plugin", "planted_ops", "--no-confirm", "--quiet", "--shrink-budget", "5"]
N_PROGRAMS = 16


def fuzz(args, env, out: Path, **kw) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "shapefuzz", "fuzz", *args, "--out", str(out)]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def finish(proc: subprocess.Popen, timeout: float = 900) -> tuple[int, str]:
    out, err = proc.communicate(timeout=timeout)
    assert "Traceback" not in out + err, out + err  # exit 1 must mean findings, not a crash
    return proc.returncode, out + err


def report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


def programs(out: Path) -> list[str]:
    return (out / "programs.txt").read_text().split()


# ---- isolation ---------------------------------------------------------------------------------
def test_campaign_survives_abort_and_hang(tmp_path, cli_env, plugin):
    """Seed 19 draws an abort as round 0's third program and a hang as round 1's third, so both
    show up early even on a loaded machine (worker start-up can take 30 s there)."""
    budget = 120
    env = {**cli_env, "PLANTED_ACTIONS": "abort,hang"}
    t0 = time.monotonic()
    rc, log = finish(fuzz(["--system", "make_fx", "--family", "planted", "--family", "pointwise",
                           "--max-ops", "3", "--plugin", "planted_ops", "--no-confirm", "--quiet",
                           "--budget", str(budget), "--timeout", "8", "--shrink-budget", "10",
                           "--workers", "2", "--seed", "19"], env, tmp_path / "out"))
    wall = time.monotonic() - t0
    assert rc == 1, log
    r = report(tmp_path / "out")
    kinds = {f["kind"]: f for f in r["findings"] if f["system"] == "make_fx"}
    assert {"crash", "timeout"} <= set(kinds), (r["findings"], log)
    assert "SIGABRT" in kinds["crash"]["detail"]
    assert "no answer in 8 s" in kinds["timeout"]["detail"]
    plugin("planted_ops")  # so that the cases load: they use the test-only op

    from shapefuzz.cases.corpus import load_case

    for kind, action in (("crash", "abort"), ("timeout", "hang")):
        case = load_case(kinds[kind]["case_dir"])  # saved with the program that did it
        assert [i.args[1] for i in case.program.instrs if i.op == "planted"].count(action) >= 1
    outcomes = r["outcomes"]["make_fx"]["default"]
    assert outcomes.get("ok", 0) >= 1, outcomes  # ordinary programs ran between the failures
    assert r["programs"] > outcomes.get("crash", 0) + outcomes.get("timeout", 0)
    lines = r["error_messages"]["make_fx"]["default"]  # error outcomes, counted by message
    assert any("SIGABRT" in m for m in lines) and any("no answer in 8 s" in m for m in lines), lines
    assert sum(lines.values()) == outcomes.get("crash", 0) + outcomes.get("timeout", 0) + outcomes.get("error", 0)
    # on budget: generation stops at the budget, shrinking may take it to 1.5x, programs still
    # in flight get 10 s more (Campaign.DRAIN_GRACE_S); the rest is confirming and reporting
    assert r["campaign_s"] <= 1.5 * budget + 10 + 5, r["campaign_s"]
    assert wall <= 1.5 * budget + 120, wall


# ---- parallel determinism and resume -----------------------------------------------------------
@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    """An uninterrupted campaign with one worker: the programs every other run must match."""
    import os

    from conftest import HERE, ROOT

    env = dict(os.environ, PLANTED_ACTIONS="wrong",
               PYTHONPATH=os.pathsep.join([str(HERE), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = tmp_path_factory.mktemp("ref") / "out"
    rc, log = finish(fuzz([*WRONG, "--max-examples", str(N_PROGRAMS), "--budget", "600",
                           "--workers", "1", "--seed", "7"], env, out))
    assert rc == 1, log  # "wrong" findings
    return env, out


def test_same_seed_same_programs_with_one_or_two_workers(reference_run, tmp_path):
    env, ref = reference_run
    rc, log = finish(fuzz([*WRONG, "--max-examples", str(N_PROGRAMS), "--budget", "600",
                           "--workers", "2", "--seed", "7"], env, tmp_path / "out"))
    assert rc == 1, log
    assert len(programs(ref)) == N_PROGRAMS
    assert programs(tmp_path / "out") == programs(ref)
    assert report(tmp_path / "out")["program_set"] == report(ref)["program_set"]
    sigs = {f["signature"] for f in report(ref)["findings"]}
    assert sigs and {f["signature"] for f in report(tmp_path / "out")["findings"]} == sigs


def test_kill_9_then_resume(reference_run, tmp_path):
    env, ref = reference_run
    out = tmp_path / "out"
    args = [*WRONG, "--max-examples", str(N_PROGRAMS), "--budget", "600", "--workers", "2",
            "--seed", "7"]
    proc = fuzz(args, env, out)
    state_file, saved_before = out / "campaign-state.json", []
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            state = json.loads(state_file.read_text())  # atomic writes: never torn
        except FileNotFoundError:
            state = None
        if state and state["stats"]["programs"] >= 4 and list(out.glob("findings/*/case.json")):
            break
        time.sleep(0.2)
    assert proc.poll() is None, "the campaign ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "report.json").exists()
    saved_before = {p.parent.name: p.read_bytes() for p in out.glob("findings/*/case.json")}
    assert saved_before

    rc, log = finish(fuzz(args, env, out))
    assert rc == 1, log
    r = report(out)
    assert r["resumed"] is True
    assert r["programs"] == N_PROGRAMS  # both parts counted, none twice
    assert programs(out) == programs(ref)  # the same programs as the uninterrupted run
    dirs = {Path(f["case_dir"]).name for f in r["findings"]}
    assert set(saved_before) <= dirs  # every finding saved before the kill is still reported
    for name in saved_before:
        json.loads((out / "findings" / name / "case.json").read_text())  # and still whole


# ---- an oracle from a plugin ---------------------------------------------------------------------
def test_an_oracle_from_a_plugin_module_reports_confirmed_findings(tmp_path, cli_env):
    """Note [oracle registry]: toy_oracle.py registers one oracle, with its evidence and its repro
    form (Note [typed evidence], Note [repro forms]), and nothing else changes."""
    out = tmp_path / "out"
    rc, log = finish(fuzz(["--system", "make_fx", "--family", "layout", "--max-ops", "3",
                           "--plugin", "toy_oracle", "--max-examples", "30", "--budget", "600",
                           "--workers", "1", "--seed", "3", "--shrink-budget", "10", "--quiet"],
                          cli_env, out))
    assert rc == 1, log
    toy = [f for f in report(out)["findings"] if f["oracle"] == "toy-rank"]
    assert toy and all(f["confirmed"] for f in toy), report(out)["findings"]
    # its evidence, recorded in the workers by its recorder, reaches report.json as data
    assert toy[0]["evidence"]["oracle"] == "toy-rank" and max(toy[0]["evidence"]["data"]["ranks"]) >= 2, toy[0]
    repro = Path(toy[0]["case_dir"]) / "repro.py"
    r = subprocess.run([sys.executable, str(repro)], capture_output=True, text=True, timeout=300,
                       check=False)
    assert r.returncode == 1 and "output ranks" in r.stdout, r.stdout + r.stderr
    assert not (repro.parent / "check.py").exists()  # its repro.py is the whole harness
