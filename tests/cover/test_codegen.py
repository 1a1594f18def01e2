"""codegen.function_source / program_to_python mean the same thing as the interpreter."""

from __future__ import annotations

import ast
import subprocess
import sys

import hypothesis.strategies as st
import pytest
import torch
from _helpers import I, R, assert_same_outputs, exec_function, inp, prog, run
from hypothesis import given, settings

from shapefuzz.program import Program, codegen, interp
from shapefuzz.strategies import programs


def eager(program: Program, forced=frozenset()):
    """('ok', outputs) or ('error', exception) for the interpreter."""
    try:
        env = interp.run(program, interp.make_inputs(program.inputs), forced_general=forced)
    except Exception as e:
        return "error", e
    return "ok", [env[o] for o in program.outputs]


def from_source(program: Program, forced=frozenset()):
    f = exec_function(codegen.function_source(program, forced_general=forced))
    try:
        return "ok", list(f(*interp.make_inputs(program.inputs)))
    except Exception as e:
        return "error", e


def assert_agree(program: Program, forced=frozenset()) -> str:
    (k1, r1), (k2, r2) = eager(program, forced), from_source(program, forced)
    assert k1 == k2, (program.pretty(), r1, r2)
    if k1 == "ok":
        assert_same_outputs(program, r1, r2, program.undefined_data())
    else:
        # both raise; the same kind of error (a torch RuntimeError, an unpacking ValueError ...)
        assert type(r1) is type(r2), (program.pretty(), r1, r2)
    return k1


def branch_positions(p: Program) -> list[int]:
    return [k for k, ins in enumerate(p.instrs) if ins.op == "branch"]


@settings(max_examples=80)
@given(programs(), st.data())
def test_source_agrees_with_interpreter(p, data):
    assert_agree(p)
    positions = branch_positions(p)
    if positions:
        forced = frozenset(data.draw(st.sets(st.sampled_from(positions), min_size=1)))
        assert_agree(p, forced)


@settings(max_examples=40)
@given(programs(families=("branch", "split", "datadep")))
def test_source_agrees_on_branchy_programs(p):
    assert_agree(p)
    assert_agree(p, frozenset(branch_positions(p)))


# ---- every op, hand-written, along non-leading dims ----------------------------------------------
# v0: int (2, 3), v1: bool (2, 3), v2: float (2, 1), v3 = v0.shape[1] = 3, v4 = v3 // 2 = 1
HAND_INPUTS = [inp(range(6), (2, 3)), inp([True, False, True, False, False, True], (2, 3)),
               inp([0.5, -2.0], (2, 1))]
