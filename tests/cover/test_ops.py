"""Eager semantics of every op family on hand-written programs with known results."""

from __future__ import annotations

import pathlib
import re

import pytest
import torch
from _helpers import I, R, inp, outputs, prog, run

from shapefuzz.ops import all_ops, families
from shapefuzz.ops.branch import MODES, PATTERNS
from shapefuzz.ops.scalar import BINOPS

T = torch.tensor


def out1(p):
    (o,) = outputs(p)
    return o


def test_every_op_has_a_hand_written_program_here():
    """A newly registered op must get known-result tests in this module."""
    written = set(re.findall(r'\bI\("(\w+)"', pathlib.Path(__file__).read_text()))
    assert set(all_ops()) - written == set()
    assert {all_ops()[n].family for n in written & set(all_ops())} == set(families())


# ---- scalar / symint ---------------------------------------------------------------------------
def test_size_and_numel():
    p = prog([inp(range(6), (2, 3))], [I("size", R(0), 0), I("size", R(0), 1), I("numel", R(0))],
             outputs=(1, 2, 3))
    assert outputs(p) == [2, 3, 6]


@pytest.mark.parametrize("op, a, b, want", [
    ("+", 7, 2, 9), ("-", 7, 9, -2), ("*", 7, 3, 21),
    ("//", 7, 2, 3), ("//", -7, 2, -4), ("%", 7, 3, 1), ("%", -7, 3, 2),
    ("max", 7, 9, 9), ("min", 7, 9, 7),
])
def test_binop(op, a, b, want):
    # a comes from a size (a SymInt when traced); negative a through a subtraction
    x = inp([0] * abs(a))
    instrs = [I("size", R(0), 0)]
    if a < 0:
        instrs.append(I("binop", "-", 0, R(1)))
    instrs.append(I("binop", op, R(len(instrs)), b))
    assert out1(prog([x], instrs)) == want
    assert set(BINOPS) == {"+", "-", "*", "//", "%", "max", "min"}


# ---- datadep --------------------------------------------------------------------------------------
@pytest.mark.parametrize("mask, want", [
    ([False, False, False, False], []),
    ([False, False, True, False], [[2]]),
    ([True, True, True, True], [[0], [1], [2], [3]]),
])
def test_nonzero_1d(mask, want):
    o = out1(prog([inp(mask)], [I("nonzero", R(0))]))
    assert o.shape == (len(want), 1) and o.dtype == torch.int64
    assert o.tolist() == want


def test_unique_flat_and_along_a_dim():
    o = out1(prog([inp([3, 1, 3, 0, 1, 1], (2, 3))], [I("unique", R(0), None)]))
    assert o.tolist() == [0, 1, 3] and o.dtype == torch.int64
    o = out1(prog([inp([1, 2, 1, 2, 0, 0], (3, 2))], [I("unique", R(0), 0)]))
    assert o.tolist() == [[0, 0], [1, 2]]
    o = out1(prog([inp([True, True, True])], [I("unique", R(0), None)]))
    assert o.tolist() == [True]
    with pytest.raises(RuntimeError, match="0 sized dimensions"):  # why generation never asks for a dim
        out1(prog([inp([], (0, 2))], [I("unique", R(0), 1)]))


def test_nonzero_2d_and_int_masks():
    o = out1(prog([inp([True, False, False, True], (2, 2))], [I("nonzero", R(0))]))
    assert o.tolist() == [[0, 0], [1, 1]]
    o = out1(prog([inp([0, 5, 0, 0, 7, 0], (2, 3))], [I("nonzero", R(0))]))
    assert o.tolist() == [[0, 1], [1, 1]]
    o = out1(prog([inp([False] * 6, (2, 3))], [I("nonzero", R(0))]))
    assert o.shape == (0, 2)


def test_mask_masked_select_index_select():
    x = inp([3, -1, 2, 0, 5])
    p = prog([x], [I("mask", R(0), ">", 1), I("masked_select", R(0), R(1)),
                   I("arange", 2), I("index_select", R(0), 0, R(3))], outputs=(1, 2, 4))
    m, sel, idx = outputs(p)
    assert m.tolist() == [True, False, True, False, True]
    assert sel.tolist() == [3, 2, 5]
    assert idx.tolist() == [3, -1]
    # index_select through nonzero: the positions where the mask holds
    p = prog([x], [I("mask", R(0), "<=", 0), I("nonzero", R(1)), I("select", R(2), 1, 0),
                   I("index_select", R(0), 0, R(3))])
    assert out1(p).tolist() == [-1, 0]


