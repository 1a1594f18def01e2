"""The constructs of issue 13 item 5 as ops: conditions as values (values.py), Python indexing and
tolist() (indexing.py), full / new_full, size-oblivious branches and large constants.

Properties: generated source means what the interpreter does; the reference's shape rules give
eager's shapes and agree with make_fx; unmodified make_fx raises no finding on the forms torch
supports; a bug planted in a new shape rule is found; the forms torch 2.13 cannot trace are
pinned as strict xfails, so a fix upstream turns them red."""

from __future__ import annotations

import pytest
from _helpers import I, R, inp, prog
from hypothesis import HealthCheck, given, settings
from test_codegen import assert_agree, branch_positions

from shapefuzz.ops import get_op
from shapefuzz.ops.branch import OBLIVIOUS_PATTERNS
from shapefuzz.ops.scalar import LARGE_CONSTANTS
from shapefuzz.oracles import check_all
from shapefuzz.oracles.agreement import eager_agreement
from shapefuzz.oracles.differential import system_differential
from shapefuzz.strategies import programs
from shapefuzz.systems import get_system
from shapefuzz.systems.ref import RefSystem

REF = RefSystem()
EAGER = get_system("eager")
NEW = ("index", "symbool", "factory")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(families=NEW, max_ops=5))
def test_source_agrees_with_interpreter_on_the_new_ops(p):
    assert_agree(p)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(families=("branch", "index"), max_ops=5))
def test_source_agrees_on_size_oblivious_branches_forced_or_not(p):
    assert_agree(p)
    assert_agree(p, frozenset(branch_positions(p)))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(families=NEW, max_ops=4))
def test_ref_rules_of_the_new_ops_agree_with_eager(p):
    eager = EAGER.observe(p, "default", ())
    o = REF.observe(p, "default", ())
    assert not check_all(p, eager, [o]), p.pretty()


# ---- fixed programs, one per new construct -----------------------------------------------------------
X = inp(range(6), (3, 2), dims=("dynamic", "static"))
U = inp([1, 0, 2, 1], dims=("unbacked",))  # an unbacked (size-like) dim of 4
T = inp([2, 0, 1])
SUPPORTED = {
    "bool_index": prog([X], [I("mask", R(0), ">", 1), I("bool_index", R(0), R(1))]),
    "bool_index_rows": prog([X, inp([True, False, True])], [I("bool_index", R(0), R(1))]),
    "tensor_index": prog([X, T], [I("tensor_index", R(0), R(1))]),
    "int_index_backed": prog([X], [I("size", R(0), 0), I("binop", "-", R(1), 1),
                                   I("int_index", R(0), R(2))]),
    "tolist": prog([X, T], [I("tolist", R(1), n_out=3), I("zeros", (R(2), R(3)))], outputs=(5,)),
    "full": prog([X], [I("size", R(0), 0), I("full", (R(1), 2), 1.5), I("full", (R(1),), R(1))],
                 outputs=(2, 3)),
    "new_full": prog([X, T], [I("item", R(1), "sum"), I("new_full", R(0), (R(2),), -1.0)]),
    "cond_int": prog([X], [I("size", R(0), 0), I("cond_int", "int", ">", R(1), 2, 1, 0),
                           I("zeros", (R(2),))]),
    "sym_ite": prog([X, T], [I("item", R(1), "sum"), I("cond_int", "sym_not", "<", R(2), 3, 4, 1),
                             I("zeros", (R(3), 2))]),
    "where": prog([X, T], [I("item", R(1), "sum"), I("mask", R(0), ">", 2),
                           I("cond_tensor", "where", ">=", R(2), 3, R(0), R(3))]),
    "size_oblivious_cat": prog([X, U], [I("mask", R(1), ">", 5), I("nonzero", R(2)),
                                        I("branch", "guard_size_oblivious", "cat_empty", R(3), R(3), 0)]),
    "size_oblivious_slice": prog([U], [I("branch", "guard_size_oblivious", "slice_all", R(0), 0, 1)]),
    "large_constants": prog([X, T], [I("item", R(1), "sum"), I("binop", "*", 256, R(2)),
                                     I("binop", "%", R(3), 447), I("binop", "//", R(4), 127),
                                     I("zeros", (R(5),))]),
}


@pytest.mark.parametrize("name", sorted(SUPPORTED))
def test_ref_shapes_equal_eager(name):
    p = SUPPORTED[name]
    eager = EAGER.observe(p, "default", ())
    assert eager.outcome.status == "ok"
    o = REF.observe(p, "default", ())
    if name == "sym_ite":  # no if-then-else SymInt in the reference: skipped, never a finding
        assert o.outcome.exc_type == "NoShapeRule"
    else:
        assert o.outcome.status == "ok" and o.outcome.exc_type != "NoShapeRule", o.outcome
        assert [v.shape for v in o.reference.values] == [v.shape for v in eager.reference.values]
    assert not check_all(p, eager, [o])


