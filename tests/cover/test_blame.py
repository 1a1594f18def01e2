"""Blame lines (Note [blame] in shapefuzz/oracles/blame.py): the guilty toggle of a config
differential; for a torch finding, whether ref sides with the truth (torch bug) or with torch."""

from __future__ import annotations

from dataclasses import replace

from shapefuzz.campaign.evaluate import evaluate
from shapefuzz.oracles.blame import blame
from shapefuzz.oracles.findings import Finding
from shapefuzz.program import Ref
from shapefuzz.program.questions import QInstr, QProgram
from shapefuzz.systems.jobs import Job, run_job
from shapefuzz.systems.observation import Decision, Observation, Outcome, RunResult, Value

# v0 = backed(0); bool(v0 != 0): torch 2.13 without 0/1 specialization says True statically
SIZE0 = QProgram((QInstr("backed", (0,)), QInstr("ask", ("bool", "!=", Ref(0), 0))))


def _cd(config: str, sig_config: str) -> Finding:
    return Finding("config-differential", "high", "torch-env", config, "config-mismatch", "s", "d",
                   f"config-differential:config-mismatch:torch-env:{sig_config}")


def test_config_differential_names_the_guilty_toggle():
    assert blame(_cd("agfs=2", "expr-cache"), SIZE0).startswith("guilty toggle: expr-cache")
    assert "not isolated" in blame(_cd("agfs=2", "agfs=2"), SIZE0)


def test_real_torch_bug_is_blamed_on_torch_because_ref_gets_it_right():
    ev = evaluate(SIZE0, (("torch-env", "no-specialize-zero-one"),), lambda jobs: [run_job(j) for j in jobs])
    (f,) = [f for f in ev.findings if f.oracle == "truth"]
    ref = run_job(Job(SIZE0.dumps(), "ref", "default", "[]"))
    assert blame(f, SIZE0, ref).startswith("torch bug: ref agrees")


def test_shared_misunderstanding_when_ref_makes_the_same_wrong_claim():
    ev = evaluate(SIZE0, (("torch-env", "no-specialize-zero-one"),), lambda jobs: [run_job(j) for j in jobs])
    (f,) = [f for f in ev.findings if f.oracle == "truth"]
    wrong_ref = Observation("ref", "default", Outcome("ok"), (Decision("True", "True", "static"),),
                            out_exprs=("s0",), binding=(("s0", 0),), out_eval=("0",))
    assert blame(f, SIZE0, wrong_ref).startswith("shared misunderstanding")
    assert blame(f, SIZE0, replace(wrong_ref, outcome=Outcome("dde", "X", "m"))).startswith("ref cannot tell")
    assert blame(f, SIZE0, None) == ""  # no ref observation: nothing to say
    assert blame(replace(f, system="ref"), SIZE0, wrong_ref) == ""  # not a torch finding


def test_tensor_finding_blame_compares_ref_shapes_with_eager():
    f = Finding("eager-agreement", "critical", "make_fx", "default", "symbolic-shape", "s", "d", "sig")
    eager = Observation("eager", "default", Outcome("ok"),
                        reference=RunResult(True, values=(Value("tensor", (1,), "float", (0.0,)),)))
    ref_right = Observation("ref", "default", Outcome("ok"), out_exprs=("[u0]",), out_eval=("[1]",))
    ref_wrong = replace(ref_right, out_eval=("[1, 1]",))
    assert blame(f, None, ref_right, eager).startswith("torch bug")
    assert blame(f, None, ref_wrong, eager).startswith("shared misunderstanding")
