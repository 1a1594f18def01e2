"""Generated torch.cond arms keep cond's contract (same output metadata, strides included):
a transposed operand with one arm copying and one arm keeping its strides used to fail tracing
with "The sorted order of strides of the two branches' output doesn't match" (issue 17)."""

from __future__ import annotations

import torch

from shapefuzz.ops.control import ARMS
from shapefuzz.program.kinds import load_program
from shapefuzz.systems import get_system


def test_every_arm_pair_returns_the_same_strides_on_a_transposed_operand():
    t = torch.arange(6.0).reshape(2, 3).t()
    for name, (_, true_fn, _, false_fn) in ARMS.items():
        a, b = true_fn(t), false_fn(t)
        assert (a.shape, a.stride()) == (b.shape, b.stride()), name


def test_cond_over_a_transposed_operand_traces():
    p = load_program({
        "inputs": [{"data": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "dims": ["dynamic", "dynamic"],
                    "dtype": "float", "name": "x0", "shape": [2, 3]}],
        "instrs": [{"args": [{"v": 0}, 0, 1], "n_out": 1, "op": "transpose"},
                   {"args": [{"v": 1}, 0], "n_out": 1, "op": "size"},
                   {"args": [{"v": 1}, {"v": 2}, ">", 2, "halves"], "n_out": 1, "op": "cond"}],
        "outputs": [3], "schema": 1})
    obs = get_system("make_fx").observe(p, "default", ())
    assert obs.outcome.status == "ok", obs.outcome.short()
