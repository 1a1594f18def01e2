"""Input tensors: shapes with static/dynamic/unbacked dims, and data that makes data-dependent
ops interesting (masks with none, one, some and all true; item values 0, 1, negative, equal to a
size and just past one)."""

from __future__ import annotations

import math

import hypothesis.strategies as st

from shapefuzz.program import InputSpec

from .settings import GenSettings

__all__ = ["data_for", "input_spec", "input_specs"]


@st.composite
def input_spec(draw, settings: GenSettings, name: str, sizes_seen: tuple[int, ...] = ()) -> InputSpec:
    dtype = draw(st.sampled_from(["float", "int", "bool"]))
    rank = draw(st.integers(0 if dtype == "float" else 1, settings.max_rank))
    big = st.integers(2, settings.max_size)
    size = st.one_of(big, big, big, st.sampled_from([0, 1]))  # a quarter 0/1 (specialized) sizes
    shape = tuple(draw(size) for _ in range(rank))
    while math.prod(shape) > settings.max_numel:
        shape = shape[:-1]
    dims = tuple(draw(st.sampled_from(settings.dim_kinds)) for _ in shape)
    data = draw(data_for(dtype, shape, sizes_seen + shape))
    return InputSpec(name, dtype, shape, dims, data)


def data_for(dtype: str, shape: tuple[int, ...], sizes: tuple[int, ...] = ()) -> st.SearchStrategy:
    n = math.prod(shape)
    if dtype == "float":
        return st.lists(st.integers(-3, 3).map(float), min_size=n, max_size=n).map(tuple)
    if dtype == "int":
        near = sorted({v for s in sizes for v in (s, s + 1, s - 1)} | {0, 1, 2, 3, -1, -2})
        return st.lists(st.sampled_from(near), min_size=n, max_size=n).map(tuple)
    return _mask(n)


@st.composite
def _mask(draw, n: int) -> tuple[bool, ...]:
    kind = draw(st.sampled_from(["some", "none", "all", "one"]))
    if kind == "none" or n == 0:
        return (False,) * n
    if kind == "all":
        return (True,) * n
    if kind == "one":
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
