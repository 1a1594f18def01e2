"""A z3 finding is confirmed by its own standalone repro.py: torch's planted bug
(inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY) is found by the guard-soundness oracle on
torch-env and make_fx, the case built from the counter-model (its values / its replay input)
makes repro.py exit 1 with the plant and 0 on unmodified torch."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch.fx.experimental._config as fxx

from shapefuzz.cases.corpus import Case
from shapefuzz.oracles import check_all
from shapefuzz.program import Ref
from shapefuzz.program.questions import QInstr, QProgram
from shapefuzz.repro import repro_source
from shapefuzz.systems.eager import EagerSystem
from shapefuzz.systems.make_fx import MakeFxSystem
from shapefuzz.systems.torch_env import TorchEnvSystem

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/cover")
from _helpers import I, inp, prog

PLANT = (("inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY", True),)


def _run(tmp_path, case: Case, name: str) -> int:
    path = tmp_path / name
    path.write_text(repro_source(case))
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=300).returncode


def _finding(program, eager, obs):
    fs = [f for f in check_all(program, eager, [obs]) if f.oracle == "guard-soundness"]
    assert fs, obs.smt
    return fs[0], obs.smt[fs[0].replay_index]


@pytest.fixture
def planted():
    # torch's own patch(): monkeypatch would hide the entry for the rest of the process
    with fxx.patch(inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY=True):
        yield


def test_question_finding_repro(tmp_path, planted):
    p = QProgram((QInstr("backed", (2,)), QInstr("backed", (8,)), QInstr("ask", ("bool", "!=", Ref(0), 2))))
    f, c = _finding(p, None, TorchEnvSystem().observe(p, "default"))
    assert c.confirmed and c.alt_values
    case = Case(f, p, None, "bug", PLANT, alt_values=c.alt_values)
    assert _run(tmp_path, case, "planted.py") == 1
    assert _run(tmp_path, Case(f, p, None, "bug", (), alt_values=c.alt_values), "clean.py") == 0


def test_tensor_finding_repro(tmp_path, planted):
    p = prog([inp([1.0, 2.0, 3.0, 4.0, 5.0])], [I("size", Ref(0), 0), I("branch", "if", "eq", Ref(1), 5)])
    obs = MakeFxSystem().observe(p, "default", [])
    f, c = _finding(p, EagerSystem().observe(p, "default", []), obs)
    assert c.confirmed and c.replay.accepted
    case = Case(f, p, c.replay.inputs, "bug", PLANT, fallback_branches=obs.fallback_branches)
    assert _run(tmp_path, case, "planted.py") == 1
    clean = Case(f, p, c.replay.inputs, "bug", (), fallback_branches=obs.fallback_branches)
    assert _run(tmp_path, clean, "clean.py") == 0