@pytest.mark.parametrize("name", sorted(SUPPORTED))
def test_unmodified_make_fx_raises_no_finding(name):
    p = SUPPORTED[name]
    eager = EAGER.observe(p, "default", ())
    fx = get_system("make_fx").observe(p, "default", [])
    assert not check_all(p, eager, [fx]), [f.detail for f in check_all(p, eager, [fx])]
    assert not system_differential([REF.observe(p, "default", ()), fx], eager, p)


def test_a_size_oblivious_branch_on_an_empty_check_takes_the_general_arm_as_a_fallback():
    fx = get_system("make_fx").observe(SUPPORTED["size_oblivious_cat"], "default", [])
    assert fx.outcome.status == "ok" and fx.fallback_branches == (2,)
    assert OBLIVIOUS_PATTERNS == ("cat_empty", "slice_all")


def test_a_bug_planted_in_a_new_shape_rule_is_found(monkeypatch):
    op = type(get_op("bool_index"))
    orig = op.symbolic

    def keeps_last_dim(self, args, n_out, s):  # as if the mask did not cover x's last dim
        (out,) = orig(self, args, n_out, s)
        return (s.tensor(out.shape + args[0].shape[-1:], out.dtype),)

    monkeypatch.setattr(op, "symbolic", keeps_last_dim)
    p = SUPPORTED["bool_index"]
    eager = EAGER.observe(p, "default", ())
    kinds = {f.symptom for f in eager_agreement(eager, REF.observe(p, "default", ()), frozenset())}
    assert "symbolic-shape" in kinds


def test_large_constants_include_primes_and_powers_of_two_up_to_1024():
    assert {2 ** k for k in range(3, 11)} <= set(LARGE_CONSTANTS)
    assert {5, 7, 11, 13, 127, 251, 257, 509, 1021} <= set(LARGE_CONSTANTS)
    assert max(LARGE_CONSTANTS) == 1024 and 447 in LARGE_CONSTANTS


# ---- what torch 2.13 cannot trace (eager runs them): pinned upstream limitations ----------------------
UNSUPPORTED = {
    # float(SymBool): TypeError "float() argument must be ... not 'SymBool'" (Dynamo handles it)
    "float_of_symbool": prog([X], [I("size", R(0), 0), I("cond_tensor", "float", ">", R(1), 2, R(0), None)]),
    # torch.tensor(SymBool): "Could not infer dtype of SymBool" outside Dynamo
    "tensor_of_symbool": prog([X], [I("size", R(0), 0), I("cond_tensor", "tensor", ">", R(1), 2, None, None)]),
    # x[u] with an unbacked u: IndexError "... (got SymInt)" (pytorch/pytorch#117654, open PR #197167)
    "index_by_unbacked": prog([X, T], [I("item", R(1), "first"), I("int_index", R(0), R(2))]),
}


@pytest.mark.xfail(strict=True, reason="torch 2.13: make_fx cannot trace these; eager runs them")
@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_make_fx_traces_what_eager_runs(name):
    p = UNSUPPORTED[name]
    eager = EAGER.observe(p, "default", ())
    assert eager.outcome.status == "ok"
    fx = get_system("make_fx").observe(p, "default", [])
    assert not check_all(p, eager, [fx])


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_what_torch_cannot_trace_is_a_known_upstream_issue(name):
    from shapefuzz.cases.known import known_note, load_known

    p = UNSUPPORTED[name]
    eager = EAGER.observe(p, "default", ())
    found = check_all(p, eager, [get_system("make_fx").observe(p, "default", [])])
    assert found and all(known_note(load_known(), f.key) for f in found), [f.key for f in found]


def test_export_lines_up_its_inputs_past_a_lifted_tensor_constant():
    """torch.tensor(c) of a condition export decides statically is a constant that export lifts
    to a placeholder ahead of the inputs: the inputs' fakes must still be the inputs'."""
    x = inp(range(6), (3, 2), dims=("static", "static"))
    y = inp([1.0, 2.0, 3.0], dims=("dynamic",))
    p = prog([x, y], [I("size", R(0), 0), I("cond_tensor", "tensor", "==", R(2), 3, None, None),
                      I("add", R(1), R(1))], outputs=(3, 4))
    eager = EAGER.observe(p, "default", ())
    ex = get_system("export").observe(p, "default", [])
    assert ex.artifact is not None and ex.artifact.ok, ex.artifact
    assert not check_all(p, eager, [ex]), [f.key for f in check_all(p, eager, [ex])]


@pytest.mark.xfail(strict=True, reason="torch 2.13: bound_sympy has no handler for sympy's ITE "
                   "(KeyError: ITE) once a torch.sym_ite size meets narrow's bounds check")
def test_a_sym_ite_extent_traces():
    x = inp([], (0, 3), dtype="int", dims=("dynamic", "dynamic"))
    p = prog([x], [I("cat", (R(0), R(0)), 1), I("item", R(0), "sum"),
                   I("cond_int", "sym_ite", "<=", R(2), 1, 0, 3), I("binop", "//", R(3), 2),
                   I("narrow", R(1), 1, R(2), R(4))])
    eager = EAGER.observe(p, "default", ())
    assert eager.outcome.status == "ok"
    assert not check_all(p, eager, [get_system("make_fx").observe(p, "default", [])])
