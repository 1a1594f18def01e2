"""The recompile and front-end oracles as pure functions over observations, and the config
tables the campaign process reads without torch."""

from __future__ import annotations

import dataclasses

import pytest

from shapefuzz.oracles.frontends import frontend_differential
from shapefuzz.oracles.recompile import recompile_behaviour
from shapefuzz.program import InputSpec, Program
from shapefuzz.systems import CONFIGS, OPT_IN
from shapefuzz.systems.compile_settings import TOGGLE_CONFIGS, CallRecord, settings_of
from shapefuzz.systems.evidence import record
from shapefuzz.systems.evidence.recompile import CallSequence
from shapefuzz.systems.observation import Observation, Outcome

CLEAN = (CallRecord(0, ((4, 2),), "ok", new_graphs=1, graphs_run=(0,)),
         CallRecord(1, ((5, 2),), "ok", new_graphs=1, graphs_run=(1,)),
         CallRecord(2, ((6, 2),), "ok", new_graphs=0, graphs_run=(1,)))


def compile_obs(calls, config="default"):
    return record(Observation("compile", config, Outcome("ok")), CallSequence(tuple(calls)))


def test_quiet_on_a_clean_call_sequence():
    assert recompile_behaviour(compile_obs(CLEAN)) == []


@pytest.mark.parametrize(("field", "kind", "severity"), [
    ("reuse_violation", "unsound-reuse", "critical"),
    ("silent_specialization", "silent-specialization", "medium"),
    ("stayed_static", "stayed-static", "medium"),
    ("reusable_why", "extra-recompile", "low"),
])
def test_each_check_fires(field, kind, severity):
    calls = list(CLEAN)
    calls[2] = dataclasses.replace(calls[2], **{field: "planted"})
    fs = recompile_behaviour(compile_obs(calls))
    assert [(f.symptom, f.severity, f.replay_index) for f in fs] == [(kind, severity, 1)]
    assert "planted" in fs[0].detail and fs[0].key == f"recompile:{kind}:compile:default"


def test_only_compile_observations():
    obs = dataclasses.replace(compile_obs((dataclasses.replace(CLEAN[0], reuse_violation="x"),)),
                              system="make_fx")
    assert recompile_behaviour(obs) == []


PROGRAM = Program((InputSpec("x0", "float", (4,), ("dynamic",), (1.0,) * 4),), (), (0,))
UNBACKED = Program((InputSpec("x0", "float", (4,), ("unbacked",), (1.0,) * 4),), (), (0,))


def obs_of(system, config, status):
    return Observation(system, config, Outcome(status))


def test_frontends_fire_on_a_dde_only_one_front_end_raises():
    fs = frontend_differential(PROGRAM, [obs_of("export", "default", "ok"), obs_of("export", "strict", "dde")])
    assert [f.symptom for f in fs] == ["outcome"] and fs[0].severity == "high"
    assert fs[0].key == "frontend-differential:outcome:export:default-vs-export:strict:ok-vs-dde"


def test_frontends_quiet_when_agreeing_explained_or_not_comparable():
    same = [obs_of("export", "default", "dde"), obs_of("export", "strict", "dde")]
    explained = [obs_of("make_fx", "no-duck-shape", "ok"), obs_of("export", "default", "constraint")]
    errors = [obs_of("export", "default", "ok"), obs_of("compile", "mark-dynamic", "error")]
    unbacked = [obs_of("make_fx", "no-duck-shape", "dde"), obs_of("export", "default", "ok")]
    for obs in (same, explained, errors):
        assert frontend_differential(PROGRAM, obs) == []
    assert frontend_differential(UNBACKED, unbacked) == []


def test_config_tables_match_torch_toggles():
    pytest.importorskip("torch")
    from shapefuzz.systems.export import export_config_names
    from shapefuzz.systems.torch_toggles import config_names

    assert set(TOGGLE_CONFIGS) == set(config_names()) - {"default"}
    assert CONFIGS["make_fx"] == ("default",) + tuple(c for c in config_names() if c != "default")
    assert CONFIGS["export"] == export_config_names()
    for name in CONFIGS["compile"] + OPT_IN["compile"]:
        settings_of(name)
    with pytest.raises(ValueError, match="unknown compile config"):
        settings_of("nope")


def test_a_frontend_finding_names_its_pair():
    from shapefuzz.oracles.frontends import pair_of

    fs = frontend_differential(PROGRAM, [obs_of("export", "default", "ok"), obs_of("compile", "mark-dynamic", "dde")])
    assert pair_of(fs[0]) == (("export", "default"), ("compile", "mark-dynamic"))
