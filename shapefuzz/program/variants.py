"""Fresh inputs around a program's own, for both program kinds (Note [program kinds]).

Tensor programs (oracle 2, replay): other sizes for the dims that may vary, 0 and 1, and other
data (edge item values, empty / single / full masks). Question programs: other hints and
unbacked values (systems/qreplay.py replays the answers on them). Deterministic in the program
and the seed, so a finding's replay input is reproducible and saved in its case."""

from __future__ import annotations

import math
import random
import zlib

from shapefuzz.program import InputSpec, Program

__all__ = ["question_variants", "variants"]

MAX_NUMEL = 512


def variants(program: Program, n: int, seed: int = 0) -> list[tuple[InputSpec, ...]]:
    """Up to n distinct input sets: two with the program's shapes and new data, the rest with
    every non-static dim resized, cycling through small sizes (2 and 3 flip most derived
    conditions), 0 and 1 (specialization edges) and sizes around and above the traced ones."""
    rng = random.Random(zlib.crc32(program.dumps().encode()) ^ seed)
    out: list[tuple[InputSpec, ...]] = []
    shapes = {tuple(s.shape for s in program.inputs)}
    n_same = min(2, n // 3)
    for _ in range(n_same):
        out.append(tuple(_vary(s, i, rng, None) for i, s in enumerate(program.inputs)))
    for j in range(4 * n):
        if len(out) >= n:
            break
        specs = tuple(_vary(s, i, rng, j) for i, s in enumerate(program.inputs))
        key = tuple(s.shape for s in specs)
        if key not in shapes:  # resized variants differ in shape from each other
            shapes.add(key)
            out.append(specs)
    return out


def _sizes(n: int) -> list[int]:
    return [2, 3, n + 1, max(n - 1, 0), 0, 1, 2 * n, 5, 4]


def _vary(spec: InputSpec, i: int, rng: random.Random, resize: int | None) -> InputSpec:
    shape = list(spec.shape)
    if resize is not None:
        for d, dim_kind in enumerate(spec.dims):
            if dim_kind != "static":
                choices = _sizes(spec.shape[d])
                shape[d] = choices[(resize + i + d) % len(choices)]
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
    subset = rng.choice(["none", "all", "one", "some"])
    if subset == "one" and n:
        k = rng.randrange(n)
        return tuple(i == k for i in range(n))
    return tuple({"none": lambda: False, "all": lambda: True}.get(subset, lambda: rng.random() < 0.5)()
                 for _ in range(n))


def question_variants(program, n: int, seed: int = 0) -> list[tuple[int, ...]]:
    """Question programs (Note [program kinds]): up to n distinct assignments for the
    program's backed and unbacked instructions."""
    leaves = [i for i in program.instrs if i.op in ("backed", "unbacked")]
    if not leaves:
        return []
    rng = random.Random(zlib.crc32(program.dumps().encode()) ^ seed)
    orig = tuple(int(i.args[0]) for i in leaves)
    out: list[tuple[int, ...]] = []
    for _ in range(6 * n):
        if len(out) >= n:
            break
        vals = []
        for ins, v in zip(leaves, orig):
            pool = [0, 1, 2, 3, 4, 5, 8, v, v + 1, max(v - 1, 0), 2 * v]
            if ins.op == "unbacked":
                pool += [-1, -2, v - 1]
            vals.append(rng.choice(pool) if rng.random() < 0.7 else v)
        t = tuple(vals)
        if t != orig and t not in out:
            out.append(t)
    return out