@pytest.mark.parametrize("mode, data, want", [
    ("sum", [3, -1, 2], 4), ("first", [3, -1, 2], 3), ("max", [3, -1, 2], 3),
    ("sum", [True, False, True], 2), ("first", [-5], -5), ("max", [-5, -9], -5),
])
def test_item_modes(mode, data, want):
    o = out1(prog([inp(data)], [I("item", R(0), mode)]))
    assert type(o) is int and o == want


def test_item_first_on_2d_and_failures():
    assert out1(prog([inp([7, 8, 9, 1], (2, 2))], [I("item", R(0), "first")])) == 7
    with pytest.raises((IndexError, RuntimeError)):
        run(prog([inp([], dtype="int")], [I("item", R(0), "first")]))


# ---- factory --------------------------------------------------------------------------------------
def test_factories_from_symints():
    p = prog([inp(range(6), (2, 3))],
             [I("size", R(0), 1), I("arange", R(1)), I("zeros", (R(1), 2)), I("ones", (2,)),
              I("empty", (R(1), 0))], outputs=(2, 3, 4, 5))
    ar, z, o, e = outputs(p)
    assert ar.tolist() == [0, 1, 2] and ar.dtype == torch.int64
    assert z.shape == (3, 2) and z.dtype == torch.float32 and not z.any()
    assert o.tolist() == [1.0, 1.0]
    assert e.shape == (3, 0)
    assert p.undefined_data() == frozenset({5})


def test_full_and_new_full_take_their_dtype_from_the_fill():
    p = prog([inp(range(6), (2, 3)), inp([0.5, 1.5])],
             [I("size", R(0), 1), I("full", (R(2), 2), 1.5), I("full", (R(2),), R(2)),
              I("full", (2,), -2), I("new_full", R(0), (1, R(2)), 7), I("new_full", R(1), (R(2),), -1.0)],
             outputs=(3, 4, 5, 6, 7))
    f, g, h, n, m = outputs(p)
    assert f.shape == (3, 2) and f.dtype == torch.float32 and (f == 1.5).all()
    assert g.tolist() == [3, 3, 3] and g.dtype == torch.int64
    assert h.tolist() == [-2, -2] and h.dtype == torch.int64
    assert n.tolist() == [[7, 7, 7]] and n.dtype == torch.int64
    assert m.tolist() == [-1.0, -1.0, -1.0] and m.dtype == torch.float32
    with pytest.raises(RuntimeError):  # a negative size, as torch.full rejects it
        run(prog([inp(range(3))], [I("size", R(0), 0), I("binop", "-", 1, R(1)), I("full", (R(2),), 0.0)]))


# ---- indexing ---------------------------------------------------------------------------------------
def test_bool_index_selects_rows_or_elements():
    x = inp(range(6), (3, 2))
    p = prog([x, inp([True, False, True])],
             [I("bool_index", R(0), R(1)), I("mask", R(0), ">", 2), I("bool_index", R(0), R(3))],
             outputs=(2, 4))
    rows, elems = outputs(p)
    assert rows.tolist() == [[0, 1], [4, 5]]
    assert elems.tolist() == [3, 4, 5]
    with pytest.raises(IndexError):  # a mask that does not match x's leading dims
        run(prog([x, inp([True, False])], [I("bool_index", R(0), R(1))]))


def test_int_and_tensor_index():
    x = inp(range(6), (3, 2))
    p = prog([x, inp([2, 0, 2, 1])],
             [I("item", R(1), "first"), I("int_index", R(0), R(2)), I("int_index", R(0), -3),
              I("tensor_index", R(0), R(1))], outputs=(3, 4, 5))
    a, b, c = outputs(p)
    assert a.tolist() == [4, 5] and b.tolist() == [0, 1]
    assert c.tolist() == [[4, 5], [0, 1], [4, 5], [2, 3]]
    with pytest.raises(IndexError):
        run(prog([x], [I("int_index", R(0), 3)]))


def test_tolist_unpacks_one_symint_per_element():
    p = prog([inp([4, -1, 7])], [I("tolist", R(0), n_out=3), I("binop", "+", R(1), R(3))],
             outputs=(1, 2, 3, 4))
    assert outputs(p) == [4, -1, 7, 11]
    with pytest.raises(ValueError):  # binds 2 values, the tensor holds 3
        run(prog([inp([4, -1, 7])], [I("tolist", R(0), n_out=2)], outputs=(1,)))


