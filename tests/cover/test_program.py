"""The program IR: JSON round trip, pretty(), type checking and validation on load."""

from __future__ import annotations

import copy
import json
import math

import pytest
from _helpers import I, R, inp, prog
from hypothesis import given, settings

from shapefuzz.program import SCHEMA_VERSION, Instr, Program, ProgramError, Ref
from shapefuzz.strategies import programs


def load(obj) -> Program:
    """What the CLI does with a case file: parse text, then build."""
    return Program.from_json(json.loads(json.dumps(obj)))


def sample_program() -> Program:
    return prog(
        [inp([1, 2, 3, 4, 5, 6], (2, 3)), inp([True, False, True])],
        [
            I("size", R(0), 1),                       # v2
            I("binop", "//", R(2), 2),                # v3
            I("narrow", R(0), 1, R(3), 1),            # v4
            I("nonzero", R(1)),                       # v5
            I("mask", R(0), ">", 2.5),                # v6
            I("split", R(0), (1, R(3)), 1, n_out=2),  # v7, v8
            I("branch", "if", "max", R(2), 2),        # v9
        ],
        outputs=(4, 5, 8, 9),
    )


# ---- JSON round trip ----------------------------------------------------------------------------
@settings(max_examples=60)
@given(programs())
def test_json_round_trip(p):
    text = p.dumps()
    q = Program.from_json(json.loads(text))
    assert q == p
    assert q.dumps() == text
    assert len(q.types()) == q.n_values()


def test_round_trip_of_hand_written_program():
    p = sample_program()
    assert Program.from_json(json.loads(p.dumps())) == p
    # the wire format: refs are {"v": k}, lists stay lists
    ins = json.loads(p.dumps())["instrs"]
    assert ins[5] == {"op": "split", "args": [{"v": 0}, [1, {"v": 3}], 1], "n_out": 2}


@pytest.mark.parametrize("c", [math.inf, -math.inf, math.nan])
def test_non_finite_float_arguments_round_trip(c):
    p = prog([inp([1.0, 2.0])], [I("mask", R(0), "<", c)])
    text = p.dumps()
    assert "NaN" not in text and "Infinity" not in text  # strict JSON
    q = Program.from_json(json.loads(text))
    got = q.instrs[0].args[2]
    assert (math.isnan(got) and math.isnan(c)) or got == c
    assert q.dumps() == text


# ---- pretty ---------------------------------------------------------------------------------------
@settings(max_examples=40)
@given(programs())
def test_pretty_mentions_every_op(p):
    lines = p.pretty().splitlines()
    assert len(lines) == len(p.inputs) + len(p.instrs) + 1
    body = lines[len(p.inputs):-1]
    for line, ins in zip(body, p.instrs):
        assert f"= {ins.op}(" in line, (line, ins)
    assert lines[-1] == "return " + ", ".join(f"v{o}" for o in p.outputs)


def test_pretty_text():
    text = sample_program().pretty()
    assert "v0: int[2D,3D] = [1, 2, 3, 4, 5, 6]  # input x0" in text
    assert "v7, v8 = split(v0, [1, v3], 1)" in text
    assert "v9 = branch('if', 'max', v2, 2)" in text
    for op in ("size", "binop", "narrow", "nonzero", "mask", "split", "branch"):
        assert f"{op}(" in text
    check = prog([inp([1, 2])], [I("size", R(0), 0), I("check", ">=", R(1), 0, n_out=0)], (1,))
    assert "_ = check('>=', v1, 0)" in check.pretty()


# ---- types() --------------------------------------------------------------------------------------
X = inp([1, 2, 3])


def bare(instrs, outputs=(0,), inputs=(X,)) -> Program:
    return Program(tuple(inputs), tuple(instrs), tuple(outputs))


@pytest.mark.parametrize("instrs, match", [
    ([I("size", R(1), 0)], r"instruction 0 \(size\): v1 is used before it is defined"),
    ([I("size", R(0), 0), I("binop", "+", R(1), R(3))], r"instruction 1 \(binop\): v3 is used before"),
    ([I("size", R(-1), 0)], r"v-1 is used before it is defined"),
    ([I("split", (R(0), R(7)), 1, 0, n_out=1)], r"v7 is used before it is defined"),
])
def test_types_rejects_use_before_def(instrs, match):
    with pytest.raises(ProgramError, match=match):
        bare(instrs).types()


