"""The compile system over call sequences, its recompile oracle, and its repro.py: each check
fires on a bug planted in torch inside the test and stays quiet on unmodified torch."""

from __future__ import annotations

import contextlib
import functools
import subprocess
import sys
import textwrap

import pytest
import sympy
import torch
import torch._dynamo
from torch.fx.experimental import symbolic_shapes as ss

from shapefuzz.cases.corpus import Case
from shapefuzz.oracles import check_all
from shapefuzz.oracles.recompile import calls_of
from shapefuzz.repro import repro_source
from shapefuzz.systems.compile import CompileSystem, call_sequence
from shapefuzz.systems.eager import EagerSystem

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent / "cover"))
from _helpers import I, R, inp, prog

INEQUALITIES = (sympy.Gt, sympy.Ge, sympy.Lt, sympy.Le)

#: the same plant as a start-up hook, for repro.py run as a script
PLANT_SITECUSTOMIZE = '''
import functools, sys

def _plant():
    import sympy
    from torch.fx.experimental import symbolic_shapes as ss
    orig = ss.ShapeEnv.produce_guards_verbose

    from torch.utils._sympy.numbers import int_oo
    from torch.utils._sympy.value_ranges import ValueRanges

    @functools.wraps(orig)
    def produce_guards_verbose(self, *args, **kwargs):
        saved, ranges = self.guards, dict(self.var_to_range)
        self.guards = [g for g in saved if not isinstance(g.expr, (sympy.Gt, sympy.Ge, sympy.Lt, sympy.Le))]
        for sym, vr in ranges.items():
            if str(sym).startswith("s"):
                self.var_to_range[sym] = ValueRanges(min(vr.lower, 2), int_oo)
        try:
            return orig(self, *args, **kwargs)
        finally:
            self.guards = saved
            self.var_to_range.update(ranges)
    ss.ShapeEnv.produce_guards_verbose = produce_guards_verbose

class _Finder:
    def find_spec(self, name, path, target=None):
        if name != "torch.fx.experimental.symbolic_shapes":
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(name)
        orig_exec = spec.loader.exec_module

        def exec_module(module):
            orig_exec(module)
            _plant()
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _Finder())
'''


@contextlib.contextmanager
def dropped_inequality_guards():
    """Planted bug: produce_guards forgets every inequality guard and the bounds they put on
    symbol ranges (the guards Dynamo installs come from it; the ShapeEnv still records them, so
    the oracle can see what was assumed)."""
    orig = ss.ShapeEnv.produce_guards_verbose

    from torch.utils._sympy.numbers import int_oo
    from torch.utils._sympy.value_ranges import ValueRanges

    @functools.wraps(orig)
    def produce_guards_verbose(self, *args, **kwargs):
        saved, ranges = self.guards, dict(self.var_to_range)
        self.guards = [g for g in saved if not isinstance(g.expr, INEQUALITIES)]
        for sym, vr in ranges.items():  # and the bounds those guards put on backed symbols
            if str(sym).startswith("s"):
                self.var_to_range[sym] = ValueRanges(min(vr.lower, 2), int_oo)
        try:
            return orig(self, *args, **kwargs)
        finally:
            self.guards = saved
            self.var_to_range.update(ranges)

    ss.ShapeEnv.produce_guards_verbose = produce_guards_verbose
    try:
        yield
    finally:
        ss.ShapeEnv.produce_guards_verbose = orig


def branchy():
    """`if n >= 5` on a dynamic size (the call sequence has sizes on both sides)."""
    return prog([inp(range(8), shape=(4, 2), dims=("dynamic", "static"))],
                [I("size", R(0), 0), I("branch", "if", "max", R(1), 5), I("cat", (R(0), R(0)), 0)],
                outputs=(2, 3))


def plain():
    """A dim that varies and that no branch depends on."""
    return prog([inp(range(8), shape=(4, 2), dims=("dynamic", "static"))],
                [I("cat", (R(0), R(0)), 0), I("size", R(1), 0)], outputs=(1, 2))


def findings(p, config="default"):
    eager = EagerSystem().observe(p, "default", [])
    obs = CompileSystem().observe(p, config, [])
    return obs, check_all(p, eager, [obs])