# ---- conditions as values ---------------------------------------------------------------------------
@pytest.mark.parametrize("mode, n, want", [
    ("int", 3, 1), ("int", 2, 0),
    ("sym_ite", 3, 5), ("sym_ite", 2, 9),
    ("sym_not", 3, 9), ("sym_not", 2, 5),
])
def test_cond_int(mode, n, want):
    p = prog([inp(range(n))], [I("size", R(0), 0), I("cond_int", mode, ">", R(1), 2, 5, 9)])
    assert out1(p) == want


@pytest.mark.parametrize("n, holds", [(3, True), (2, False)])
def test_cond_tensor(n, holds):
    x = inp(range(1, n + 1))
    p = prog([x], [I("size", R(0), 0), I("cond_tensor", "float", ">", R(1), 2, R(0), None),
                   I("cond_tensor", "tensor", ">", R(1), 2, None, None),
                   I("mask", R(0), ">", 1), I("cond_tensor", "where", ">", R(1), 2, R(0), R(4))],
             outputs=(2, 3, 5))
    scaled, t, w = outputs(p)
    assert scaled.tolist() == [float(v * holds) for v in range(1, n + 1)] and scaled.dtype == torch.float32
    assert t.dtype == torch.bool and t.dim() == 0 and t.item() is holds
    assert w.tolist() == [int(holds)] + list(range(2, n + 1)) and w.dtype == torch.int64


# ---- layout / reshape -----------------------------------------------------------------------------
X23 = list(range(6))


@pytest.mark.parametrize("ins, want", [
    (I("narrow", R(0), 1, 1, 2), [[1, 2], [4, 5]]),
    (I("narrow", R(0), 0, 1, 0), []),
    (I("select", R(0), 1, -1), [2, 5]),
    (I("select", R(0), 0, 1), [3, 4, 5]),
    (I("slice", R(0), 1, 1, None), [[1, 2], [4, 5]]),
    (I("slice", R(0), 1, None, -1), [[0, 1], [3, 4]]),
    (I("slice", R(0), 1, -7, 99), [[0, 1, 2], [3, 4, 5]]),   # out-of-range bounds clamp
    (I("slice", R(0), 0, 5, None), []),
    (I("flip", R(0), (1,)), [[2, 1, 0], [5, 4, 3]]),
    (I("flip", R(0), (0, 1)), [[5, 4, 3], [2, 1, 0]]),
    (I("transpose", R(0), 0, 1), [[0, 3], [1, 4], [2, 5]]),
    (I("permute", R(0), (1, 0)), [[0, 3], [1, 4], [2, 5]]),
    (I("unsqueeze", R(0), 1), [[[0, 1, 2]], [[3, 4, 5]]]),
    (I("repeat", R(0), (1, 2)), [[0, 1, 2, 0, 1, 2], [3, 4, 5, 3, 4, 5]]),
    (I("reshape", R(0), (-1,)), [0, 1, 2, 3, 4, 5]),
    (I("reshape", R(0), (3, -1)), [[0, 1], [2, 3], [4, 5]]),
    (I("view", R(0), (-1, 1)), [[0], [1], [2], [3], [4], [5]]),
])
def test_layout_ops(ins, want):
    o = out1(prog([inp(X23, (2, 3))], [ins]))
    assert o.tolist() == want


def test_layout_ops_with_symint_arguments():
    # narrow(x, 1, s // 2, s - s // 2) with s = x.shape[1] = 5
    p = prog([inp(range(10), (2, 5))],
             [I("size", R(0), 1), I("binop", "//", R(1), 2), I("binop", "-", R(1), R(2)),
              I("narrow", R(0), 1, R(2), R(3))])
    assert out1(p).tolist() == [[2, 3, 4], [7, 8, 9]]


def test_pad_grows_and_cuts_the_last_dims():
    o = out1(prog([inp(range(6), (2, 3))], [I("pad", R(0), (1, 0))]))
    assert o.tolist() == [[0, 0, 1, 2], [0, 3, 4, 5]]
    o = out1(prog([inp(range(6), (2, 3))], [I("pad", R(0), (-1, 1, 0, 1))]))
    assert o.tolist() == [[1, 2, 0], [4, 5, 0], [0, 0, 0]]
    o = out1(prog([inp(range(6), (2, 3))], [I("size", R(0), 1), I("binop", "//", R(1), 2),
                                            I("pad", R(0), (R(2), R(2)))]))
    assert o.shape == (2, 5)