HAND_PRE = [I("size", R(0), 1), I("binop", "//", R(3), 2)]
HAND = {
    "add": [I("add", R(0), R(2))], "mul": [I("mul", R(2), R(0))], "cast": [I("cast", R(1), "int")],
    "sum": [I("sum", R(1), 1, True)], "mean": [I("mean", R(2), 1, False)],
    "nonzero": [I("nonzero", R(1))], "unique": [I("unique", R(0), None)], "pad": [I("pad", R(0), (R(4), -1))], "mask": [I("mask", R(2), "<=", -2.0)],
    "masked_select": [I("masked_select", R(0), R(1))],
    "index_select": [I("arange", R(4)), I("index_select", R(0), 1, R(5))],
    "arange": [I("arange", R(3))], "zeros": [I("zeros", (R(4), R(3)))], "ones": [I("ones", (R(3),))],
    "empty": [I("empty", (2, R(4)))],
    "cat": [I("cat", (R(0), R(0)), 1)],
    "split": [I("binop", "-", R(3), R(4)), I("split", R(0), (R(4), R(5)), 1, n_out=2)],
    "chunk": [I("chunk", R(0), 2, 1, n_out=2)], "unbind": [I("unbind", R(0), 1, n_out=3)],
    "reshape": [I("reshape", R(0), (R(3), -1))], "view": [I("view", R(0), (-1, R(3), 1))],
    "flip": [I("flip", R(0), (1,))], "narrow": [I("narrow", R(0), 1, R(4), R(4))],
    "select": [I("select", R(0), 1, -1)],
    "slice": [I("slice", R(0), 1, R(4), None), I("slice", R(0), 1, None, -1),
              I("slice", R(0), 1, -7, R(3))],
    "expand": [I("expand", R(2), (3, -1, R(3)))], "squeeze": [I("squeeze", R(2), 1)],
    "unsqueeze": [I("unsqueeze", R(0), 2)], "permute": [I("permute", R(0), (1, 0))],
    "transpose": [I("transpose", R(0), 1, 0)], "repeat": [I("repeat", R(2), (2, R(3)))],
    "size": [I("size", R(2), 1)], "numel": [I("numel", R(1))], "item": [I("item", R(1), "sum")],
    "binop": [I("binop", "%", R(3), 2), I("binop", "max", -1, R(4)), I("binop", "min", R(3), R(4))],
    "check": [I("check", "!=", R(3), R(4), n_out=0)],
    "check_is_size": [I("check_is_size", R(4), n_out=0)],
    "branch": [I("branch", "if", "slice_all", R(0), 1, R(4)),
               I("branch", "guard_or_true", "cat_empty", R(0), R(0), 1),
               I("branch", "guard_size_oblivious", "slice_all", R(0), 0, 1)],
    "matmul": [I("transpose", R(2), 0, 1), I("matmul", R(2), R(5))],
    "bmm": [I("unsqueeze", R(2), 0), I("transpose", R(5), 1, 2), I("bmm", R(5), R(6))],
    "baddbmm": [I("unsqueeze", R(2), 0), I("transpose", R(5), 1, 2), I("ones", (R(4), 2, 1)),
                I("baddbmm", R(7), R(5), R(6))],
    "sdpa": [I("unsqueeze", R(2), 0), I("sdpa", R(5), R(5), R(5), "causal")],
    "flex_attention": [I("unsqueeze", R(2), 0), I("unsqueeze", R(5), 0),
                       I("flex_attention", R(6), R(6), R(6), "causal"),
                       I("narrow", R(6), 2, 0, R(4)),
                       I("flex_attention", R(6), R(8), R(8), "relative")],
    "cond": [I("cond", R(0), R(3), ">", 2, "halves"), I("cond", R(2), R(4), "==", 1, "scale")],
    "full": [I("full", (R(4), R(3)), 1.5), I("full", (R(3),), R(4)), I("full", (2,), -2)],
    "new_full": [I("new_full", R(0), (R(3),), R(4)), I("new_full", R(2), (R(4), 2), 0.5)],
    "bool_index": [I("bool_index", R(0), R(1)), I("select", R(1), 1, 0), I("bool_index", R(2), R(6))],
    "int_index": [I("int_index", R(0), R(4)), I("int_index", R(0), -2)],
    "tensor_index": [I("arange", R(4)), I("tensor_index", R(0), R(5)), I("int_index", R(0), R(4)),
                     I("mask", R(7), ">", 3), I("nonzero", R(8)), I("tensor_index", R(7), R(9))],
    "tolist": [I("select", R(0), 0, 1), I("tolist", R(5), n_out=3)],
    "cond_int": [I("cond_int", "int", ">", R(3), 2, 1, 0), I("cond_int", "sym_ite", "<=", R(4), 0, 3, 1),
                 I("cond_int", "sym_not", "==", R(3), 3, 4, 2)],
    "cond_tensor": [I("cond_tensor", "float", ">", R(3), 2, R(2), None),
                    I("cond_tensor", "tensor", "==", R(4), 1, None, None),
                    I("cond_tensor", "where", "<", R(3), R(4), R(0), R(1))],
}


def test_hand_table_covers_every_op():
    from shapefuzz.ops import all_ops

    assert set(HAND) == set(all_ops())


@pytest.mark.parametrize("op", sorted(HAND))
def test_source_agrees_on_every_op(op):
    instrs = HAND_PRE + HAND[op]
    n = len(HAND_INPUTS) + sum(i.n_out for i in instrs)
    p = prog(HAND_INPUTS, instrs, outputs=tuple(range(len(HAND_INPUTS), n)))
    assert assert_agree(p) == "ok"
    branches = branch_positions(p)
    if branches:
        assert assert_agree(p, frozenset(branches)) == "ok"


# ---- error agreement on hand-written failing programs -------------------------------------------
X7 = inp(range(7))


@pytest.mark.parametrize("instrs, outputs", [
    ([I("narrow", R(0), 0, 5, 4)], None),                              # out of range
    ([I("split", R(0), 3, 0, n_out=2)], (1,)),                         # too many pieces
    ([I("split", R(0), 3, 0, n_out=4)], (1,)),                         # too few pieces
    ([I("unbind", R(0), 0, n_out=0)], (0,)),                           # 7 pieces, none bound
    ([I("size", R(0), 0), I("check", ">", R(1), 7, n_out=0)], (1,)),   # false torch._check
    ([I("item", R(0), "first"), I("arange", R(1)), I("select", R(2), 0, 9)], None),
    ([I("reshape", R(0), (2, -1))], None),
])
def test_source_and_interpreter_fail_alike(instrs, outputs):
    p = prog([X7], instrs, outputs)
    assert assert_agree(p) == "error"


