"""make_fx: trace time grows with order 1.5 over copies of the program (n = 2, 4, 8); expected 1
oracle performance: a program run n times over (copies sharing nothing) must cost the shape system order n: trace CPU time and guard/assert size.
The program is traced n times over in one function (copies on inputs of their own, sharing nothing): the shape system's work should grow linearly with n.
system make_fx, config default; found with torch 2.13.0+cpu. Exits 1 while the family's cost still grows faster than its order, 0 once it does not. Times are the tracing thread's CPU times: run it on a quiet machine for the clearest numbers. `python repro.py --profile` adds a cProfile of the largest member."""
SYMPY_CACHE_SIZE = '10000'
import os

os.environ.setdefault("SYMPY_CACHE_SIZE", SYMPY_CACHE_SIZE)  # as shapefuzz measures (large families)
import cProfile
import gc
import io
import math
import pstats
import sys
import time
import torch
try: import pkgutil; [pkgutil.resolve_name(name) for name in ('torch._dynamo.source.LocalSource', 'torch._subclasses.fake_tensor.FakeTensorMode', 'torch.fx.experimental.symbolic_shapes.ShapeEnv', 'torch.fx.experimental.symbolic_shapes.StatelessSymbolicContext', 'torch.fx.experimental.symbolic_shapes.DimDynamic.STATIC', 'torch.fx.experimental.symbolic_shapes.DimDynamic.DUCK', 'torch.fx.experimental.symbolic_shapes.DimDynamic.UNBACKED')]  # torch's private names used below: another torch version may have moved one
except (ImportError, AttributeError) as e: sys.exit(print(f"repro.py: this torch ({torch.__version__}) lacks a name it uses ({e}); the repro cannot run here") or 2)
from torch._dynamo.source import LocalSource
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext
from torch.fx.passes.runtime_assert import insert_deferred_runtime_asserts

print("torch", torch.__version__)
def f(v0):
    v1 = v0.view(-1, 4)
    v2 = v0.sum().item()
    v3 = 16 * v2
    v4 = v3 % 13
    v5 = torch.arange(v4)
    v6 = v4 - 1
    v7 = 5 * v6
    v8 = v7 % 5
    v9 = torch.nn.functional.pad(v1, (1, 3, -11, v8))
    v10 = torch.arange(0)
    return (v5, v9, v10)

inputs = [torch.tensor([-2, 0, -2, -2, 6, 3, 5, 4, 6, -2, -2, 0, -1, 3, 2, 6, -1, 2, 7, 1, -1, 6, 0, -1, 5, 3, 0, 0, 6, 0, 1, -2, -2, 5, 0, 7, 2, -2, 2, 2, 5, 5, 3, 6, -2, 0, 5, 2, 1, 0, 2, 2, 3, 6, 3, 6, 6, 1, 5, 0, 6, 6, 1, -2, 4, 6, 5, 5, -1, 3, -2, 6, 1, 1, 6, 2, 5, 2, 7, -2, 2, 2, 6, 2, 3, 1, 3, 2, 2, 1, -1, 6, 2, 4, 7, -1, -2, 6, 7, 5, -2, 7, 1, 4, -1, 3, 7, 0, 3, 2, -2, 5, 2, 2, -1, 7, -2, 7, 5, -2, 0, 6, -1, -2, 0, 7, 2, 3, 0, 2, -2, 7, -2, 0, 3, 5, 3, -2, 2, 7, 1, 0, 7, -2, 3, 7, 0, 2, -2, 4, 5, 1, 7, 0, 5, 7, 3, -1, 4, 4, 1, -2, 0, 3, 3, 3, 1, 4, -1, 0, 2, -2, 1, 4, -2, -2, 5, -1, 4, 7], dtype=torch.int64).reshape((5, 6, 6))]  # x0: dynamic, dynamic, static

NS = (2, 4, 8)
ROUNDS = 3
EXPECTED = 1.0
MARGIN = 0.5
TIME_FLOOR_S = 0.25
SIZE_FLOOR = 1000
EXCESS_SHARE = 0.15
KIND = 'superlinear-time'
DIMS = [['dynamic', 'dynamic', 'static']]
ENV_KWARGS = {}