def test_expand_and_squeeze():
    p = prog([inp([1.0, 2.0], (2, 1))],
             [I("expand", R(0), (3, -1, 4)), I("squeeze", R(0), 1), I("squeeze", R(0), 0)],
             outputs=(1, 2, 3))
    e, sq, noop = outputs(p)
    assert e.shape == (3, 2, 4) and e[2, 1].tolist() == [2.0] * 4
    assert sq.tolist() == [1.0, 2.0]
    assert noop.shape == (2, 1)  # squeeze of a non-1 dim is a no-op (typed for the size-1 case)


def test_view_fails_on_non_contiguous():
    p = prog([inp(X23, (2, 3))], [I("transpose", R(0), 0, 1), I("view", R(1), (-1,))])
    with pytest.raises(RuntimeError):
        run(p)


# ---- split family ---------------------------------------------------------------------------------
def test_split_by_chunk_size():
    p = prog([inp(range(7))], [I("split", R(0), 3, 0, n_out=3)], outputs=(1, 2, 3))
    assert [t.tolist() for t in outputs(p)] == [[0, 1, 2], [3, 4, 5], [6]]


def test_split_by_symint_sizes():
    # split(x, [2, s - 2]) along dim 1, s = 5
    p = prog([inp(range(10), (2, 5))],
             [I("size", R(0), 1), I("binop", "-", R(1), 2), I("split", R(0), (2, R(2)), 1, n_out=2)],
             outputs=(3, 4))
    a, b = outputs(p)
    assert a.shape == (2, 2) and b.shape == (2, 3)
    assert b.tolist() == [[2, 3, 4], [7, 8, 9]]


def test_split_piece_count_must_match_n_out():
    with pytest.raises(ValueError, match="not enough values to unpack"):
        run(prog([inp(range(7))], [I("split", R(0), 3, 0, n_out=4)], outputs=(1,)))
    with pytest.raises(ValueError, match="too many values to unpack"):
        run(prog([inp(range(7))], [I("split", R(0), 3, 0, n_out=2)], outputs=(1,)))
    with pytest.raises(RuntimeError):  # sizes that do not add up
        run(prog([inp(range(7))], [I("split", R(0), (2, 2), 0, n_out=2)], outputs=(1,)))


def test_chunk_and_unbind():
    p = prog([inp(range(5))], [I("chunk", R(0), 2, 0, n_out=2)], outputs=(1, 2))
    assert [t.tolist() for t in outputs(p)] == [[0, 1, 2], [3, 4]]
    p = prog([inp(range(6), (2, 3))], [I("unbind", R(0), 1, n_out=3)], outputs=(1, 2, 3))
    assert [t.tolist() for t in outputs(p)] == [[0, 3], [1, 4], [2, 5]]
    p = prog([inp([], (0, 3), dtype="int")], [I("unbind", R(0), 0, n_out=0)], outputs=(0,))
    assert out1(p).shape == (0, 3)  # no pieces: binding none is right


# ---- cat / reduce / pointwise ---------------------------------------------------------------------
def test_cat():
    p = prog([inp(range(4), (2, 2)), inp([9, 8], (2, 1))], [I("cat", (R(0), R(1), R(1)), 1)])
    assert out1(p).tolist() == [[0, 1, 9, 9], [2, 3, 8, 8]]
    with pytest.raises(RuntimeError):
        run(prog([inp(range(4), (2, 2)), inp([9, 8], (2, 1))], [I("cat", (R(0), R(1)), 0)]))


def test_reductions():
    p = prog([inp([True, False, True, True], (2, 2)), inp([1.0, 2.0, 3.0, 5.0], (2, 2))],
             [I("sum", R(0), 1, False), I("sum", R(1), 0, True), I("mean", R(1), 1, False)],
             outputs=(2, 3, 4))
    s, k, m = outputs(p)
    assert s.tolist() == [1, 2] and s.dtype == torch.int64
    assert k.tolist() == [[4.0, 7.0]]
    assert m.tolist() == [1.5, 4.0]


def test_pointwise_broadcast_and_cast():
    p = prog([inp([1, 2, 3], (3, 1)), inp([0.5, -1.0])],
             [I("add", R(0), R(1)), I("mul", R(0), R(0)), I("cast", R(1), "bool"), I("cast", R(1), "int")],
             outputs=(2, 3, 4, 5))
    a, m, b, i = outputs(p)
    assert a.shape == (3, 2) and a.dtype == torch.float32 and a[2].tolist() == [3.5, 2.0]
    assert m.tolist() == [[1], [4], [9]] and m.dtype == torch.int64
    assert b.tolist() == [True, True]
    assert i.tolist() == [0, -1]