def test_unbind_binding_no_values_is_unpacked():
    """Regression: `n_out=0` multi-output ops used to be emitted as a bare call, which never
    failed, while the interpreter raised."""
    p = prog([X7], [I("unbind", R(0), 0, n_out=0)], (0,))
    assert "() = torch.unbind(v0, 0)" in codegen.function_source(p)
    empty = prog([inp([], (0, 2), dtype="int")], [I("unbind", R(0), 0, n_out=0)], (0,))
    assert assert_agree(empty) == "ok"


# ---- forced general arms ------------------------------------------------------------------------
def test_function_source_emits_the_forced_general_arm():
    x = inp([10, 11, 12, 13, 14])
    p = prog([x], [I("size", R(0), 0), I("branch", "guard_or_false", "slice_all", R(0), 0, R(1)),
                   I("branch", "guard_or_true", "max", R(1), 2)], outputs=(2, 3))
    plain = codegen.function_source(p)
    assert "    if guard_or_false(v1 >= v0.shape[0]):\n        v2 = v0\n    else:\n        v2 = v0[:v1]" in plain
    assert "    if guard_or_true(v1 < 2):\n        v3 = torch.sym_max(v1, 2)\n    else:\n        v3 = v1" in plain

    forced = codegen.function_source(p, forced_general=frozenset({1}))
    assert "    v2 = v0[:v1]  # fallback arm, as traced" in forced
    assert "guard_or_false" not in forced and "if guard_or_true(v1 < 2):" in forced

    both = codegen.function_source(p, forced_general=frozenset({1, 2}))
    assert "    v3 = torch.sym_max(v1, 2)  # fallback arm, as traced" in both
    assert "if " not in both

    # behaviour: the condition holds, so unforced returns the input itself, forced a slice of it
    (xt,) = interp.make_inputs(p.inputs)
    assert exec_function(plain)(xt)[0] is xt
    out = exec_function(forced)(xt)[0]
    assert out is not xt and torch.equal(out, xt)
    for fg in (frozenset(), frozenset({1}), frozenset({2}), frozenset({1, 2})):
        assert_agree(p, fg)


def test_forced_general_source_of_every_pattern_agrees():
    from shapefuzz.ops.branch import MODES, PATTERNS

    x, y = inp([10, 11, 12, 13, 14]), inp([], dtype="int")
    operands = {"slice_all": (R(0), 0, R(2)), "narrow_full": (R(0), 0, R(2)),
                "cat_empty": (R(0), R(1), 0)}
    for mode in MODES:
        for pat in sorted(PATTERNS):
            p = prog([x, y], [I("size", R(0), 0), I("branch", mode, pat, *operands.get(pat, (R(2), 5)))])
            for fg in (frozenset(), frozenset({1})):
                assert assert_agree(p, fg) == "ok"
            assert "fallback arm" in codegen.function_source(p, forced_general=frozenset({1}))


# ---- the standalone script -----------------------------------------------------------------------
def script_program() -> Program:
    return prog(
        [inp([1.5, -2.0, 0.0, 3.25, 7.0, -1.0], (2, 3), dims=("static", "unbacked")),
         inp([True, False, True])],
        [I("size", R(0), 1),                                   # v2 = 3
         I("nonzero", R(1)),                                   # v3
         I("mask", R(0), ">", 0.5),                            # v4
         I("masked_select", R(0), R(4)),                       # v5
         I("split", R(0), (1, 2), 1, n_out=2),                 # v6, v7
         I("branch", "guard_or_true", "floordiv_small", R(2), 2),  # v8 = 3 // 2
         I("item", R(1), "sum"),                               # v9 = 2
         I("zeros", (R(9), R(8)))],                            # v10
        outputs=(3, 5, 7, 8, 10),
    )


def test_program_to_python_runs_standalone(tmp_path):
    p = script_program()
    src = codegen.program_to_python(p)
    assert "shapefuzz" not in src
    ast.parse(src)
    script = tmp_path / "repro.py"
    script.write_text(src)
    res = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    env = run(p)
    expected = tuple(env[o] for o in p.outputs)
    assert res.stdout.strip() == str(expected)


def test_to_python_inputs_reproduce_the_data():
    p = script_program()
    ns = {"torch": torch}
    exec(codegen.inputs_source(p.inputs), ns)
    for got, want in zip(ns["inputs"], interp.make_inputs(p.inputs)):
        assert got.dtype == want.dtype and torch.equal(got, want)
    assert "# x0: static, unbacked" in codegen.inputs_source(p.inputs)
