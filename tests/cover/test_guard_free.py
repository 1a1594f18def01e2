"""Note [guard-free questions]: a question whose mode falls back (guard_or_false, guard_or_true,
statically_known_true, statically_known_false) never raises a data-dependent error. The truth
oracle stays quiet on unmodified torch under every torch-env config, fires under a planted
_guard_or that guards (as mutant d5c320962d5d does under backed_size_oblivious), and the
finding's repro.py exits 1 under the plant and 0 without."""

from __future__ import annotations

import inspect

import pytest
import torch
from _helpers import both_ways
from hypothesis import HealthCheck, given, settings
from torch.fx.experimental import symbolic_shapes as ss

from shapefuzz.cases.corpus import Case
from shapefuzz.oracles import check_all
from shapefuzz.oracles.truth import truth_agreement
from shapefuzz.program import Ref
from shapefuzz.program.questions import QInstr, QProgram
from shapefuzz.repro import repro_source
from shapefuzz.strategies import qprograms
from shapefuzz.systems import targets_for
from shapefuzz.systems.torch_env import TorchEnvSystem

R = Ref
ENV = TorchEnvSystem()


def P(*instrs) -> QProgram:
    p = QProgram(tuple(QInstr(op, tuple(args)) for op, *args in instrs))
    p.validate()
    return p


#: u0 = 5 is not known to be > 2: every guard-free mode falls back on it
PROGRAMS = {mode: P(("unbacked", 5), ("ask", mode, ">", R(0), 2))
            for mode in ("guard_or_false", "guard_or_true", "statically_known_true", "statically_known_false")}


def _guarding_guard_or(a, default):
    """A planted regression: _guard_or guards (guard_bool) instead of falling back."""
    if not isinstance(a, torch.SymBool):
        return a
    return ss.guard_bool(a)


def _kinds(p, config="default"):
    o = ENV.observe(p, config, ())
    return o, {(f.oracle, f.symptom) for f in check_all(p, None, (o,))}


@pytest.mark.parametrize("mode", sorted(PROGRAMS))
def test_quiet_on_unmodified_torch(mode):
    o, kinds = _kinds(PROGRAMS[mode])
    assert o.outcome.status == "ok" and [d.how for d in o.decisions] == ["fallback"], o.outcome.short()
    assert kinds == set()


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(qprograms())
def test_no_guard_free_finding_on_unmodified_torch_under_any_config(p):
    for _, config in targets_for(("torch-env",)):
        o = ENV.observe(p, config, ())
        assert not [f for f in truth_agreement(p, o) if f.symptom in ("dde-in-guard-free", "guard-in-static")], (
            config, p.dumps())


@pytest.mark.parametrize("mode", ["guard_or_false", "guard_or_true"])
def test_fires_when_guard_or_raises(monkeypatch, mode):
    monkeypatch.setattr(ss, "_guard_or", _guarding_guard_or)
    o, kinds = _kinds(PROGRAMS[mode])
    assert o.outcome.status == "dde" and o.outcome.op == f"ask:{mode}"
    assert ("truth", "dde-in-guard-free") in kinds, kinds


def test_a_dde_of_bool_is_not_this_oracles(monkeypatch):
    """bool() may raise a DDE: whether it was deserved is the spurious-dde oracle's question."""
    p = P(("unbacked", 5), ("ask", "bool", ">", R(0), 2))
    o, kinds = _kinds(p)
    assert o.outcome.status == "dde" and o.outcome.op == "ask:bool"
    assert ("truth", "dde-in-guard-free") not in kinds


def _plant_source() -> str:
    """The plant as a sitecustomize.py, so that repro.py's interpreter runs it."""
    return ("import torch\nimport torch.fx.experimental.symbolic_shapes as ss\n"
            + inspect.getsource(_guarding_guard_or) + "ss._guard_or = _guarding_guard_or\n")


def test_the_repro_exits_1_under_the_plant_and_0_without(monkeypatch, tmp_path):
    monkeypatch.setattr(ss, "_guard_or", _guarding_guard_or)
    p = PROGRAMS["guard_or_false"]
    (f,) = [f for f in check_all(p, None, (ENV.observe(p, "default", ()),)) if f.symptom == "dde-in-guard-free"]
    monkeypatch.undo()
    script = tmp_path / "repro.py"
    script.write_text(repro_source(Case(f, p, None, torch_version=torch.__version__)))
    planted, clean = both_ways(script, _plant_source())
    assert planted.returncode == 1 and "BUG" in planted.stdout, (
        planted.stdout + planted.stderr)
    assert clean.returncode == 0, clean.stdout + clean.stderr


#: s0 (hint 6) == 3 is undecided and its hint says False: statically_known_true falls back
STATIC = P(("backed", 6), ("ask", "statically_known_true", "==", R(0), 3))

#: a planted regression (as mutant 0a4a97871c90): statically_known_true hands back its SymBool
#: where the hint disproves it, so the caller's `if` guards
PLANT_STATIC = '''
import torch
import torch.fx.experimental.symbolic_shapes as ss
_orig = ss.statically_known_true
def _symbool_when_disproved(x):
    if isinstance(x, torch.SymBool) and getattr(x.node, "hint", None) is False:
        return x
    return _orig(x)
ss.statically_known_true = _symbool_when_disproved
'''


def _plant_static(monkeypatch):
    from shapefuzz.systems import torch_env

    scope: dict = {}
    exec(PLANT_STATIC, scope)  # the repro's sitecustomize.py, run here too
    monkeypatch.setattr(ss, "statically_known_true", scope["_orig"])  # undone with the test
    monkeypatch.setitem(torch_env.ASKERS, "statically_known_true", scope["_symbool_when_disproved"])
    return scope


def test_a_statically_known_question_that_guards_is_a_finding_and_its_repro_shows_it(monkeypatch, tmp_path):
    o, kinds = _kinds(STATIC)
    assert [(d.answer, d.how) for d in o.decisions] == [("False", "fallback")] and kinds == set()
    _plant_static(monkeypatch)
    o = ENV.observe(STATIC, "default", ())
    assert [(d.answer, d.how) for d in o.decisions] == [("False", "guard")]
    (f,) = [f for f in check_all(STATIC, None, (o,)) if f.symptom == "guard-in-static"]
    monkeypatch.undo()
    script = tmp_path / "repro.py"
    script.write_text(repro_source(Case(f, STATIC, None, torch_version=torch.__version__)))
    planted, clean = both_ways(script, PLANT_STATIC)
    assert planted.returncode == 1 and "BUG" in planted.stdout, planted.stdout + planted.stderr
    assert clean.returncode == 0, clean.stdout + clean.stderr


def test_the_generator_asks_undecided_questions_over_backed_symbols():
    """Note [near the hint] (strategies/questions.py): a backed size against a literal near its
    hint, so statically_known_* fall back on backed symbols (the guard-in-static class needs it)."""
    import re

    hows = []

    @settings(max_examples=200, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(qprograms())
    def gen(p):
        o = ENV.observe(p, "default", ())
        asks = p.asks()
        hows.extend((p.instrs[asks[k]].args[0], d.how) for k, d in enumerate(o.decisions)
                    if re.search(r"\bs\d+", d.expr) and not re.search(r"\bu\d+", d.expr))

    gen()
    assert ("statically_known_true", "fallback") in hows or ("statically_known_false", "fallback") in hows, hows
    assert ("bool", "guard") in hows, hows
