"""Note [typed evidence] (shapefuzz/systems/evidence): an oracle's evidence is a declared frozen
dataclass, recorded on observations through one function, carried by its finding, written to
case files as data and read back typed, without running anything a file names; a case file
written before findings carried evidence still loads, with the evidence its oracle reads off it
(Note [evidence of older case files])."""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from _helpers import I, R, inp, prog

from shapefuzz.cases.corpus import Case, CaseError, load_case, save_case
from shapefuzz.oracles.findings import Finding
from shapefuzz.oracles.history import records
from shapefuzz.program.questions import QInstr, QProgram
from shapefuzz.systems import evidence
from shapefuzz.systems.evidence.history import HistoryEvidence, HistoryRecord
from shapefuzz.systems.observation import Observation, Outcome

REC = HistoryRecord(1, "u0 >= 3", ("False", "fallback"), ("True", "static"), "", "True", "statically_known_true")


def _program():
    x = inp([2, 2, 1], dims=("static",))
    return prog([x], [I("item", R(0), "sum"), I("branch", "statically_known_true", "max", R(1), 3)])


def _finding(ev) -> Finding:
    return Finding("history", "medium", "make_fx", "default", "stale-fallback", "make_fx (default): stale",
                   "a sentence for people", "history:stale-fallback:make_fx:default:Cmp[]:statically_known_true",
                   1, evidence=ev)


def test_only_frozen_dataclasses_are_evidence_and_one_type_per_oracle():
    with pytest.raises(TypeError, match="frozen dataclass"):
        @evidence.declare("test-unfrozen")
        @dataclass
        class Loose:
            x: int
    with pytest.raises(ValueError, match="one evidence type per oracle"):
        @evidence.declare("history")
        @dataclass(frozen=True)
        class Other:
            x: int
    assert evidence.declared("history") is HistoryEvidence


def test_record_is_the_one_way_in_and_of_reads_it_typed():
    obs = Observation("torch-env", "default", Outcome("ok"))
    assert "history" not in obs.evidence and evidence.of(obs, HistoryEvidence) is None and records(obs) == ()
    got = evidence.record(evidence.record(obs, HistoryEvidence((REC,))), HistoryEvidence((REC, REC)))
    assert got.evidence["history"] == HistoryEvidence((REC, REC)) and len(got.evidence) == 1  # replaced
    assert records(got) == (REC, REC)
    assert pickle.loads(pickle.dumps(got)) == got  # Note [observation pickling]: workers send it
    with pytest.raises(TypeError, match="no declared evidence type"):
        evidence.record(obs, REC)  # a record is part of the evidence, not evidence of an oracle


def test_evidence_round_trips_as_json_data():
    ev = HistoryEvidence((REC,))
    text = json.dumps(evidence.to_json(ev))
    assert json.loads(text) == {"oracle": "history", "data": {"records": [
        {"question": 1, "expr": "u0 >= 3", "live": ["False", "fallback"], "fresh": ["True", "static"],
         "why": "", "concrete": "True", "mode": "statically_known_true"}]}}
    back = evidence.from_json(json.loads(text))
    assert back == ev and type(back.records[0]) is HistoryRecord and isinstance(back.records[0].live, tuple)


@pytest.mark.parametrize("data, message", [
    ({"records": [{"question": "1", "expr": "", "live": ["", ""], "fresh": ["", ""]}]}, "must be of type int"),
    ({"records": [{"question": 1, "expr": "", "live": ["", "", ""], "fresh": ["", ""]}]}, "2 values"),
    ({"records": [], "__class__": "os.system"}, "no field"),
    ({"records": "rm -rf /"}, "must be a list"),
])
def test_evidence_that_does_not_fit_its_type_is_refused(data, message):
    with pytest.raises(ValueError, match=message):
        evidence.from_json({"oracle": "history", "data": data})


def test_unknown_oracle_evidence_is_kept_as_data():
    obj = {"oracle": "a-plugin-not-loaded", "data": {"ranks": [2, 3]}}
    got = evidence.from_json(obj)
    assert got == evidence.Unknown("a-plugin-not-loaded", {"ranks": [2, 3]}) and evidence.to_json(got) == obj
    assert hash(_finding(got)) == hash(_finding(evidence.Unknown("a-plugin-not-loaded", {"ranks": [2, 3]})))


def test_case_file_carries_the_findings_evidence(tmp_path):
    f = _finding(HistoryEvidence((REC,)))
    d = save_case(tmp_path, Case(f, _program(), None), "print(1)\n", "log")
    on_disk = json.loads((d / "case.json").read_text())["finding"]["evidence"]
    assert on_disk["oracle"] == "history" and on_disk["data"]["records"][0]["mode"] == "statically_known_true"
    assert load_case(d).finding == f