# ---- check ------------------------------------------------------------------------------------------
def test_checks():
    ok = prog([inp([1, 2, 3])], [I("size", R(0), 0), I("check", "==", R(1), 3, n_out=0),
                                 I("check_is_size", R(1), n_out=0)], outputs=(1,))
    assert outputs(ok) == [3]
    bad = prog([inp([1, 2, 3])], [I("size", R(0), 0), I("check", "<", R(1), 3, n_out=0)], outputs=(1,))
    with pytest.raises(RuntimeError):
        run(bad)
    neg = prog([inp([-4])], [I("item", R(0), "sum"), I("check_is_size", R(1), n_out=0)], outputs=(1,))
    with pytest.raises(RuntimeError):
        run(neg)


# ---- branches -----------------------------------------------------------------------------------------
# For every pattern: a program (operands drawn from x = arange-like input of 5 elements, and y),
# its condition's truth, and the results of the fast and general arms.
def branch_case(pattern: str, holds: bool):
    x = inp([10, 11, 12, 13, 14])
    size = I("size", R(0), 0)  # v1 = 5 (v2 in the cat case: two inputs)
    if pattern in ("max", "min", "eq", "floordiv_small"):
        b = {("max", True): 3, ("max", False): 7, ("min", True): 7, ("min", False): 3,
             ("eq", True): 5, ("eq", False): 4, ("floordiv_small", True): 7,
             ("floordiv_small", False): 2}[pattern, holds]
        fast = 0 if pattern == "floordiv_small" else 5
        general = {"max": max(5, b), "min": min(5, b), "eq": b, "floordiv_small": 5 // b}[pattern]
        return [x], [size], (R(1), b), fast, general
    if pattern in ("slice_all", "narrow_full"):
        n = {("slice_all", True): 6, ("slice_all", False): 3,
             ("narrow_full", True): 5, ("narrow_full", False): 3}[pattern, holds]
        whole = [10, 11, 12, 13, 14]
        return [x], [size], (R(0), 0, n), whole, whole[:n]
    assert pattern == "cat_empty"
    y = inp([] if holds else [1, 2], dtype="int")
    whole = [10, 11, 12, 13, 14]
    return [x, y], [], (R(0), R(1), 0), whole, whole + list(y.data)


CASES = [(mode, pat, holds) for mode in MODES for pat in sorted(PATTERNS) for holds in (True, False)]


def value(v):
    return v.tolist() if isinstance(v, torch.Tensor) else v


@pytest.mark.parametrize("mode, pattern, holds", CASES)
def test_branch_takes_the_arm_its_condition_says(mode, pattern, holds):
    inputs, pre, operands, fast, general = branch_case(pattern, holds)
    p = prog(inputs, pre + [I("branch", mode, pattern, *operands)])
    pos = len(pre)
    seen = []
    env = run(p, on_branch=lambda k, f: seen.append((k, f)))
    # In eager every size is concrete, so each mode decides exactly by the condition.
    assert seen == [(pos, holds)]
    assert value(env[p.outputs[0]]) == (fast if holds else general)
    # Forcing the general arm: reported as such, and the general arm's value.
    seen.clear()
    env = run(p, forced_general=frozenset({pos}), on_branch=lambda k, f: seen.append((k, f)))
    assert seen == [(pos, False)]
    assert value(env[p.outputs[0]]) == general


def test_patterns_and_modes_are_all_exercised():
    assert set(MODES) == {"if", "guard_or_false", "guard_or_true", "statically_known_true",
                          "statically_known_false", "guard_size_oblivious"}
    assert {c[1] for c in CASES} == set(PATTERNS) == {
        "max", "min", "eq", "floordiv_small", "slice_all", "narrow_full", "cat_empty"}


@pytest.mark.parametrize("pattern", ["slice_all", "narrow_full", "cat_empty"])
def test_forced_general_arm_builds_a_new_tensor(pattern):
    """When the condition holds both arms agree in value; the fast arm is the operand itself."""
    inputs, pre, operands, fast, _ = branch_case(pattern, True)
    p = prog(inputs, pre + [I("branch", "guard_or_false", pattern, *operands)])
    env = run(p)
    assert env[p.outputs[0]] is env[0]
    env = run(p, forced_general=frozenset({len(pre)}))
    assert env[p.outputs[0]] is not env[0] and env[p.outputs[0]].tolist() == fast


def test_forced_general_uses_instruction_positions():
    x = inp([10, 11, 12, 13, 14])
    p = prog([x], [I("size", R(0), 0),                             # pos 0, v1 = 5
                   I("branch", "if", "eq", R(1), 5),               # pos 1, v2 (holds: fast, 5)
                   I("branch", "guard_or_true", "eq", R(1), 5)],   # pos 2, v3 (holds: fast, 5)
             outputs=(2, 3))
    seen = []
    env = run(p, forced_general=frozenset({2}), on_branch=lambda k, f: seen.append((k, f)))
    assert seen == [(1, True), (2, False)]
    assert env[2] == 5 and env[3] == 5
    # eq's general arm is the second operand: distinguishable when it is a different literal
    q = prog([x], [I("size", R(0), 0), I("branch", "statically_known_true", "floordiv_small", R(1), 9)])
    assert outputs(q) == [0] and outputs(q, forced_general=frozenset({1})) == [5 // 9]
    seen.clear()
    run(q, forced_general=frozenset({0}), on_branch=lambda k, f: seen.append((k, f)))
    assert seen == [(1, True)]  # position 0 is the size, not the branch


# ---- linalg (seed 001) --------------------------------------------------------------------------
def test_matmul_bmm_baddbmm():
    x = inp(range(6), (2, 3), dtype="float")
    p = prog([x], [I("size", R(0), 1), I("ones", (R(1), 2)), I("matmul", R(0), R(2)),
                   I("transpose", R(0), 0, 1), I("matmul", R(0), R(4))], outputs=(3, 5))
    mv, gram = outputs(p)
    assert mv.tolist() == [[3.0, 3.0], [12.0, 12.0]]
    assert gram.tolist() == [[5.0, 14.0], [14.0, 50.0]]
    b = inp(range(12), (2, 2, 3), dtype="float")
    p = prog([b], [I("transpose", R(0), 1, 2), I("bmm", R(0), R(1)), I("ones", (1, 2, 1)),
                   I("baddbmm", R(3), R(0), R(1))], outputs=(2, 4))
    prod, added = outputs(p)
    assert prod.shape == (2, 2, 2) and prod[1].tolist() == [[149.0, 212.0], [212.0, 302.0]]
    assert torch.equal(added, prod + 1)


def test_sdpa_shapes_and_causal_mask():
    q = inp([0.0] * 12, (1, 4, 3))
    p = prog([q], [I("narrow", R(0), 1, 0, 2), I("sdpa", R(0), R(1), R(1), "plain"),
                   I("sdpa", R(0), R(0), R(0), "causal")], outputs=(2, 3))
    short, causal = outputs(p)
    assert short.shape == (1, 4, 3) and causal.shape == (1, 4, 3)
    v = inp(range(4), (1, 4, 1), dtype="float")
    (o,) = outputs(prog([v], [I("sdpa", R(0), R(0), R(0), "causal")]))
    assert o[0, 0, 0].item() == 0.0  # the first query sees only the first key


# ---- control (torch.cond) -------------------------------------------------------------------------
@pytest.mark.parametrize("n, arms, want", [
    (3, "scale", [2, 4, 6]),   # 3 > 2: true arm
    (2, "scale", [2, 3]),      # 2 > 2 is false
    (3, "flip", [3, 2, 1]),
    (3, "halves", [1, 2, 3]),  # both arms equal t
])
def test_cond_picks_the_arm_by_the_predicate(n, arms, want):
    x = inp(range(1, n + 1))
    o = out1(prog([x], [I("size", R(0), 0), I("cond", R(0), R(1), ">", 2, arms)]))
    assert o.tolist() == want


def test_flex_attention_matches_sdpa_and_is_opt_in():
    from shapefuzz.strategies import GenSettings, op_pool

    q = inp([0.5, -1.0, 2.0, 0.0, 1.0, 3.0], (1, 1, 3, 2))
    p = prog([q], [I("flex_attention", R(0), R(0), R(0), "causal"),
                   I("sdpa", R(0), R(0), R(0), "causal")], outputs=(1, 2))
    flex, sdpa = outputs(p)
    assert torch.allclose(flex, sdpa, atol=1e-5)
    # never drawn unless its family is asked for by name
    assert "flex_attention" not in {op.name for op in op_pool(GenSettings())}
    assert "flex_attention" in {op.name for op in op_pool(GenSettings(families=("flex",)))}
