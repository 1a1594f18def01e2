"""Issue form of a performance finding (shapefuzz/repro/scaling.py puts it together; Note
[repro templates]): the program's family (Note [scaling family] in shapefuzz/systems/scaling.py)
measured again in this interpreter, the fit printed, and with --profile a cProfile of the largest
member when the family still grows faster than its order. The measuring functions are the worker's own,
copied in."""

from __future__ import annotations

import cProfile
import gc
import io
import math
import pstats
import sys
import time
from typing import TYPE_CHECKING

from torch._dynamo.source import LocalSource
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext
from torch.fx.passes.runtime_assert import insert_deferred_runtime_asserts

#: every name the copied functions use from this template's imports
IMPORTED = (cProfile, gc, io, math, pstats, time, LocalSource, FakeTensorMode, make_fx, DimDynamic, ShapeEnv,
            StatelessSymbolicContext, insert_deferred_runtime_asserts)


def sympy_cache():
    """At the script's top, before torch imports sympy: the cache size shapefuzz measures with
    (a 1000-entry cache thrashes on large families; Note [sympy cache])."""
    import os

    os.environ.setdefault("SYMPY_CACHE_SIZE", SYMPY_CACHE_SIZE)  # as shapefuzz measures (large families)


if TYPE_CHECKING:
    from shapefuzz.repro.templates._slots import (
        DIMS,
        ENV_KWARGS,
        EXPECTED,
        KIND,
        MARGIN,
        NS,
        ROUNDS,
        SYMPY_CACHE_SIZE,
        f,
        growth_order,
        hottest,
        inputs,
        superlinear_kinds,
        trace_copies,
    )


def main():
    """Measure, print, profile; the exit code says whether the finding holds."""
    best = {}
    for _ in range(ROUNDS):  # interleaved: a slow moment hits one size in one round
        for n in NS:
            cpu, size = trace_copies(f, inputs, DIMS, n, ENV_KWARGS)
            best[n] = (min(cpu, best[n][0]), size) if n in best else (cpu, size)
    cpu_s, sizes = [best[n][0] for n in NS], [best[n][1] for n in NS]
    for n, c, z in zip(NS, cpu_s, sizes):
        print(f"f {n} times over: {c:.3f} s CPU to trace, guards and asserts {z} characters")
    print(f"growth order: CPU time {growth_order(NS, cpu_s):.2f}, size {growth_order(NS, sizes):.2f}; "
          f"copies that share nothing should give {EXPECTED:g}")
    grows = KIND in superlinear_kinds(NS, cpu_s, sizes, EXPECTED, MARGIN)
    if grows and "--profile" in sys.argv:  # cProfile slows the trace several times over
        print(f"\nhottest torch functions at n = {NS[-1]} (cProfile, by own time):")
        print(hottest(f, inputs, DIMS, NS[-1], ENV_KWARGS))
    if grows:
        print(f"BUG: {KIND}: the shape system's cost grows faster than the program count")
    sys.exit(1 if grows else 0)


if __name__ == "__main__":
    main()
