"""Input tensors: shapes with static/dynamic/unbacked dims, and data that makes data-dependent
ops interesting (masks with none, one, some and all true; item values 0, 1, negative, equal to a
size and just past one)."""

from __future__ import annotations

import math
from functools import lru_cache

import hypothesis.strategies as st

from shapefuzz.ops.choices import sampled_from
from shapefuzz.program import InputSpec

from .settings import GenSettings

__all__ = ["data_for", "input_spec", "input_specs"]


@st.composite
def input_spec(draw, settings: GenSettings, name: str, sizes_seen: tuple[int, ...] = ()) -> InputSpec:
    dtype = draw(sampled_from(["float", "int", "bool"]))
    rank = draw(st.integers(0 if dtype == "float" else 1, settings.max_rank))
    size = _size(settings.max_size)
    shape = tuple(draw(size) for _ in range(rank))
    while math.prod(shape) > settings.max_numel:
        shape = shape[:-1]
    dims = tuple(draw(sampled_from(settings.dim_kinds)) for _ in shape)
    data = draw(data_for(dtype, shape, sizes_seen + shape))
    return InputSpec(name, dtype, shape, dims, data)


@lru_cache(maxsize=64)  # one strategy per max_size (Note [cached strategies])
def _size(max_size: int) -> st.SearchStrategy[int]:
    big = st.integers(2, max_size)
    return st.one_of(big, big, big, sampled_from([0, 1]))  # a quarter 0/1 (specialized) sizes


def data_for(dtype: str, shape: tuple[int, ...], sizes: tuple[int, ...] = ()) -> st.SearchStrategy:
    n = math.prod(shape)
    if dtype == "int":
        near = tuple(sorted({v for s in sizes for v in (s, s + 1, s - 1)} | {0, 1, 2, 3, -1, -2}))
        return _data(dtype, n, near)
    return _data(dtype, n, ())


@lru_cache(maxsize=4096)  # Note [cached strategies] (shapefuzz/ops/choices.py)
def _data(dtype: str, n: int, near: tuple[int, ...]) -> st.SearchStrategy:
    if dtype == "float":
        return st.lists(st.integers(-3, 3).map(float), min_size=n, max_size=n).map(tuple)
    if dtype == "int":
        return st.lists(sampled_from(near), min_size=n, max_size=n).map(tuple)
    return _mask(n)


@st.composite
def _mask(draw, n: int) -> tuple[bool, ...]:
    subset = draw(sampled_from(["some", "none", "all", "one"]))
    if subset == "none" or n == 0:
        return (False,) * n
    if subset == "all":
        return (True,) * n
    if subset == "one":
        k = draw(st.integers(0, n - 1))
        return tuple(i == k for i in range(n))
    return tuple(draw(st.lists(st.booleans(), min_size=n, max_size=n)))


@st.composite
def input_specs(draw, settings: GenSettings) -> tuple[InputSpec, ...]:
    n = draw(st.integers(1, settings.max_inputs))
    specs: list[InputSpec] = []
    for k in range(n):
        seen = tuple(s for spec in specs for s in spec.shape)
        specs.append(draw(input_spec(settings, f"x{k}", seen)))
    return tuple(specs)
