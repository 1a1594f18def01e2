"""Fresh inputs around a program's own (oracle 2, replay): other sizes for the dims that may vary,
0 and 1, and other data (edge item values, empty / single / full masks). Deterministic in the
program and the seed, so a finding's replay input is reproducible and saved in its case."""

from __future__ import annotations

import math
import random
import zlib

from shapefuzz.program import InputSpec, Program

__all__ = ["variants"]

MAX_NUMEL = 512


def variants(program: Program, n: int, seed: int = 0) -> list[tuple[InputSpec, ...]]:
    rng = random.Random(zlib.crc32(program.dumps().encode()) ^ seed)
    out: list[tuple[InputSpec, ...]] = []
    for k in range(n):
        # First variants keep the shapes and change only data; later ones resize as well.
        specs = tuple(_vary(s, rng, resize=k >= n // 3) for s in program.inputs)
        if specs != program.inputs and specs not in out:
            out.append(specs)
    return out


def _vary(spec: InputSpec, rng: random.Random, resize: bool) -> InputSpec:
    shape = list(spec.shape)
    if resize:
        for d, kind in enumerate(spec.dims):
            if kind != "static" and rng.random() < 0.6:
                shape[d] = rng.choice([0, 1, 2, 3, spec.shape[d] + 1, max(spec.shape[d] - 1, 0),
                                       2 * spec.shape[d], 5])
        while math.prod(shape) > MAX_NUMEL:
            shape[shape.index(max(shape))] //= 2
    n = math.prod(shape)
    sizes = sorted(set(shape) | set(spec.shape))
    return InputSpec(spec.name, spec.dtype, tuple(shape), spec.dims, _data(spec.dtype, n, sizes, rng))


def _data(dtype: str, n: int, sizes: list[int], rng: random.Random) -> tuple:
    if dtype == "float":
        return tuple(float(rng.randint(-3, 3)) for _ in range(n))
    if dtype == "int":
        pool = sorted({0, 1, -1, 2, 3} | {v for s in sizes for v in (s, s + 1, s - 1)})
        return tuple(rng.choice(pool) for _ in range(n))
    kind = rng.choice(["none", "all", "one", "some"])
    if kind == "one" and n:
        k = rng.randrange(n)
        return tuple(i == k for i in range(n))
    return tuple({"none": lambda: False, "all": lambda: True}.get(kind, lambda: rng.random() < 0.5)()
                 for _ in range(n))