@pytest.mark.parametrize("ins, match", [
    (I("size", R(0), 0, n_out=2), r"n_out=2, op defines 1"),
    (I("size", R(0), 0, n_out=0), r"n_out=0, op defines 1"),
    (I("check", "<", 1, 2, n_out=1), r"n_out=1, op defines 0"),
])
def test_types_rejects_wrong_n_out(ins, match):
    with pytest.raises(ProgramError, match=match):
        bare([ins]).types()


@pytest.mark.parametrize("name", ["frobnicate", "", "torch.add", "__import__('os')", None, 3])
def test_types_rejects_unknown_ops(name):
    with pytest.raises(ProgramError, match=r"unknown op .*known ops: .*binop"):
        bare([Instr(name, (R(0),))]).types()


@pytest.mark.parametrize("ins, match", [
    (I("size", R(0), 1), r"dim must be an int literal in \[0, 1\), got 1"),
    (I("size", R(0)), r"malformed arguments"),             # arity
    (I("nonzero", R(0), 1), r"malformed arguments"),       # extra argument
    (I("narrow", R(0), 0, 1.5, 1), r"start must be a SymInt or int literal"),
    (I("mean", R(0), 0, False), r"must have dtype in \('float',\)"),
    (I("binop", "+", R(0), 1), r"a must be a SymInt or int literal"),
    (I("permute", R(0), (R(0),)), r"malformed arguments|permutation"),
])
def test_types_rejects_ill_typed_arguments(ins, match):
    with pytest.raises(ProgramError, match=match):
        bare([ins]).types()


def test_types_rejects_undefined_outputs():
    with pytest.raises(ProgramError, match=r"output v5 is not a defined value \(0..1\)"):
        bare([I("size", R(0), 0)], outputs=(5,)).types()


# ---- from_json validation -----------------------------------------------------------------------
GOOD = {
    "schema": SCHEMA_VERSION,
    "inputs": [{"name": "x0", "dtype": "int", "shape": [3], "dims": ["dynamic"], "data": [1, 2, 3]}],
    "instrs": [{"op": "size", "args": [{"v": 0}, 0], "n_out": 1},
               {"op": "binop", "args": ["//", {"v": 1}, 2], "n_out": 1}],
    "outputs": [2],
}


def edited(path: str, value):
    """GOOD with the field at a dotted path (e.g. 'inputs.0.dtype') replaced."""
    obj = copy.deepcopy(GOOD)
    *parents, last = [int(k) if k.isdigit() else k for k in path.split(".")]
    node = obj
    for k in parents:
        node = node[k]
    node[last] = value
    return obj


def test_good_document_loads():
    p = load(GOOD)
    assert p.op_names() == ["size", "binop"] and p.outputs == (2,)


@pytest.mark.parametrize("obj", [[], "program", None, 3, 1.5, True, [GOOD]])
def test_from_json_rejects_non_objects(obj):
    with pytest.raises(ProgramError, match="program must be a JSON object"):
        Program.from_json(obj)


@pytest.mark.parametrize("schema", [0, 2, "1", None, 1.0 + 1])
def test_from_json_rejects_wrong_schema(schema):
    with pytest.raises(ProgramError, match=r"program schema .* is not supported \(expected 1\)"):
        load(edited("schema", schema))
    missing = copy.deepcopy(GOOD)
    del missing["schema"]
    with pytest.raises(ProgramError, match=r"schema None is not supported"):
        load(missing)


@pytest.mark.parametrize("dtype", ["float64", "complex", "", None, ["int"], "torch.float32"])
def test_from_json_rejects_bad_dtypes(dtype):
    with pytest.raises(ProgramError, match=r"input 0: dtype .* is not one of"):
        load(edited("inputs.0.dtype", dtype))


@pytest.mark.parametrize("data", [[1, 2], [1, 2, 3, 4], [], [[1, 2, 3]]])
def test_from_json_rejects_data_length_mismatch(data):
    with pytest.raises(ProgramError, match=r"input 0: \d+ data elements for shape \(3,\)"):
        load(edited("inputs.0.data", data))


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_from_json_rejects_non_finite_floats(text):
    obj = edited("inputs.0.dtype", "float")
    doc = json.dumps(obj).replace('"data": [1, 2, 3]', f'"data": [1, {text}, 3]')
    with pytest.raises(ProgramError, match=r"input 0: element .* must be a finite number"):
        Program.from_json(json.loads(doc))


