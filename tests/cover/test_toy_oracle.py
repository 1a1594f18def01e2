"""Issue 32's done-when for typed evidence and repro forms: an oracle with evidence of its own and
a repro form of its own is a module and its template, outside the package
(tests/reliability/toy_oracle.py, toy_repro.py): its evidence is recorded on make_fx
observations through the evidence interface, its finding carries it into the case file and back
typed, and its form's repro.py exits 1 on a program that shows the rule broken and 0 on one that
does not (Note [typed evidence], Note [repro forms]). tests/reliability/test_campaigns.py runs
it through a whole campaign (`--plugin toy_oracle`)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from _helpers import I, R, inp, prog

from shapefuzz.cases.corpus import Case, load_case, save_case
from shapefuzz.oracles import base, check_all
from shapefuzz.repro import check_source, line_limit, repro_source, trial
from shapefuzz.repro.forms import choose
from shapefuzz.systems.evidence import base as evidence_base
from shapefuzz.systems.jobs import Job, run_job

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "tests" / "reliability"
NAMES = ("toy_oracle", "toy-rank", "toy_repro", "ToyRanks")


@pytest.fixture
def toy(monkeypatch):
    """toy_oracle imported as `--plugin toy_oracle` does, its registrations undone afterwards
    (no other test sees its oracle, its evidence type or its recorder)."""
    monkeypatch.syspath_prepend(str(PLUGIN))
    saved = [dict(base._REGISTRY), dict(base._BY_FINDING), dict(evidence_base._TYPES),
             dict(evidence_base._NAMES), list(evidence_base._RECORDERS)]
    for name in ("toy_oracle", "toy_repro"):
        sys.modules.pop(name, None)
    try:
        yield importlib.import_module("toy_oracle")
    finally:
        for live, old in zip((base._REGISTRY, base._BY_FINDING, evidence_base._TYPES, evidence_base._NAMES), saved):
            live.clear()
            live.update(old)
        evidence_base._RECORDERS[:] = saved[4]
        for name in ("toy_oracle", "toy_repro"):
            sys.modules.pop(name, None)


def _program(shape):
    x = inp(list(range(1, 5)), shape=shape, dims=("static",) * len(shape))
    return prog([x], [I("add", R(0), R(0))])


def _observe(p, system):
    return run_job(Job(json.dumps(p.to_json()), system, "default", "[]"))


def _repro_exit(case, folder: Path) -> tuple[int, str]:
    d = save_case(folder, case, repro_source(case), "log", check=check_source(case))
    r = subprocess.run([sys.executable, str(d / "repro.py")], cwd=folder, capture_output=True, text=True,
                       timeout=300, check=False)
    return r.returncode, r.stdout + r.stderr


def test_the_toy_oracles_evidence_and_form_end_to_end(toy, tmp_path):
    p = _program((2, 2))
    obs = _observe(p, "make_fx")
    assert obs.evidence["toy-rank"] == toy.ToyRanks((2,), ("[2, 2]",))  # recorded where the job ended
    assert "toy-rank" not in _observe(p, "eager").evidence  # its recorder's rule: make_fx only
    (f,) = [f for f in check_all(p, _observe(p, "eager"), [obs]) if f.oracle == "toy-rank"]
    assert f.evidence == obs.evidence["toy-rank"]  # the finding carries it, typed
    case = Case(f, p, None, torch_version="2.13")
    assert choose(case).form.name == "toy-rank" and check_source(case) is None  # its form is its harness
    assert trial.strategy(case) == "" and len(repro_source(case).splitlines()) <= line_limit(case) == 60
    src = repro_source(case)
    assert "MIN_RANK = 2\nTRACED_RANKS = [2]\n" in src and "shapefuzz" not in src.split('"""', 2)[2]
    code, out = _repro_exit(case, tmp_path / "bug")
    assert code == 1 and "BUG: expected every output of rank < 2, got ranks [2]" in out, out
    folder = next((tmp_path / "bug").iterdir())
    on_disk = json.loads((folder / "case.json").read_text())["finding"]["evidence"]
    assert on_disk == {"oracle": "toy-rank", "data": {"ranks": [2], "exprs": ["[2, 2]"]}}
    back = load_case(folder)
    assert back.finding == f and type(back.finding.evidence) is toy.ToyRanks  # read back typed
    assert not (folder / "check.py").exists()
    # the same form on a program whose outputs have rank 1: the repro passes
    code, out = _repro_exit(replace(case, program=_program((4,))), tmp_path / "fixed")
    assert code == 0 and "OK: every output has rank < 2" in out, out


def test_without_its_plugin_the_case_still_loads_and_keeps_its_evidence(toy, tmp_path):
    p = _program((2, 2))
    (f,) = [f for f in check_all(p, _observe(p, "eager"), [_observe(p, "make_fx")]) if f.oracle == "toy-rank"]
    folder = save_case(tmp_path, Case(f, p, None), "print(1)\n", "log")
    r = subprocess.run([sys.executable, "-c", "import json, sys; from shapefuzz.cases.corpus import load_case; "
                        "e = load_case(sys.argv[1]).finding.evidence; print(type(e).__name__, json.dumps(e.data))",
                        str(folder)], capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0 and r.stdout.strip() == 'Unknown {"exprs": ["[2, 2]"], "ranks": [2]}', r


def test_adding_the_toy_oracle_touched_four_files_none_of_the_package():
    """Its module, its template, and the two tests that run it: nothing under shapefuzz/ or
    strategies/ names it (docs/ may describe it as the example it is)."""
    mentions = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()
                      and ".git" not in p.parts and "docs" not in p.parts and p.suffix in (".py", ".md", ".toml", ".json", ".txt", ".cfg")
                      and any(n in p.read_text(errors="ignore") for n in NAMES))
    assert mentions == ["tests/cover/test_toy_oracle.py", "tests/reliability/test_campaigns.py",
                        "tests/reliability/toy_oracle.py", "tests/reliability/toy_repro.py"], mentions