def growth_order(ns, ys) -> float:
    """The order of ys's growth at the largest ns, from its last two increments: 1 when each
    added copy costs the same (linear), 2 when an added copy costs in proportion to n
    (quadratic). Increments, not values: a fixed cost (the ShapeEnv, make_fx's set-up) weighs
    on every member alike and cancels, where it would flatten a fit of log y over log n. 0 when
    an increment is not positive (no growth to measure)."""
    (n0, n1, n2), (y0, y1, y2) = ns[-3:], ys[-3:]
    if y1 <= y0 or y2 <= y1:
        return 0.0
    per_copy = ((y2 - y1) / (n2 - n1)) / ((y1 - y0) / (n1 - n0))
    return 1.0 + math.log(per_copy) / math.log((n2 + n1) / (n1 + n0))

def superlinear(ns, ys, expected, margin, floor) -> bool:
    """ys grows with ns faster than order `expected` (1: linear): its growth order is at least
    `margin` above, the largest member exceeds `floor`, and what it has beyond the line through
    the two members before it is at least EXCESS_SHARE of it (noise in a small member can tilt
    the order, not add a seventh to a large one)."""
    (n0, n1, n2), (y0, y1, y2) = ns[-3:], ys[-3:]
    excess = y2 - (y1 + (y1 - y0) * (n2 - n1) / (n1 - n0))
    return (growth_order(ns, ys) >= expected + margin and y2 >= floor and excess >= EXCESS_SHARE * y2)

def superlinear_kinds(ns, cpu_s, sizes, expected, margin) -> list[str]:
    """The performance oracle's finding kinds that hold for a family: its CPU time and its size,
    each against its own floor (the one rule: the oracle, the measurement and repro.py read it)."""
    return [kind for kind, ys, floor in (("superlinear-time", cpu_s, TIME_FLOOR_S),
                                         ("superlinear-size", sizes, SIZE_FLOOR))
            if superlinear(ns, ys, expected, margin, floor)]

def copies(fn, k, n):
    """`fn` (of k inputs) n times over, copy i on inputs i*k .. i*k+k-1."""
    def family(*xs):
        out = ()
        for i in range(n):
            out += tuple(fn(*xs[i * k:(i + 1) * k]))
        return out
    return family

def trace_copies(fn, inputs, dims, n, env_kwargs=None):
    """(CPU seconds, expression size) of make_fx tracing `fn` n times over, each copy's dims
    marked as `dims` says (static, dynamic, unbacked), its deferred asserts inserted and its
    guards produced, as a user's make_fx + produce_guards does."""
    marks = {"static": DimDynamic.STATIC, "dynamic": DimDynamic.DUCK, "unbacked": DimDynamic.UNBACKED}
    # without duck shaping each copy's sizes are symbols of their own, as independent inputs'
    # are: with it, equal sizes would share one symbol and the copies would not add symbols
    se = ShapeEnv(**{"duck_shape": False, **(env_kwargs or {})})
    mode = FakeTensorMode(shape_env=se)
    fakes = [mode.from_tensor(t.clone(), source=LocalSource(f"t{i}_{j}"), symbolic_context=StatelessSymbolicContext(
        dynamic_sizes=[marks[d] for d in ds], constraint_sizes=[None] * t.dim()))
        for i in range(n) for j, (t, ds) in enumerate(zip(inputs, dims))]
    se.pending_fresh_unbacked_symbols.clear()  # unbacked input dims are bound by the inputs
    collecting = gc.isenabled()
    gc.disable()  # a collection of the whole heap is not the trace's cost (Note [slow moments])
    try:
        start = time.thread_time()
        gm = make_fx(copies(fn, len(inputs), n), tracing_mode="symbolic")(*fakes)
        insert_deferred_runtime_asserts(gm, se, "scaling")
        guards = se.produce_guards(fakes, [LocalSource(f"t{i}") for i in range(len(fakes))], ignore_static=False)
        cpu = time.thread_time() - start
    finally:
        if collecting:
            gc.enable()
    asserts = [str(ra.expr) for ras in se.deferred_runtime_asserts.values() for ra in ras]
    return cpu, sum(map(len, guards)) + sum(map(len, asserts))

def hottest(fn, inputs, dims, n, env_kwargs=None, top=12) -> str:
    """cProfile of one trace of the family's member n: the torch and sympy functions with the
    most time of their own."""
    prof = cProfile.Profile()
    prof.enable()
    try:
        trace_copies(fn, inputs, dims, n, env_kwargs)
    finally:
        prof.disable()
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf).sort_stats("tottime")
    stats.print_stats(r"torch|sympy", top)
    lines = buf.getvalue().splitlines()
    head = next((k for k, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
    return "\n".join(line.rstrip() for line in lines[head:] if line.strip())

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
