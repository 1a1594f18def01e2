"""Note [root cause at the time] (shapefuzz/program/interp.py): the first wrong instruction of a
trace is judged by each value's symbolic size as torch held it when the value was made, not as
a later check's replacement rewrites it."""

from __future__ import annotations

import sympy
import torch
from _helpers import I, R, inp, prog

from shapefuzz.oracles import check_all
from shapefuzz.program import interp
from shapefuzz.systems.eager import EagerSystem
from shapefuzz.systems.make_fx import MakeFxSystem
from shapefuzz.systems.traced import eager_run, first_divergence

X = inp([0.0] * 19 + [3.0, 0.0, 2.0, 1.0, 0.0], (4, 2, 3), dims=("static",) * 3)
# reports/torch-2.13 row 26 met after a nonzero: infer_size's torch._check(4 == u0) at the last add
# replaces u0 (the nonzero count, 1 on these inputs) by 4, which rewrites the nonzero's own shape
ROW26 = prog([X], [I("size", R(0), 0), I("arange", R(1)), I("mask", R(2), "<", 1), I("nonzero", R(3)),
                   I("select", R(4), 1, 0), I("index_select", R(0), 0, R(5)), I("add", R(4), R(0)),
                   I("add", R(6), R(0))], outputs=[7, 8])
SMALL = prog([inp([1.0, 2.0], (2,), dims=("static",))], [I("size", R(0), 0), I("binop", "+", R(1), 1)])


def test_a_later_replacement_does_not_blame_the_value_it_rewrites():
    eager = EagerSystem().observe(ROW26, "default", [])
    obs = MakeFxSystem().observe(ROW26, "default", [])
    assert obs.outcome.status == "error", "row 26 no longer raises: this torch fixed infer_size"
    assert obs.diverges == () or obs.diverges[0] != "nonzero", obs.diverges
    keys = [f.key for f in check_all(ROW26, eager, [obs]) if f.oracle == "eager-agreement"]
    assert keys and all(":at=pointwise.add" in k and "datadep.nonzero" not in k for k in keys), keys


def _env(values: list, then: list) -> interp.RecordedEnv:
    env = interp.RecordedEnv(values)
    env.then = then
    return env


def test_the_first_value_wrong_when_made_is_blamed():
    """`then` decides: a size wrong when made is the first wrong instruction, and a value that
    reads wrong only now (a later replacement) is not."""
    u = sympy.Symbol("u0")
    x = torch.ones(2)
    real = eager_run(SMALL, frozenset())
    assert [int(v) for v in real[1:]] == [2, 3]
    right, wrong = [x, u, u + 1], [x, u + 5, u + 1]
    assert first_divergence(SMALL, _env(wrong, right), {u: 2}, frozenset(), real) == ()
    got = first_divergence(SMALL, _env(right, wrong), {u: 2}, frozenset(), real)
    assert got[0] == "size" and got[3:] == ("7", "2"), got
