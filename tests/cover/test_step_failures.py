"""A campaign survives its own failures (Note [step failures] in campaign/confirming.py): a
planted exception in a finding's background confirmation, its shrink or its report step is
recorded against that finding (unconfirmed, its traceback in report.json), the campaign still
writes its report and returns an exit code; and the process parses one thread at a time (Note
[one parser at a time] in systems/parser_lock.py). The campaign runs in process over the ref
system with a planted crash, its jobs in a stand-in pool: no worker, no torch job."""

from __future__ import annotations

import ast
import builtins
import hashlib
import json
import threading
import time
from dataclasses import replace

import pytest

from shapefuzz.campaign import run
from shapefuzz.campaign.executor import InProcess
from shapefuzz.campaign.shrinking import Shrinker
from shapefuzz.strategies.settings import GenSettings
from shapefuzz.systems import parser_lock
from shapefuzz.systems.jobs import run_job
from shapefuzz.systems.observation import Outcome


def _planted(job):
    obs = run_job(job)
    if job.system == "ref" and hashlib.sha256(job.program_json.encode()).hexdigest()[0] in "01234567":
        return replace(obs, outcome=Outcome("crash", "Crash", "planted"))  # about one program in two
    return obs


class InProcessPool(InProcess):
    """WorkerPool's interface as run_fuzz uses it, every job run here with a planted crash."""

    def __init__(self, *args, **kwargs):
        super().__init__(lambda jobs: [_planted(j) for j in jobs])


def _campaign(tmp_path, monkeypatch, quiet: bool = True) -> tuple[int, dict]:
    monkeypatch.setattr(run, "WorkerPool", InProcessPool)
    monkeypatch.setattr(run, "_freeze_heap", lambda: None)  # gc.freeze would outlive the test
    opts = run.FuzzOptions(targets=(("ref", "default"),), budget_s=8.0, max_examples=12, seed=3, workers=1,
                           out=tmp_path / "out", gen=GenSettings(), torch_config=(), timeout_s=10.0,
                           shrink_budget_s=2.0, confirm=True, quiet=quiet, known={})
    rc = run.run_fuzz(opts, t0=time.monotonic())
    return rc, json.loads((opts.out / "report.json").read_text())


def _failed(report: dict, step: str) -> list[dict]:
    assert not report["findings"], report["findings"]  # every one of them failed a step
    rows = report["unconfirmed"]
    assert rows and all(not r["confirmed"] and r["error_step"] == step for r in rows), rows
    assert all("planted" in r["error"] and "Traceback" in r["error"] for r in rows), rows
    bugs = [b for b in report["shapefuzz_bugs"] if b.get("step") == step]
    assert len(bugs) == len(rows)  # loud: each is a shapefuzz bug too
    return rows


def _boom(*args, **kwargs):
    raise RuntimeError("planted failure")


def test_a_confirmation_that_raises_is_that_finding_s(tmp_path, monkeypatch):
    monkeypatch.setattr(run, "confirm", _boom)
    rc, report = _campaign(tmp_path, monkeypatch)
    assert rc == 1
    _failed(report, "confirm")


def test_a_shrink_that_raises_is_that_finding_s(tmp_path, monkeypatch):
    confirmed: list = []
    monkeypatch.setattr(run, "confirm", lambda d, t: confirmed.append(d) or True)
    monkeypatch.setattr(Shrinker, "shrink_one", _boom)
    rc, report = _campaign(tmp_path, monkeypatch)
    assert rc == 1
    rows = _failed(report, "shrink")
    assert not confirmed  # no time spent confirming a finding whose shrink failed
    assert all((tmp_path / "out" / "findings" / r["case_dir"].rsplit("/", 1)[-1] / "case.json").exists()
               for r in rows)  # saved as found


def test_a_report_step_that_raises_is_that_finding_s(tmp_path, monkeypatch):
    monkeypatch.setattr(run, "confirm", lambda d, t: True)
    monkeypatch.setattr(run, "repro_source", _boom)  # writing the case's repro.py
    rc, report = _campaign(tmp_path, monkeypatch)
    assert rc == 1
    _failed(report, "report")
    assert (tmp_path / "out" / "report.md").exists()


def test_without_failures_the_same_campaign_confirms_its_findings(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(run, "confirm", lambda d, t: True)
    rc, report = _campaign(tmp_path, monkeypatch, quiet=False)
    assert rc == 1 and report["findings"] and not report["shapefuzz_bugs"]
    n = len(report["findings"])
    assert f"{n} confirmed finding(s) ({n} new, 0 known upstream, 0 unconfirmed)" in capsys.readouterr().out
    assert report["new_findings"] == n  # report.json counts what fails the run, as the summary does
    assert not any("error" in r for r in report["findings"] + report["unconfirmed"])


# ---- one parser at a time -----------------------------------------------------------------------
@pytest.fixture
def wrapped(monkeypatch):
    monkeypatch.setattr(builtins, "compile", builtins.compile)  # restored after the test
    parser_lock.install()
    parser_lock.install()  # once is enough: a second call changes nothing
    assert parser_lock.installed()
    return parser_lock


def test_every_ast_parse_and_compile_of_an_ast_takes_the_lock(wrapped):
    """ast.parse and ast.literal_eval go through compile(); a thread holding the lock keeps
    both, and compile() of an ast object, waiting; compile() of text does not wait."""
    held, done = threading.Event(), []

    def hold():
        with wrapped.LOCK:
            held.set()
            time.sleep(0.3)
            done.append("held")

    t = threading.Thread(target=hold)
    t.start()
    held.wait()
    compile("x = 1", "<text>", "exec")
    done.append("text")
    ast.parse("x = 1")
    done.append("parse")
    compile(ast.parse("y = 2"), "<tree>", "exec")
    done.append("tree")
    t.join()
    assert done == ["text", "held", "parse", "tree"], done
    assert ast.literal_eval("[1, 2]") == [1, 2]


@pytest.mark.parametrize("future", [False, True])
def test_the_wrapper_keeps_the_caller_s_future_flags(wrapped, future):
    """compile() inherits the __future__ statements of the code that calls it: through the
    wrapper, the caller's, not the wrapper's own (parser_lock.py has `annotations`)."""
    import __future__

    head = "from __future__ import annotations\n" if future else ""
    caller: dict = {}
    exec(parser_lock._ORIGINAL(head + "def call():\n    return compile('def f(x: int): pass', '<t>', 'exec')\n",
                               "<caller>", "exec", dont_inherit=True), caller)
    code = caller["call"]()
    assert bool(code.co_flags & __future__.annotations.compiler_flag) == future
    plain = caller["call"].__globals__["__builtins__"]
    assert (plain["compile"] if isinstance(plain, dict) else plain.compile) is parser_lock._compile