def test_automatic_dynamic_one_graph_after_two_compiles_and_quiet():
    obs, fs = findings(plain())
    assert fs == []
    assert obs.outcome.status == "ok" and len(calls_of(obs)) == len(call_sequence(plain()))
    big = [r for r in calls_of(obs) if min(min(s) for s in r.shapes) >= 2]
    assert sum(r.new_graphs for r in big) <= 2, [(r.shapes, r.new_graphs) for r in calls_of(obs)]


@pytest.mark.parametrize("config", ["default", "dynamic=True", "dynamic=False", "mark-dynamic",
                                    "aot_eager", "recompile-limit=2", "graph-breaks"])
def test_quiet_on_unmodified_torch(config):
    for p in (plain(), branchy()):
        _obs, fs = findings(p, config)
        assert fs == [], (config, [f.detail for f in fs])


def test_dropped_guard_is_an_unsound_reuse():
    with dropped_inequality_guards():
        _obs, fs = findings(branchy())
    kinds = {f.symptom for f in fs if f.oracle == "recompile"}
    assert "unsound-reuse" in kinds, [f.detail for f in fs]
    f = next(f for f in fs if f.symptom == "unsound-reuse")
    assert f.severity == "critical"


def test_repro_confirms_the_planted_guard_bug(tmp_path):
    with dropped_inequality_guards():
        _, fs = findings(branchy())
    f = next(f for f in fs if f.symptom == "unsound-reuse")
    script = tmp_path / "repro.py"
    script.write_text(repro_source(Case(f, branchy(), None, torch_version=torch.__version__)))
    plant = tmp_path / "plant"
    plant.mkdir()
    (plant / "sitecustomize.py").write_text(textwrap.dedent(PLANT_SITECUSTOMIZE))
    import os

    env = dict(os.environ)
    clean = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True, env=env, timeout=300)
    env["PYTHONPATH"] = str(plant) + os.pathsep + env.get("PYTHONPATH", "")
    bug = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True, env=env, timeout=300)
    assert bug.returncode == 1, bug.stdout + bug.stderr
    assert clean.returncode == 0, clean.stdout + clean.stderr


def test_ignored_mark_dynamic_is_a_silent_specialization(monkeypatch):
    monkeypatch.setattr(torch._dynamo, "mark_dynamic", lambda t, d, **kw: None)
    _obs, fs = findings(plain(), "mark-dynamic")
    assert any(f.symptom == "silent-specialization" for f in fs), [f.detail for f in fs]


def test_mark_dynamic_on_a_specialized_dim_raises():
    # `if n == 4` pins the dim: mark_dynamic must turn that into a constraint violation
    p = prog([inp(range(8), shape=(4, 2), dims=("dynamic", "static"))],
             [I("size", R(0), 0), I("branch", "if", "eq", R(1), 4)], outputs=(2,))
    obs, fs = findings(p, "mark-dynamic")
    assert obs.outcome.status == "constraint", obs.outcome
    assert not [f for f in fs if f.symptom == "silent-specialization"]


def test_broken_automatic_dynamic_is_found():
    # torch's own patch(): monkeypatch would hide the entry for the rest of the process
    with torch._dynamo.config.patch(automatic_dynamic_shapes=False):
        _obs, fs = findings(plain())
    assert any(f.symptom == "stayed-static" for f in fs), [f.detail for f in fs]


def test_a_lost_cache_is_an_extra_recompile(monkeypatch):
    run = CompileSystem._run

    def forgetful(cf, real, rec, program):  # planted: every call starts from an empty cache
        torch._dynamo.eval_frame._reset_guarded_backend_cache()
        torch._dynamo.reset_code_caches()
        return run(cf, real, rec, program)

    monkeypatch.setattr(CompileSystem, "_run", staticmethod(forgetful))
    obs, fs = findings(plain())
    assert any(f.symptom == "extra-recompile" and f.severity == "low" for f in fs), [r for r in calls_of(obs)]


