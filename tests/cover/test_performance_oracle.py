"""Oracle 9, performance (shapefuzz/oracles/performance.py, Note [scaling family]): a program's
family of n independent copies must cost the shape system order n. It must fire under each of
the two slowdowns planted in ShapeEnv (tests/fixtures/slow_plants.py) and stay quiet on the same
programs on unmodified torch; the finding's repro.py, run in a fresh interpreter, exits 1 with
the plant loaded by a sitecustomize.py and 0 without."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

import pytest
import torch
from _helpers import I, R, both_ways, inp, prog

from shapefuzz.cases.corpus import Case
from shapefuzz.oracles.performance import families, scaling_findings
from shapefuzz.program import Program
from shapefuzz.repro import repro_source
from shapefuzz.systems import scaling
from shapefuzz.systems.evidence import record
from shapefuzz.systems.evidence.performance import ScalingEvidence
from shapefuzz.systems.make_fx import MakeFxSystem
from shapefuzz.systems.observation import ORDER_MARGIN, growth_order, superlinear, superlinear_kinds

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
sys.path.insert(0, str(FIXTURES))
import slow_plants  # noqa: E402


def _load(text: str) -> Program:
    return Program.from_json(json.loads(text))


# two programs of benchmarks/bench.py's set: sizes of a nonzero feeding full/index_select on
# dynamic dims (many questions, a few symbols a copy), and an unbacked view/item chain with a
# torch._check (deferred runtime asserts)
QUESTIONS = _load(
    '{"inputs":[{"data":[],"dims":["dynamic","dynamic"],"dtype":"bool","name":"x0","shape":[0,1]}],'
    '"instrs":[{"args":[{"v":0},1],"n_out":1,"op":"size"},{"args":[{"v":1}],"n_out":1,"op":"arange"},'
    '{"args":[{"v":2},"!=",1],"n_out":1,"op":"mask"},{"args":[{"v":3}],"n_out":1,"op":"nonzero"},'
    '{"args":[{"v":4},1,0],"n_out":1,"op":"select"},{"args":[{"v":0},1,{"v":5}],"n_out":1,"op":"index_select"},'
    '{"args":["+",{"v":1},{"v":1}],"n_out":1,"op":"binop"},{"args":["+",{"v":1},1],"n_out":1,"op":"binop"},'
    '{"args":["//",{"v":8},2],"n_out":1,"op":"binop"},{"args":[[{"v":7},{"v":9}],0.0],"n_out":1,"op":"full"},'
    '{"args":[{"v":4},{"v":4}],"n_out":1,"op":"mul"},{"args":[[4]],"n_out":1,"op":"zeros"},'
    '{"args":[{"v":10},{"v":2}],"n_out":1,"op":"add"},{"args":[{"v":13},1],"n_out":1,"op":"squeeze"},'
    '{"args":[{"v":6},0,null,1],"n_out":1,"op":"slice"}],"outputs":[11,12,14,15],"schema":1}')
ASSERTS = _load(
    '{"inputs":[{"data":[],"dims":["static","unbacked","dynamic"],"dtype":"bool","name":"x0","shape":[1,0,0]},'
    '{"data":[-3.0],"dims":[],"dtype":"float","name":"x1","shape":[]},'
    '{"data":[0.0],"dims":[],"dtype":"float","name":"x2","shape":[]}],'
    '"instrs":[{"args":[{"v":2},[1]],"n_out":1,"op":"view"},{"args":[{"v":0},[-1]],"n_out":1,"op":"view"},'
    '{"args":[{"v":4},"sum"],"n_out":1,"op":"item"},{"args":["-",{"v":5},1],"n_out":1,"op":"binop"},'
    '{"args":[[0,{"v":5},1]],"n_out":1,"op":"zeros"},'
    '{"args":["guard_size_oblivious","cat_empty",{"v":3},{"v":3},0],"n_out":1,"op":"branch"},'
    '{"args":["*",13,{"v":5}],"n_out":1,"op":"binop"},{"args":["%",{"v":9},5],"n_out":1,"op":"binop"},'
    '{"args":["<=",{"v":5},{"v":10}],"n_out":0,"op":"check"},{"args":[{"v":7},2,2],"n_out":1,"op":"transpose"}],'
    '"outputs":[6,8,11],"schema":1}')
CASES = [("quadratic", QUESTIONS, "superlinear-time"), ("assert-blowup", ASSERTS, "superlinear-size")]


def test_growth_order_and_the_rule():
    ns = (4, 8, 16)
    assert growth_order(ns, [1, 2, 4]) == pytest.approx(1.0)
    assert growth_order(ns, [16, 64, 256]) == pytest.approx(2.0)  # quadratic: y = n^2
    assert growth_order(ns, [5 + 1, 5 + 2, 5 + 4]) == pytest.approx(1.0)  # a fixed cost cancels
    assert growth_order(ns, [0.2, 0.1, 0.3]) == 0.0  # no growth to measure
    assert not superlinear(ns, [0.1, 0.2, 0.4], 1.0, 0.5, 0.25)  # linear
    assert superlinear(ns, [0.16, 0.64, 2.56], 1.0, 0.5, 0.25)  # quadratic, above the floor
    assert not superlinear(ns, [0.0016, 0.0064, 0.0256], 1.0, 0.5, 0.25)  # quadratic, below it
    # a large linear member with a small wobble: the order tilts, the excess is not a seventh
    assert not superlinear(ns, [1.0, 1.01, 1.05], 1.0, 0.5, 0.25)


def _family(program):
    s = scaling.measure(program)
    assert s is not None and s.ns == scaling.NS and len(s.cpu_s) == len(s.sizes) == len(scaling.NS)
    return s


def _observation(program, scaled):
    obs = MakeFxSystem().observe(program, "default", [])
    assert obs.outcome.status == "ok", obs.outcome
    return record(obs, ScalingEvidence((scaled,)))


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def planted(request):
    """(plant, program, kind, the oracle's findings on the program's family under the plant)"""
    plant, program, kind = request.param
    with slow_plants.planted(plant):
        scaled = _family(program)
    return plant, program, kind, scaling_findings(_observation(program, scaled)), scaled


def test_fires_under_each_planted_slowdown(planted):
    _, _, kind, found, scaled = planted
    assert kind in {f.symptom for f in found}, scaled
    f = next(f for f in found if f.symptom == kind)
    assert f.oracle == "performance" and "grows with order" in f.summary
    if kind == "superlinear-time":  # a cProfile table of torch's and sympy's functions
        profile = f.detail.split("hottest torch functions")[1]
        assert "ncalls" in profile and "tottime" in profile and "sympy" in profile, f.detail


@pytest.mark.parametrize("program", [QUESTIONS, ASSERTS], ids=["questions", "asserts"])
def test_quiet_on_unmodified_torch(program):
    scaled = _family(program)
    assert scaling_findings(_observation(program, scaled)) == [], scaled
    assert max(growth_order(scaled.ns, scaled.sizes), 0) < 1.2


def test_make_fx_measures_only_its_sample(monkeypatch):
    """By the program's content: measured at a rate of 1, not at a rate its hash misses; a
    program whose trace made no symbol never."""
    assert scaling.sampled(QUESTIONS, 7) == scaling.sampled(_load(QUESTIONS.dumps()), 7)
    static = prog([inp([1.0, 2.0], dims=("static",))], [I("add", R(0), R(0))])  # no symbol at all

    def measured(program, every):
        monkeypatch.setattr(scaling, "SAMPLE", every)
        monkeypatch.setattr(scaling, "SAMPLE_FACTS", every)
        obs = MakeFxSystem().observe(program, "default", [])
        assert obs.outcome.status == "ok", obs.outcome
        return families(obs)

    assert measured(QUESTIONS, 1) and measured(ASSERTS, 1)
    missed = next(k for k in range(2, 100) if not scaling.sampled(QUESTIONS, k))
    assert measured(QUESTIONS, missed) == ()
    assert measured(static, 1) == ()


def test_repro_exits_1_with_the_plant_and_0_without(planted, tmp_path):
    plant, program, kind, found, _ = planted
    f = next(f for f in found if f.symptom == kind)
    script = tmp_path / "repro.py"
    script.write_text(repro_source(Case(f, program, None, torch_version="2.13.0")))
    text = script.read_text()  # Note [sympy cache]: set before torch imports sympy
    assert text.index('os.environ.setdefault("SYMPY_CACHE_SIZE"') < text.index("import torch")
    # the script's own setting, not the one this process exports (shapefuzz sets it on import)
    planted, clean = both_ways(script, slow_plants.sitecustomize_source(plant), path=(FIXTURES,),
                               drop=("SYMPY_CACHE_SIZE",), timeout=600)
    assert planted.returncode == 1 and "Traceback" not in planted.stderr, planted.stdout + planted.stderr
    assert "growth order" in planted.stdout and "BUG" in planted.stdout
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "growth order" in clean.stdout and "BUG" not in clean.stdout


def _scripted(monkeypatch, times):
    """trace_copies replaced by CPU times per member, call by call (the last one repeats); returns
    the members in the order they were traced."""
    traced = []

    def trace_copies(fn, inputs, dims, n, env_kwargs=None):
        k = sum(m == n for m in traced)
        traced.append(n)
        return times[n][min(k, len(times[n]) - 1)], 100 * n  # a linear size

    monkeypatch.setattr(scaling, "trace_copies", trace_copies)
    return traced


def test_a_slow_moment_in_a_middle_member_is_measured_again(monkeypatch):
    """Note [slow moments]: the CI round that hid the quadratic plant (0.22 / 1.01 / 2.35 s, order
    0.77) gets a round of its smaller members, and the rule then sees the growth."""
    traced = _scripted(monkeypatch, {2: [0.22], 4: [1.01, 0.55], 8: [2.35]})
    s = scaling.measure(QUESTIONS)
    assert s.cpu_s == (0.22, 0.55, 2.35) and traced[:5] == [2, 4, 8, 2, 4], (s, traced)
    assert "superlinear-time" in superlinear_kinds(s.ns, s.cpu_s, s.sizes, 1.0, ORDER_MARGIN)


def test_a_linear_family_takes_one_round(monkeypatch):
    traced = _scripted(monkeypatch, {2: [0.2], 4: [0.4], 8: [0.85]})  # order 1.17
    assert scaling.measure(QUESTIONS).rounds == 1 and traced == [2, 4, 8]


def test_a_member_is_timed_with_the_collector_off():
    """Note [slow moments]: a full collection of the heap lands in whichever member allocates past
    the threshold; the trace runs with the collector off and leaves it as it was."""
    seen = []

    def fn(x):
        seen.append(gc.isenabled())
        return (x + 1,)

    inputs = (torch.ones(3),)
    assert gc.isenabled()
    scaling.trace_copies(fn, inputs, [("dynamic",)], 2)
    assert seen == [False, False] and gc.isenabled()
    gc.disable()
    try:
        scaling.trace_copies(fn, inputs, [("dynamic",)], 2)
        assert not gc.isenabled()
    finally:
        gc.enable()