@pytest.mark.parametrize("path, value, match", [
    ("inputs.0.data", [1, 2**41, 3], r"input 0 element 2199023255552 is out of range"),
    ("inputs.0.data", [1, -(10**30), 3], r"out of range"),
    ("inputs.0.shape", [2**50], r"input 0 size .* out of range"),
    ("instrs.1.args", ["//", {"v": 1}, 2**41], r"integer argument .* out of range"),
    ("instrs.1.args", ["//", {"v": 10**20}, 2], r"value reference .* out of range"),
    ("instrs.0.n_out", 2**60, r"n_out .* out of range"),
    ("outputs", [2**41], r"output .* out of range"),
])
def test_from_json_rejects_huge_ints(path, value, match):
    with pytest.raises(ProgramError, match=match):
        load(edited(path, value))


@pytest.mark.parametrize("value", [2**41, 10**400, 1e300], ids=["2**41", "10**400", "1e300"])
def test_from_json_rejects_huge_numbers_in_float_data(value):
    """Regression: an int beyond float range in float data used to raise OverflowError."""
    obj = edited("inputs.0.dtype", "float")
    obj["inputs"][0]["data"] = [1, value, 3]
    with pytest.raises(ProgramError, match=r"input 0: element .* must be a finite number"):
        Program.from_json(obj)


@pytest.mark.parametrize("instr, match", [
    ({"op": "binop", "args": ["__import__('os')", {"v": 1}, 2]}, r"binop operator must be one of"),
    ({"op": "binop", "args": ["**", {"v": 1}, 2]}, r"binop operator must be one of"),
    ({"op": "mask", "args": [{"v": 0}, "<>", 1]}, r"comparison must be one of"),
    ({"op": "item", "args": [{"v": 0}, "tolist"]}, r"item mode must be one of"),
    ({"op": "cast", "args": [{"v": 0}, "float64"]}, r"dtype must be one of"),
    ({"op": "check", "args": ["is", {"v": 1}, 0], "n_out": 0}, r"comparison must be one of"),
    ({"op": "branch", "args": ["while", "max", {"v": 1}, 2]}, r"branch mode must be one of"),
    ({"op": "branch", "args": ["if", "exec", {"v": 1}, 2]}, r"branch pattern must be one of"),
])
def test_from_json_rejects_unknown_enumerations(instr, match):
    with pytest.raises(ProgramError, match=match):
        load(edited("instrs.1", instr))


@pytest.mark.parametrize("path, value, match", [
    ("inputs.0.dims", ["symbolic"], r"dims .* must name one of"),
    ("inputs.0.dims", [], r"dims .* must name one of"),
    ("inputs.0.shape", [-1], r"out of bounds"),
    ("inputs.0.shape", [1] * 7, r"out of bounds"),
    ("inputs.0.name", "x; import os", r"name .* must be a short identifier"),
    ("inputs.0", "x0", r"input 0 must be an object"),
    ("inputs", {"x0": 1}, r"field 'inputs' must be a list"),
    ("instrs", None, r"field 'instrs' must be a list"),
    ("instrs.0", ["size"], r"instruction 0 must be an object"),
    ("instrs.0.args", {"v": 0}, r"field 'args' must be a list"),
    ("instrs.0.n_out", True, r"n_out must be an integer"),
    ("instrs.0.n_out", -1, r"n_out -1 out of range"),
    ("instrs.1.args", ["//", {"v": 1, "w": 2}, 2], r"unknown argument object"),
    ("instrs.1.args", ["//", {"float": "1e5"}, 2], r"unknown argument object"),
    ("instrs.1.args", ["//", [[[[[[1]]]]]], 2], r"nesting is too deep"),
    ("instrs.1.args", ["//", {"v": 1}, "x" * 41], r"longer than 40"),
    ("instrs.1.args", ["//", {"v": 1}, list(range(65))], r"longer than 64"),
    ("outputs", [1.0], r"output must be an integer"),
    ("outputs", [9], r"output v9 is not a defined value"),
])
def test_from_json_rejects_malformed_fields(path, value, match):
    with pytest.raises(ProgramError, match=match):
        load(edited(path, value))


def test_errors_say_where():
    bad = edited("instrs.1", {"op": "narrow", "args": [{"v": 0}, 3, 0, 1]})
    with pytest.raises(ProgramError, match=r"^instruction 1 \(narrow\): dim must be .* got 3$"):
        load(bad)
    assert Ref(3).__str__() == "v3"