def test_toggles_are_applied_and_restored_on_error():
    from shapefuzz.systems.torch_toggles import applied

    orig_init = ss.ShapeEnv.__init__
    with pytest.raises(RuntimeError), applied("no-specialize-zero-one", frontend="compile") as cfg:
        se = ss.ShapeEnv()
        assert se.specialize_zero_one is False and cfg.counts["env-kwargs"] == 1
        raise RuntimeError("boom")
    assert ss.ShapeEnv.__init__ is orig_init
    assert ss.ShapeEnv().specialize_zero_one is True


def test_frontend_repro_shows_an_outcome_difference(tmp_path):
    """make_fx guards `if n == 4`; export's Dim.DYNAMIC turns it into a constraint violation
    (an explained difference, so no finding): the repro of that pair must see it and exit 1,
    and the repro of a pair that agrees must exit 0."""
    from shapefuzz.oracles.findings import Finding

    p = prog([inp(range(8), shape=(4, 2), dims=("dynamic", "static"))],
             [I("size", R(0), 0), I("branch", "if", "eq", R(1), 4)], outputs=(2,))
    codes = []
    for pair in ("make_fx:no-duck-shape-vs-export:default", "export:default-vs-export:strict"):
        sys_, cfg = pair.split("-vs-")[1].split(":", 1)
        f = Finding("frontend-differential", "high", sys_, cfg, "outcome", "s", "d",
                    f"frontend-differential:outcome:{pair}:x-vs-y")
        script = tmp_path / f"{len(codes)}.py"
        script.write_text(repro_source(Case(f, p, None, torch_version=torch.__version__)))
        r = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True, timeout=300)
        codes.append((r.returncode, r.stdout[-500:]))
    assert codes[0][0] == 1 and "make_fx:no-duck-shape: ok" in codes[0][1], codes
    assert codes[1][0] == 0, codes


@pytest.mark.parametrize("system", ["make_fx", "export", "compile"])
def test_toggles_take_effect_in_every_traced_system(system):
    """Each observation logs how often each slow path ran: a toggle that never ran proves nothing."""
    import ast

    from shapefuzz.systems import get_system

    p = branchy()
    # make_fx passes the setting to the ShapeEnv it builds itself: nothing forced (Note [user settings])
    forced = None if system == "make_fx" else "env-kwargs"
    for config, key in (("slow:expr-cache", "expr-cache"), ("no-specialize-zero-one", forced),
                        ("slow:skip-static", None)):
        obs = get_system(system).observe(p, config, [])
        line = next(x for x in obs.log if x.startswith("toggle counts: "))
        counts = ast.literal_eval(line.split(": ", 1)[1])
        if key is not None:
            assert counts.get(key, 0) > 0, (system, config, counts)
        assert obs.outcome.status == "ok", (system, config, obs.outcome)
    assert ss.ShapeEnv.__init__.__qualname__ == "ShapeEnv.__init__"  # restored


def test_the_guard_latency_profile_is_skipped_and_changes_nothing(monkeypatch):
    """Note [no guard latency profile]: Dynamo's guard timing (a CPU cache flush a graph) does not
    run while the system observes, the observation is the one it makes with the timing, and
    torch's own function is back afterwards."""
    import torch._dynamo.guards as guards

    import shapefuzz.systems.compile as compile_system

    timed = []
    real = guards.profile_guard_manager

    def counting(*args):
        timed.append(args)
        return real(*args)

    monkeypatch.setattr(guards, "profile_guard_manager", counting)

    def seen(obs):
        return (obs.outcome, obs.guards, obs.asserts, obs.replacements, obs.ranges,
                [(r.accepted, r.artifact) for r in obs.replays], [r.new_graphs for r in calls_of(obs)])

    fast = [seen(CompileSystem().observe(p, "default", [])) for p in (plain(), branchy())]
    assert timed == [] and guards.profile_guard_manager is counting
    monkeypatch.setattr(compile_system, "_no_guard_latency_profile", contextlib.nullcontext)
    slow = [seen(CompileSystem().observe(p, "default", [])) for p in (plain(), branchy())]
    assert timed, "with the timing left in, Dynamo calls it once a graph: the check above can fail"
    assert fast == slow
