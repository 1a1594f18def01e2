"""The generator asks its own questions of plain values, not of the torch under test: a torch whose
broadcasting (or any eager op) regressed must still get programs, whose eager and traced runs then
show the regression, instead of a campaign that dies in generation (a mutant of
torch._refs._broadcast_shapes once stopped every campaign before its first program)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapefuzz.ops.pointwise import broadcastable
from shapefuzz.strategies import programs

SHAPES = st.lists(st.integers(0, 3), max_size=3)


@settings(max_examples=300, deadline=None)
@given(SHAPES, SHAPES)
def test_broadcastable_is_torchs_rule(a, b):
    try:
        torch.broadcast_shapes(a, b)
        torchs = True
    except RuntimeError:
        torchs = False
    assert broadcastable(a, b) == torchs


def _regressed_broadcast(*shapes):
    raise ValueError("Attempting to broadcast a dimension with negative length!")


@pytest.fixture
def broken_broadcasting(monkeypatch):
    monkeypatch.setattr(torch._refs, "_broadcast_shapes", _regressed_broadcast)


def test_generation_survives_a_torch_whose_broadcasting_raises(broken_broadcasting):
    seen = []

    @settings(max_examples=40, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(programs(families=("pointwise",), max_ops=4))
    def gen(p):
        seen.append(p)

    gen()
    arith = [p for p in seen if any(i.op in ("add", "mul", "sub") for i in p.instrs)]
    assert arith, "no broadcasting program was generated"
