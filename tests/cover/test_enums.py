"""The value Enums of issue 32 item 1 (severity, outcome status, what a repro compares): a str
naming a member is taken and becomes the member, an unknown one is refused where it enters, and
the members are their values wherever files, reports and plugins read or write them."""

from __future__ import annotations

import json
import pickle

import pytest

from shapefuzz.oracles.base import COMPARES, Compares, Oracle
from shapefuzz.oracles.findings import SEVERITIES, Finding, Severity
from shapefuzz.systems.observation import OUTCOMES, Outcome, OutcomeStatus


def _finding(severity) -> Finding:
    return Finding("truth", severity, "torch-env", "default", "wrong-static", "s", "d", "truth:x")


def test_a_name_becomes_the_member_and_an_unknown_one_is_refused():
    assert _finding("high").severity is Severity.HIGH
    assert Outcome("dde").status is OutcomeStatus.DDE
    with pytest.raises(ValueError, match="severe"):
        _finding("severe")
    with pytest.raises(ValueError, match="oops"):
        Outcome("oops")


def test_an_oracle_takes_names_and_holds_members():
    o = Oracle("toy-enum", "medium", "a rule", lambda c: [], compares="runs",
               compares_by_name=(("toy-enum", "proof"),))
    assert o.severity is Severity.MEDIUM and o.compares is Compares.RUNS
    assert o.compares_of("toy-enum") is Compares.PROOF
    with pytest.raises(ValueError, match="compares"):
        Oracle("toy-enum", "medium", "a rule", lambda c: [], compares="vibes")


def test_members_are_their_values_in_files_and_tables():
    f = _finding(Severity.CRITICAL)
    assert json.loads(json.dumps(f.to_json()))["severity"] == "critical"
    assert Finding.from_json(json.loads(json.dumps(f.to_json()))) == f
    assert SEVERITIES == ("critical", "high", "medium", "low")  # most severe first: the order used
    assert "fresh-env" in COMPARES and "bug" in OUTCOMES
    assert f"{Outcome('timeout').status}" == "timeout"
    assert pickle.loads(pickle.dumps(Outcome("ok"))) == Outcome("ok")
