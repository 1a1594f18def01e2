"""The campaign's shape (issue 32; STYLE 10 and 14): the Campaign class stays small, its loop
talks to one executor interface (Note [executor] in campaign/executor.py) whichever kind runs
the jobs, the budget phases follow one transition function (Note [budget phases] in
campaign/phases.py), and no campaign module grows near the package's 500-line limit. Read with
ast where the question is the source."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from shapefuzz.campaign.ab_pool import ABPool
from shapefuzz.campaign.executor import Executor, ExecutorBase, InProcess, as_executor
from shapefuzz.campaign.phases import BudgetPhase, next_phase
from shapefuzz.campaign.workers import WorkerPool

CAMPAIGN = Path(__file__).resolve().parents[2] / "shapefuzz" / "campaign"
INTERFACE = ("submit", "poll", "cancel", "run_many", "close")
#: what the reports read off an executor besides the interface (Note [executor])
FACTS = ("times", "coverage", "first_ready_s", "bugs", "cpu_s", "waitables")


def _class(path: Path, name: str) -> ast.ClassDef:
    tree = ast.parse(path.read_text())
    return next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name)


def _methods(cls: ast.ClassDef) -> list[str]:
    return [n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_campaign_has_fewer_than_20_methods():
    methods = _methods(_class(CAMPAIGN / "engine.py", "Campaign"))
    assert len(methods) < 20, methods


def test_no_campaign_module_is_near_the_line_limit():
    big = {p.name: n for p in CAMPAIGN.glob("*.py") if (n := len(p.read_text().splitlines())) > 450}
    assert not big, big


@pytest.mark.parametrize("cls", [WorkerPool, ABPool, InProcess])
def test_every_executor_implements_the_interface(cls):
    assert issubclass(cls, ExecutorBase)
    for name in INTERFACE:  # InProcess's run_many is the callable it is given (the next test)
        assert (cls is InProcess and name == "run_many") or callable(getattr(cls, name)), name
    for name in FACTS:
        assert hasattr(cls, name), name


def test_a_plain_callable_is_run_in_process():
    ex = as_executor(lambda jobs: [len(jobs)] * len(jobs))
    assert isinstance(ex, InProcess) and isinstance(ex, Executor)
    ex.submit("a", [1, 2])
    ex.submit("b", [3])
    ex.cancel("b")
    assert ex.poll() == [("a", [2, 2])] and ex.poll() == []
    assert as_executor(ex) is ex and as_executor(None) is None


def test_the_campaign_loop_uses_only_the_interface():
    """engine, generating and shrinking read nothing off their executor but the interface and
    its facts: no "which kind of executor is this" branch (getattr/hasattr on it) either."""
    for name in ("engine.py", "generating.py", "shrinking.py"):
        tree = ast.parse((CAMPAIGN / name).read_text())
        used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Attribute) and n.value.attr == "pool"}
        assert used <= set(INTERFACE + FACTS), (name, used - set(INTERFACE + FACTS))
        probes = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
                  and getattr(n.func, "id", "") in ("getattr", "hasattr")
                  and any(getattr(a, "attr", "") == "pool" for a in n.args)]
        assert not probes, (name, probes)


def test_the_budget_phases():
    """Note [budget phases]: done() is asked exactly after START, GENERATE and SHRINK."""
    asked = []

    def done(value):
        return lambda: asked.append(value) or value

    P = BudgetPhase
    for now in (P.START, P.GENERATE, P.SHRINK):
        assert next_phase(now, True, done(False)) is P.SHRINK
        assert next_phase(now, True, done(True)) is P.SHRINK  # a pending finding is shrunk anyway
        assert next_phase(now, False, done(False)) is P.GENERATE
        assert next_phase(now, False, done(True)) is P.WAIT
    assert len(asked) == 12
    assert next_phase(P.WAIT, False, done(True), freed=True) is P.GENERATE
    assert next_phase(P.WAIT, False, done(True), freed=False) is P.DEFERRED
    assert next_phase(P.DEFERRED, False, done(True)) is P.DONE
    assert len(asked) == 12  # not asked after WAIT or DEFERRED
