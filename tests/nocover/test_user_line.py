"""Note [user line] (shapefuzz/systems/compile.py): an error Dynamo raises while it runs the
program's source names the instruction by the line it reports, so torch.compile and strict export
give a bug the same `at=` as make_fx and non-strict export, and a known root cause stays known
through them."""

from __future__ import annotations

import json
import traceback
from pathlib import Path

import pytest

from shapefuzz.campaign.evaluate import evaluate
from shapefuzz.cases.corpus import load_case
from shapefuzz.cases.known import known_note, load_known
from shapefuzz.program.codegen import HEADER, function_source
from shapefuzz.program.kinds import load_program
from shapefuzz.systems.compile import mark_user_line
from shapefuzz.systems.jobs import run_job

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
TRACERS = (("make_fx", "default"), ("export", "default"), ("export", "strict"), ("compile", "default"))


def _local(jobs):
    return [run_job(j) for j in jobs]


@pytest.mark.parametrize("name", ["pending-unbacked-slice-make_fx", "pending-unbacked-narrow-make_fx"])
def test_a_bug_through_dynamo_names_the_instruction_and_is_known(name):
    """Row 1 of reports/torch-2.13 (fake slice_forward's unbound unbacked symbols): every front end
    fails at the same instruction, and each finding is the known issue, not a new one."""
    case = load_case(CORPUS / name)
    op = case.finding.key.split("at=layout.")[1].split("@")[0]  # make_fx's own: narrow or slice
    found = {f.system + ":" + f.config: f.key for f in
             evaluate(case.program, TRACERS, _local, n_variants=0).findings if f.symptom == "trace-error"}
    assert set(found) == {f"{s}:{c}" for s, c in TRACERS}, found
    known = load_known()
    for target, key in found.items():
        assert f"at=layout.{op}" in key, (target, key)
        assert known_note(known, key) is not None, (target, key)


# the inductor campaign of 2026-12-05 (seed 1): a later call recompiles at a size-0 dim and the
# branch's general arm, x0[:u], meets row 1 (a replay finding: the artifact's guards sent the call
# to Dynamo, which failed while tracing)
RECOMPILED = load_program(json.loads(
    '{"inputs":[{"data":[true,true,true,true,true,true],"dims":["dynamic","static","unbacked"],"dtype":"bool",'
    '"name":"x0","shape":[6,1,1]}],"instrs":[{"args":[{"v":0},"sum"],"n_out":1,"op":"item"},'
    '{"args":["+",{"v":1},1],"n_out":1,"op":"binop"},{"args":["//",{"v":2},2],"n_out":1,"op":"binop"},'
    '{"args":["+",{"v":3},1],"n_out":1,"op":"binop"},{"args":["//",{"v":4},2],"n_out":1,"op":"binop"},'
    '{"args":["-",{"v":3},{"v":2}],"n_out":1,"op":"binop"},'
    '{"args":["guard_or_false","slice_all",{"v":0},0,{"v":3}],"n_out":1,"op":"branch"},'
    '{"args":[[{"v":0},{"v":0}],2],"n_out":1,"op":"cat"},{"args":[{"v":8},1],"n_out":1,"op":"unbind"}],'
    '"outputs":[5,6,7,9],"schema":1}'))


def test_a_recompile_that_fails_names_the_instruction_and_is_known():
    found = [f.key for f in evaluate(RECOMPILED, (("compile", "default"),), _local, n_variants=0).findings
             if f.oracle == "replay" and f.symptom == "error-where-eager-succeeds"]
    assert found and all(k.endswith(":at=branch.branch") for k in found), found
    assert all(known_note(load_known(), k) is not None for k in found), found


def _raised_at(lineno: int) -> Exception:
    """An error as Dynamo raises it: the user frames it traced in `real_stack`."""
    e = RuntimeError("from user code")
    e.real_stack = traceback.StackSummary.from_list([("<shapefuzz program f>", lineno, "f", None)])
    return e


def test_the_reported_line_is_the_instruction_on_it():
    """Each instruction's line of the compiled source (HEADER, then the function) maps back to
    that instruction; the def and return lines and other files map to none."""
    program = load_case(CORPUS / "pending-unbacked-slice-make_fx").program
    source = (HEADER + function_source(program)).splitlines()
    first = len(HEADER.splitlines()) + 1  # the `def` line, 1-based
    for pos, (ins, defs) in enumerate(program.definitions()):
        lhs = ", ".join(f"v{d}" for d in defs)
        if not defs:
            continue
        lineno = next(k for k, line in enumerate(source, 1)
                      if k > first and line.split(" = ")[0].strip().rstrip(",") == lhs)
        e = _raised_at(lineno)
        mark_user_line(e, program)
        assert e.shapefuzz_at == (pos, ins.op), (lineno, source[lineno - 1])
    for lineno in (first, len(source)):
        e = _raised_at(lineno)
        mark_user_line(e, program)
        assert not hasattr(e, "shapefuzz_at"), source[lineno - 1]
    e = RuntimeError("elsewhere")
    e.real_stack = traceback.StackSummary.from_list([("user.py", first + 1, "f", None)])
    mark_user_line(e, program)
    assert not hasattr(e, "shapefuzz_at")


def test_an_instruction_interp_marked_is_kept():
    program = load_case(CORPUS / "pending-unbacked-slice-make_fx").program
    e = _raised_at(len(HEADER.splitlines()) + 2)
    e.shapefuzz_at = (7, "marked")
    mark_user_line(e, program)
    assert e.shapefuzz_at == (7, "marked")