def test_a_case_file_with_evidence_that_does_not_fit_is_a_case_error(tmp_path):
    d = save_case(tmp_path, Case(_finding(HistoryEvidence((REC,))), _program(), None), "print(1)\n", "log")
    obj = json.loads((d / "case.json").read_text())
    obj["finding"]["evidence"]["data"]["records"][0]["live"] = "False"
    (d / "case.json").write_text(json.dumps(obj))
    with pytest.raises(CaseError, match=r"finding\.evidence"):
        load_case(d)


def test_a_case_file_written_before_evidence_loads_with_its_oracles_reading(tmp_path):
    """A tensor history finding of the old format: its question in its detail's last lines."""
    old = _finding(None)
    old = replace(old, detail=old.detail + "\nasked: statically_known_true\nexpr: u0 >= 3\nlive: False")
    d = save_case(tmp_path, Case(old, _program(), None), "print(1)\n", "log")
    obj = json.loads((d / "case.json").read_text())
    del obj["finding"]["evidence"]  # as such files are
    (d / "case.json").write_text(json.dumps(obj))
    (r,) = load_case(d).finding.evidence.records
    assert (r.question, r.mode, r.expr, r.live) == (1, "statically_known_true", "u0 >= 3", ("False", "fallback"))
    # a question program's history finding needed none, and gets none
    q = QProgram((QInstr("unbacked", (5,)), QInstr("ask", ("bool", ">=", R(0), 2))))
    f = replace(old, system="torch-env", detail="question 1: ...", signature="history:stale-fallback:torch-env:default:Cmp[]:bool")
    d = save_case(tmp_path / "q", Case(f, q, None), "print(1)\n", "log")
    obj = json.loads((d / "case.json").read_text())
    del obj["finding"]["evidence"]
    (d / "case.json").write_text(json.dumps(obj))
    assert load_case(d).finding.evidence is None


def _old_file(tmp_path, f: Finding, p) -> Path:
    """A case file as written before findings carried evidence."""
    d = save_case(tmp_path, Case(f, p, None), "print(1)\n", "log")
    obj = json.loads((d / "case.json").read_text())
    del obj["finding"]["evidence"]
    (d / "case.json").write_text(json.dumps(obj))
    return d


def test_older_ab_and_config_differential_files_get_their_oracles_evidence(tmp_path):
    """The A/B oracle's baseline (an 'ab-baseline: ' JSON line) and the config differential's
    blame line were kept in the detail; loading such a file reads them once."""
    from shapefuzz.oracles.ab import ABEvidence
    from shapefuzz.oracles.blame import blame
    from shapefuzz.oracles.differential import Blame

    p = QProgram((QInstr("unbacked", (5,)), QInstr("ask", ("bool", ">=", R(0), 2))))
    ab = Finding("ab", "critical", "torch-env", "default", "regression", "s",
                 'the candidate is wrong\nab-baseline: {"python": "/usr/bin/python3", "env": [["PYTHONPATH", ""]], "seed": 3}',
                 "ab:regression:torch-env:default:truth:wrong-claim")
    got = load_case(_old_file(tmp_path / "ab", ab, p)).finding.evidence
    assert got == ABEvidence("/usr/bin/python3", (("PYTHONPATH", ""),), 3)
    broken = replace(ab, detail="the candidate is wrong\nab-baseline: {not json")
    assert load_case(_old_file(tmp_path / "broken", broken, p)).finding.evidence is None
    cd = Finding("config-differential", "high", "torch-env", "agfs=2", "config-mismatch", "s",
                 "answers differ\nblame: expr-cache (the bisection's)", "config-differential:config-mismatch:torch-env:expr-cache:")
    f = load_case(_old_file(tmp_path / "cd", cd, p)).finding
    assert f.evidence == Blame("expr-cache (the bisection's)")
    assert blame(f, p) == "guilty toggle: expr-cache (the bisection's)"  # read off the evidence
    assert blame(replace(f, evidence=None), p).startswith("guilty toggle: expr-cache (reverting")  # none: the key's


def test_a_performance_findings_measurements_round_trip():
    """A second oracle whose evidence a system records (make_fx: the family scaled by n)."""
    from shapefuzz.systems.evidence.performance import Scaling, ScalingEvidence

    ev = ScalingEvidence((Scaling("copies", (4, 8, 16), (0.1, 0.25, 1.0), (100, 400, 1600), 2, 1.0, "ncalls"),))
    back = evidence.from_json(json.loads(json.dumps(evidence.to_json(ev))))
    assert back == ev and isinstance(back.families[0].cpu_s, tuple) and back.families[0].expected_order == 1.0
