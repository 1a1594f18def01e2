"""Note [repro forms]: the writers are registered values (no protocol found by getattr), an
oracle's forms are tried before its family, and a form's values reach a script only as names
bound to plain values."""

from __future__ import annotations

from dataclasses import replace

import pytest

from shapefuzz.cases.corpus import Case
from shapefuzz.oracles.findings import Finding
from shapefuzz.oracles.forms import ReproForm
from shapefuzz.program import Ref
from shapefuzz.program.questions import QInstr, QProgram
from shapefuzz.repro import forms


def _case(oracle: str, system: str = "torch-env") -> Case:
    p = QProgram((QInstr("unbacked", (5,)), QInstr("ask", ("bool", ">=", Ref(0), 2))))
    f = Finding(oracle, "medium", system, "default", "stale-fallback", "s", "d",
                f"{oracle}:stale-fallback:{system}:default:Cmp[]:bool", 1)
    return Case(f, p, None)


def test_every_writer_is_registered_with_its_parts_spelled_out():
    for name in forms._MODULES:
        w = forms.writer(name)
        assert isinstance(w, forms.Writer) and w.name == name
        assert callable(w.issue) and callable(w.line_limit) and callable(w.reduction) and callable(w.issue_cuts)
        assert (w.check is None) == (name in ("harness", "fresh-env-trace", "fresh-env-questions")), name
    with pytest.raises(ValueError, match="unknown repro writer 'nope'"):
        forms.writer("nope")


def test_an_oracles_form_comes_before_its_family_and_never_for_ref():
    history = _case("history")
    assert forms.choose(history).form.name == "history-questions"
    assert forms.choose(history).writer.name == "fresh-env-questions" and forms.family(history).name == "questions"
    assert forms.choose(replace(history, finding=replace(history.finding, system="ref"))).form is None
    truth = _case("truth")  # an oracle without forms: its family's writer
    assert forms.choose(truth).form is None and forms.choose(truth).writer.name == "questions"
    unknown = _case("a-plugin-not-loaded")  # replayed without its plugin: the system's family
    assert forms.choose(unknown).form is None and forms.choose(unknown).writer.name == "questions"


@pytest.mark.parametrize("values, message", [
    ({"lower": 1}, "is no NAME"),
    ({"X": object()}, "not a plain value"),
    ({"X": float("nan")}, "not a plain value"),
    ({"X": {"k": [1, (2, "__import__('os')")], 3: None}}, None),  # plain: its repr is data
])
def test_a_forms_values_are_names_bound_to_plain_values(values, message):
    form = ReproForm("f", "t", lambda case: values)
    if message is None:
        assert form.values(None) == values
        return
    with pytest.raises(ValueError, match=message):
        form.values(None)
