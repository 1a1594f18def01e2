"""Note [pruning] (shapefuzz/program/prune.py): unused inputs and dead instructions go, what the
outputs read and what acts on the ShapeEnv (torch._check) stays."""

from __future__ import annotations

from shapefuzz.program.kinds import load_program
from shapefuzz.program.prune import pruned

X = {"data": [1, 2], "dims": ["dynamic"], "dtype": "int", "name": "x0", "shape": [2]}
Y = {"data": [3], "dims": ["static"], "dtype": "int", "name": "x1", "shape": [1]}


def _p(inputs, instrs, outputs):
    return load_program({"inputs": inputs, "instrs": instrs, "outputs": outputs, "schema": 1})


def test_unused_input_and_dead_instructions_are_removed():
    p = _p([Y, X], [{"args": [{"v": 1}, "sum"], "n_out": 1, "op": "item"},       # v2: dead
                    {"args": [{"v": 1}, 0], "n_out": 1, "op": "size"},          # v3: read
                    {"args": ["+", {"v": 3}, 1], "n_out": 1, "op": "binop"}],   # v4: output
           [4])
    q = pruned(p)
    assert [i.name for i in q.inputs] == ["x0"]  # x1 was read by nothing
    assert [i.op for i in q.instrs] == ["size", "binop"]
    assert str(q.instrs[1].args[1]) == "v1" and q.outputs == (2,)


def test_checks_and_returned_inputs_stay_and_a_clean_program_is_none():
    p = _p([X, Y], [{"args": [{"v": 0}, 0], "n_out": 1, "op": "size"},
                    {"args": [">=", {"v": 2}, 0], "n_out": 0, "op": "check"}], [1])
    assert pruned(p) is None  # the check acts on the ShapeEnv; x1 is an output


def test_candidates_try_each_output_away_with_what_computes_it():
    from shapefuzz.program.prune import candidates

    p = _p([X, Y], [{"args": [{"v": 0}, 0], "n_out": 1, "op": "size"},
                    {"args": [{"v": 1}, "sum"], "n_out": 1, "op": "item"}], [2, 3])
    got = [([i.op for i in c.instrs], [i.name for i in c.inputs], c.outputs) for c in candidates(p)]
    assert got == [(["item"], ["x1"], (1,)), (["size"], ["x0"], (1,))]
