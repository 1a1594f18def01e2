"""The issue form's reduction (Note [issue form reduction] in shapefuzz/repro/reduce.py): the
slice keeps what the finding needs and drops what it does not (pure, no torch subprocess), the
trial's searches find the instruction and the calls that matter, and a reduced form that stops
failing standalone falls back to the full one."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from shapefuzz.cases.corpus import CaseError, IssueCut, load_case
from shapefuzz.program import InputSpec, Instr, Program, Ref
from shapefuzz.repro import line_limit, repro_source, trial
from shapefuzz.repro.reduce import apply_cut, needed, prefix_cut, raise_cut, sub_program

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def _spec(name: str, n: int) -> InputSpec:
    return InputSpec(name, "float", (n,), ("dynamic",), tuple(float(k) for k in range(n)))


def program() -> Program:
    """Two independent chains (x0 -> v3 -> v5, x1 -> v4), a check on each, an unused input x2."""
    return Program((_spec("x0", 3), _spec("x1", 2), _spec("x2", 4)), (
        Instr("add", (Ref(0), Ref(0))),              # 0: v3
        Instr("size", (Ref(1), 0)),                  # 1: v4
        Instr("mul", (Ref(3), Ref(3))),              # 2: v5
        Instr("check", (">=", Ref(4), 1), n_out=0),  # 3: over v4
        Instr("size", (Ref(0), 0)),                  # 4: v6
        Instr("check", ("==", Ref(6), 3), n_out=0),  # 5: over v6
    ), (5, 4))


def test_the_slice_keeps_what_a_value_needs_and_nothing_else():
    p = program()
    assert needed(p, {5}) == (0, 2)  # x1's chain, both checks (their values are not kept) dropped
    assert needed(p, {4}) == (1, 3)  # the check over a kept value stays: it adds a fact
    assert needed(p, {4}, upto=2) == (1,)  # ... unless it comes after the point of interest
    assert needed(p, {5, 6}) == (0, 2, 4, 5)
    assert needed(p, {0}) == ()  # an input needs no instruction


def test_a_sub_program_drops_unread_inputs_and_renumbers():
    sub, inputs = sub_program(program(), (0, 2), (5,))
    assert inputs == (0,)
    assert [s.name for s in sub.inputs] == ["x0"]
    assert sub.instrs == (Instr("add", (Ref(0), Ref(0))), Instr("mul", (Ref(1), Ref(1))))
    assert sub.outputs == (2,)
    sub, inputs = sub_program(program(), (1, 3), (4,))
    assert inputs == (1,) and sub.instrs[1] == Instr("check", (">=", Ref(1), 1), n_out=0)


def test_a_cut_that_leaves_a_value_undefined_is_refused():
    from shapefuzz.program import ProgramError

    with pytest.raises(ProgramError):
        sub_program(program(), (2,), (5,))  # mul without the add that defines its argument


def test_prefix_and_raise_cuts():
    p = program()
    assert prefix_cut(p, 2) == IssueCut((0, 1, 2), (5,))
    assert raise_cut(p, 3) == IssueCut((1, 3), ())  # a check that raised: its argument's chain
    assert raise_cut(p, 2) == IssueCut((0, 2), (5,))


def _fake(p, fails, system="make_fx", calls=0):
    case = SimpleNamespace(program=p, finding=SimpleNamespace(system=system, replay_index=calls - 2))
    t = SimpleNamespace(case=case, tried=[])

    def run(cut):
        t.tried.append(cut)
        return fails(cut)
    t.fails = run
    return t


def test_the_raising_instruction_is_found_by_its_shortest_failing_prefix():
    p = program()
    t = _fake(p, lambda cut: 2 in cut.instrs)  # the trace raises at the mul
    assert trial._raise_cut(t) == IssueCut((0, 2), (5,))
    assert len(t.tried) <= 4  # a binary search over 6 prefixes, then the slice
    t = _fake(p, lambda cut: {1, 2} <= set(cut.instrs))  # needs both chains: the prefix it is
    assert trial._raise_cut(t) == prefix_cut(p, 2)


def test_calls_that_do_not_matter_are_dropped():
    p = program()
    # the bug needs call 1 (say, the call that compiled the graph) and the last call, 4
    t = _fake(p, lambda cut: {1, 4} <= set(cut.calls or range(5)) and (cut.instrs is None or 0 in cut.instrs),
              system="compile", calls=5)
    cut = trial._calls_cut(t)
    assert cut.calls == (1, 4)
    assert cut.instrs == (0, 2) and cut.outputs == (5,)  # then the outputs: v5's slice is enough
    t = _fake(p, lambda cut: cut.instrs is None, system="compile", calls=5)  # the last call shows it
    assert trial._calls_cut(t) == IssueCut(calls=(4,))
    assert len(t.tried) == 1 + 3  # the last call alone, then the three output slices (none fails)


def test_symptom_ignores_numbers_and_keeps_the_exception():
    s = trial.symptom("expected: []\nBUG: got GuardOnDataDependentSymNode: Could not guard on u0 < 2\n")
    assert s == "BUG: got GuardOnDataDependentSymNode"
    assert trial.symptom("BUG: the last call ran graph 3: its facts reject") == "BUG: the last call ran graph N"
    assert trial.symptom("OK: traced and eager agree") == ""


@pytest.fixture
def case_dir(tmp_path):
    src = CORPUS / "canonicalize-booleantrue-narrow-export"
    d = tmp_path / "case"
    shutil.copytree(src, d)
    return d


def _cut_of(case):
    return raise_cut(case.program, len(case.program.instrs) - 1)


def test_a_reduced_form_that_stops_failing_falls_back_to_the_full_one(case_dir, monkeypatch):
    case = load_case(case_dir)
    full = repro_source(case)
    reduced = repro_source(replace(case, issue_cut=_cut_of(case)))
    assert reduced != full
    monkeypatch.setattr(trial, "_trial", lambda folder, seconds: _cut_of(case))
    seen = []

    def run(folder, seconds):  # the reduced form passes standalone, the full one fails
        seen.append((folder / "repro.py").read_text())
        return seen[-1] == full
    assert trial.confirm_reduced(case_dir, run)
    assert seen == [reduced, full]  # one run each, and the trial: three subprocesses at most
    assert (case_dir / "repro.py").read_text() == full
    assert load_case(case_dir).issue_cut is None


def test_a_reduced_form_that_fails_is_kept_and_recorded(case_dir, monkeypatch):
    case = load_case(case_dir)
    monkeypatch.setattr(trial, "_trial", lambda folder, seconds: _cut_of(case))
    runs = []
    assert trial.confirm_reduced(case_dir, lambda folder, seconds: runs.append(folder) or True)
    assert len(runs) == 1
    again = load_case(case_dir)
    assert again.issue_cut == _cut_of(case)
    # regenerating repro.py from case.json gives the script on disk, within its limit
    src = (case_dir / "repro.py").read_text()
    assert src == repro_source(again) and len(src.splitlines()) <= line_limit(again)
    assert len(src.splitlines()) < len(repro_source(case).splitlines())


def test_no_trial_when_nothing_is_worth_reducing(case_dir, monkeypatch):
    monkeypatch.setattr(trial, "_trial", lambda folder, seconds: pytest.fail("no trial expected"))
    monkeypatch.setattr(trial, "_SMALL_PROGRAM", 100)
    assert trial.confirm_reduced(case_dir, lambda folder, seconds: True)


def test_a_crafted_cut_shows_the_full_form_or_is_refused(case_dir):
    obj = json.loads((case_dir / "case.json").read_text())
    case = load_case(case_dir)
    last = len(case.program.instrs) - 1
    obj["issue_cut"] = {"instrs": [last], "outputs": [], "calls": None}  # its arguments undefined
    (case_dir / "case.json").write_text(json.dumps(obj))
    crafted = load_case(case_dir)
    assert apply_cut(crafted)[0].program == case.program
    assert repro_source(crafted) == repro_source(case)
    for bad in ({"instrs": [10**6], "outputs": [], "calls": None}, {"instrs": "0"}, [1], {"x": []}):
        obj["issue_cut"] = bad
        (case_dir / "case.json").write_text(json.dumps(obj))
        with pytest.raises(CaseError, match="issue_cut"):
            load_case(case_dir)


def test_an_instruction_with_several_values_keeps_them_all_apart():
    p = Program((_spec("x0", 3), _spec("x1", 2)), (
        Instr("size", (Ref(0), 0)),          # 0: v2 (dropped)
        Instr("unbind", (Ref(1), 0), n_out=2),  # 1: v3, v4
        Instr("add", (Ref(4), Ref(3))),      # 2: v5
    ), (5,))
    keep = needed(p, {5})
    assert keep == (1, 2)
    sub, inputs = sub_program(p, keep, (5,))
    assert inputs == (1,)
    assert sub.instrs[1] == Instr("add", (Ref(2), Ref(1))) and sub.outputs == (3,)


def test_a_question_slice_keeps_its_leaves_and_facts_and_the_other_values_follow():
    from shapefuzz.program.questions import QInstr, QProgram
    from shapefuzz.repro.reduce import question_cut

    p = QProgram((
        QInstr("backed", (2,)),                      # v0
        QInstr("backed", (3,)),                      # v1 (question 1 only)
        QInstr("binop", ("-", Ref(1), Ref(0))),      # v2 (unused)
        QInstr("constrain_range", (Ref(0), 0, 10)),  # a fact over v0
        QInstr("ask", ("bool", "!=", Ref(0), 0)),    # question 0
        QInstr("unbacked", (5,)),                    # v3, after it
        QInstr("ask", ("guard_or_false", ">", Ref(1), Ref(0))),  # question 1
    ))
    assert question_cut(p, 0) == IssueCut((0, 3, 4))
    assert question_cut(p, 1) == IssueCut((0, 1, 3, 6))  # question 0 (and its guard) dropped
    case = replace(load_case(CORPUS / "zero-size-backed-positive-torch-env"), program=p,
                   alt_values=(0, 7, 9), issue_cut=IssueCut((0, 1, 3, 6)))
    cut, calls = apply_cut(case)
    assert calls is None and cut.issue_cut is None
    assert [i.op for i in cut.program.instrs] == ["backed", "backed", "constrain_range", "ask"]
    assert cut.program.instrs[-1].args == ("guard_or_false", ">", Ref(1), Ref(0))
    assert cut.alt_values == (0, 7)  # v3's value went with it


def test_a_case_saved_again_during_its_reduction_is_left_as_saved(case_dir, monkeypatch):
    case = load_case(case_dir)

    def trial_while_resaved(folder, seconds):  # the campaign saves a smaller program meanwhile
        obj = json.loads((folder / "case.json").read_text())
        obj["program"]["instrs"] = obj["program"]["instrs"][:1]
        obj["program"]["outputs"] = []
        (folder / "case.json").write_text(json.dumps(obj))
        return _cut_of(case)
    monkeypatch.setattr(trial, "_trial", trial_while_resaved)
    before = (case_dir / "repro.py").read_text()
    assert trial.confirm_reduced(case_dir, lambda folder, seconds: True)
    assert (case_dir / "repro.py").read_text() == before and load_case(case_dir).issue_cut is None


def test_a_plugin_oracle_with_its_own_repro_is_not_cut(case_dir):
    from shapefuzz.oracles import get_oracle
    from shapefuzz.oracles.base import _BY_FINDING, _REGISTRY, Oracle, register
    from shapefuzz.oracles.forms import ReproForm

    case = load_case(case_dir)
    assert trial.strategy(case) == "raise"
    name = "toy-own-repro"
    form = ReproForm(name, "plugin_template", lambda case: {})  # Note [repro forms]: its own harness
    register(Oracle(name, "low", "a plugin's rule", lambda c: [], forms=(form,)))
    try:
        assert get_oracle(name).forms == (form,)
        mine = replace(case, finding=replace(case.finding, oracle=name))
        assert trial.strategy(mine) == "" and not trial.worth_reducing(mine)
    finally:
        _REGISTRY.pop(name, None)
        _BY_FINDING.pop(name, None)
