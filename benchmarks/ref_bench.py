"""Reference ShapeEnv (`ref`) benchmark: seed 000's optimizations on an unbacked-heavy workload,
side by side in one run, a per-toggle ablation, and the throughput on generated programs.

    python benchmarks/ref_bench.py [--chunks 32] [--layers 4] [--reps 15] [--programs 500]
                                   [--tensor-programs 300] [--torch-reps 5]
                                   [--out benchmarks/ref_results.md]

It also measures RefSystem on the default tensor-program generator, and (benchmarks/torch_bench.py)
torch 2.13's own ShapeEnv on the same workload with its slow paths restored one by one, so the
reference's tables and torch's come from this one command.

The workload is a question program in the spirit of seed 000's unbind_split_flip_cat repro:
every layer splits an input of backed size s0 into `chunks` data-dependent (unbacked) sizes,
allocates each (torch._check(u >= 0)), runs four ops (unbind, split, flip, cat: the repro's name)
over every chunk whose meta functions ask
seed 000's 0/1 questions (u == 0, u == 1, u > 0, u >= 0, u >= 2, as guard_or_false/true and
statically_known_true), cats them (the sum of all sizes, asked the same questions), checks that
the chunks cover the input (a replacement), runs the same ops over the concatenation, narrows
(what is left after a chunk), and then, as a retrace would, asks again about every size seen so
far.

Method: each timed run starts from an empty sympy cache (as a fresh process would) and runs with
the garbage collector paused (collections land at arbitrary points and doubled the spread);
times are CPU seconds of this process; all configs are run round-robin, `reps` times, in a
rotated order, so machine noise lands on all of them alike; the tables show minima (see the
report's note on noise) and medians. "trace" is the env's work (run: the ShapeEnv part);
"observe" adds building the Observation (printing every expression), i.e. what
RefSystem.observe costs.
Before timing, every config's answers are checked against all-off: optimizations 2-8 must give
identical observations, aggressive levels may only turn claims into fallbacks.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import platform
import random
import statistics
import sys
import time

import sympy
from sympy.core.cache import clear_cache

from shapefuzz.program import Ref
from shapefuzz.program.questions import QInstr, QProgram, truth
from shapefuzz.systems.ref import OPTIMIZATIONS, RefSettings, RefSystem, run
from shapefuzz.systems.ref.settings import ALL_OFF
from shapefuzz.systems.ref.system import observation

BUDGET_SPEEDUP = 3.0  # DESIGN: all eight on vs all off
BUDGET_RATE = 300.0  # DESIGN: ref programs/s over the default generator, one core

ALL_ON = RefSettings(aggressive_guard_free_semantics=2)
CONFIGS = {
    "all off": ALL_OFF,
    "default (2-8 on, agfs=0)": RefSettings(),
    "all on (2-8 on, agfs=2)": ALL_ON,
}
ABLATION = {"agfs 2 -> 0": dataclasses.replace(ALL_ON, aggressive_guard_free_semantics=0),
            **{f"off:{short}": dataclasses.replace(ALL_ON, **{field: False})
               for short, field in OPTIMIZATIONS.items()}}

# seed 000's questions about a size: (mode, comparison, constant)
ZERO_ONE = (("guard_or_false", "==", 0), ("guard_or_false", "==", 1), ("guard_or_true", ">", 0),
            ("statically_known_true", ">=", 0), ("guard_or_false", ">=", 2))


def unbind_split_flip_cat(chunks: int = 32, layers: int = 4, ops_per_chunk: int = 4,
                          seed: int = 0) -> QProgram:
    rng = random.Random(seed)
    instrs: list[QInstr] = []
    vals: list[int] = []

    def emit(op, *args, value=None):
        instrs.append(QInstr(op, tuple(args)))
        if value is not None:
            vals.append(value)
            return Ref(len(vals) - 1)
        return None

    def questions(v):
        for mode, cmp, c in ZERO_ONE:
            emit("ask", mode, cmp, v, c)

    sizes = [rng.randint(0, 6) for _ in range(chunks)]
    x = emit("backed", sum(sizes), value=sum(sizes))
    seen: list[Ref] = []
    for _ in range(layers):
        us = [emit("unbacked", n, value=n) for n in sizes]  # split: one unbacked size per chunk
        for u in us:
            emit("check", ">=", u, 0)  # allocating a tensor of size u
        for _ in range(ops_per_chunk):  # unbind / split / flip / cat, each asking about each size
            for u in us:
                questions(u)
        acc = us[0]
        for u in us[1:]:  # cat: the output size is the sum of the chunk sizes
            acc = emit("binop", "+", acc, u, value=vals[acc.index] + vals[u.index])
        questions(acc)
        emit("check", "==", acc, x)  # the chunks cover the input: a replacement
        for _ in range(ops_per_chunk):  # the same ops on the concatenation
            questions(acc)
        for u in us[::4]:  # narrow: what is left after one chunk
            rest = emit("binop", "-", acc, u, value=vals[acc.index] - vals[u.index])
            emit("ask", "guard_or_false", ">=", rest, 0)
        seen += us
        for u in seen:  # a retrace asks again about every size seen so far
            emit("ask", "guard_or_false", "==", u, 1)
    p = QProgram(tuple(instrs))
    p.validate()
    assert truth(p).failed_check is None, "the workload must be a valid program"
    return p


# ---- measuring ---------------------------------------------------------------------------------
def timed(program: QProgram, settings: RefSettings) -> tuple[float, float]:
    """CPU seconds of this process (time.process_time): on a shared machine, wall-clock time
    also counts the time other processes hold the core."""
    clear_cache()  # every run starts cold, as a fresh process would
    gc.collect()  # and without a collection of the previous run's garbage in the middle
    gc.disable()
    try:
        t0 = time.process_time()
        trace = run(program, settings)
        t1 = time.process_time()
        observation("ref", "bench", program, trace)
        return t1 - t0, time.process_time() - t0
    finally:
        gc.enable()


def measure(program: QProgram, configs: dict[str, RefSettings], reps: int) -> dict[str, dict]:
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in configs}
    names = list(configs)
    for r in range(reps):
        for name in names[r % len(names):] + names[: r % len(names)]:
            times[name].append(timed(program, configs[name]))
    return {n: {"trace": min(t for t, _ in v), "observe": min(o for _, o in v),
                "trace_median": statistics.median(t for t, _ in v),
                "observe_median": statistics.median(o for _, o in v)} for n, v in times.items()}


def key(o):
    return ([(d.answer, d.how) for d in o.decisions], o.guards, o.asserts, o.out_eval)


def check_semantics(program: QProgram) -> list[str]:
    base = observation("ref", "x", program, run(program, ALL_OFF))
    problems = []
    for name, s in {**CONFIGS, **ABLATION}.items():
        o = observation("ref", "x", program, run(program, s))
        if s.aggressive_guard_free_semantics == 0:
            if key(o) != key(base):
                problems.append(f"{name}: observation differs from all off")
        elif any((a.answer, a.how) != (b.answer, b.how) and b.how != "fallback"
                 for a, b in zip(base.decisions, o.decisions)):
            problems.append(f"{name}: a claim changed (only fallbacks may)")
    return problems


def generator_rate(n: int) -> dict[str, float]:
    from hypothesis import HealthCheck, given, seed, settings

    from shapefuzz.strategies import qprograms

    progs: list[QProgram] = []

    @seed(0)
    @settings(max_examples=n, database=None, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(qprograms())
    def collect(p):
        progs.append(p)

    collect()
    system = RefSystem()
    out = {"programs": float(len(progs)),
           "instrs/program": sum(len(p.instrs) for p in progs) / len(progs)}
    for config in ("default", "all-off"):  # CPU seconds: the machine is shared
        clear_cache()
        t0 = time.process_time()
        for p in progs:
            system.observe(p, config, ())
        out[config] = len(progs) / (time.process_time() - t0)
    return out


def tensor_rate(n: int) -> dict[str, float]:
    """RefSystem.observe over the default tensor-program generator (`programs()`): the
    symbolic shape rules plus the lockstep eager run (Note [lockstep]) and the observation.
    CPU seconds of this process (the machine is shared). A warm-up pass over other programs
    (imports, torch's first calls) is untimed; each timed pass starts with an empty sympy cache
    over programs it has not seen, so nothing is a cache hit from an earlier pass."""
    from hypothesis import HealthCheck, given, seed, settings

    from shapefuzz.strategies import programs

    def sample(s: int) -> list:
        progs: list = []

        @seed(s)
        @settings(max_examples=n, database=None, derandomize=s == 0, deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(programs())
        def collect(p):
            progs.append(p)

        collect()
        return progs

    progs, warm = sample(0), sample(1)
    system = RefSystem()
    for p in warm:
        system.observe(p, "default", ())
    out = {"programs": float(len(progs)),
           "instrs/program": sum(len(p.instrs) for p in progs) / len(progs)}
    for config in ("default", "all-off"):
        clear_cache()
        t0, w0 = time.process_time(), time.perf_counter()
        obs = [system.observe(p, config, ()) for p in progs]
        out[config] = len(progs) / (time.process_time() - t0)
        out[config + " wall"] = len(progs) / (time.perf_counter() - w0)
        out["skipped"] = float(sum(o.outcome.exc_type == "NoShapeRule" for o in obs))
    return out


# ---- report ------------------------------------------------------------------------------------
def report(args, program, main, abl, rate, problems, trate=None, torch_m=None) -> str:
    off, on = main["all off"], main["all on (2-8 on, agfs=2)"]
    default = main["default (2-8 on, agfs=0)"]
    n_ask = sum(i.op == "ask" for i in program.instrs)
    n_unb = sum(i.op == "unbacked" for i in program.instrs)
    speedup = off["trace"] / on["trace"]
    met = "met" if speedup >= BUDGET_SPEEDUP else "NOT met"
    out = [
        "# ref benchmark results",
        (f"`python benchmarks/ref_bench.py --chunks {args.chunks} --layers {args.layers} "
         f"--reps {args.reps} --programs {args.programs} --tensor-programs "
         f"{args.tensor_programs} --torch-reps {args.torch_reps}`"),
        (f"Python {platform.python_version()}, sympy {sympy.__version__}, {platform.machine()}, "
         "one process (one core), CPU seconds. Each run starts with an empty sympy cache. On "
         "this shared 2-vCPU machine even a fixed pure-Python loop varies by +-40% from run to "
         f"run, so the tables use the minimum over {args.reps} round-robin repetitions "
         "(timeit's advice: the higher values are other processes' interference), with the "
         "medians alongside."),
        (f"## unbacked-heavy workload (unbind/split/flip/cat, {len(program.instrs)} "
         f"instructions: {n_unb} unbacked symbols, {n_ask} questions)"),
        _table(["config", "trace s", "observe s", "trace speedup vs all off", "observe speedup",
                "medians: trace s, speedup"],
               [[name, f"{m['trace']:.3f}", f"{m['observe']:.3f}",
                 f"{off['trace'] / m['trace']:.2f}x", f"{off['observe'] / m['observe']:.2f}x",
                 f"{m['trace_median']:.3f}, {off['trace_median'] / m['trace_median']:.2f}x"]
                for name, m in main.items()]),
        ('"trace" is the env\'s work (`run`: what a ShapeEnv does); "observe" adds building '
         "the Observation (printing every expression), i.e. all of RefSystem.observe."),
        (f"Budget (DESIGN): all on vs all off >= {BUDGET_SPEEDUP:.0f}x on the trace: "
         f"{speedup:.2f}x ({met}; by medians "
         f"{off['trace_median'] / on['trace_median']:.2f}x). The whole observation: "
         f"{off['observe'] / on['observe']:.2f}x. With torch's default agfs=0: "
         f"{off['trace'] / default['trace']:.2f}x."),
        "## ablation: all on, one optimization switched off at a time",
        ("Share = (that row's trace time - all on) / (all off - all on): the part of the "
         "all-off gap that this optimization alone closes. Shares need not add up to 100%, and "
         "small ones are within the noise."),
        _table(["switched off", "trace s", "slowdown vs all on", "share of the gap",
                "median trace s"], [_ablation_row(name, m, on, off) for name, m in abl.items()]),
        "## default generator (`qprograms()`), RefSystem.observe in one process",
        (f"{int(rate['programs'])} programs (derandomized, {rate['instrs/program']:.1f} "
         "instructions each on average), CPU seconds of this process, one pass from an empty "
         "sympy cache; RefSystem.observe includes the z3 soundness checks of question "
         "programs."),
        _table(["config", "programs/s"], [["default", f"{rate['default']:.0f}"],
                                          ["all-off", f"{rate['all-off']:.0f}"]]),
        (f"Budget (DESIGN): >= {BUDGET_RATE:.0f} programs/s: "
         f"{'met' if rate['default'] >= BUDGET_RATE else 'NOT met'}."),
        *_tensor_section(trate),
        *_torch_section(torch_m, args),
        "## semantics check",
        ("Every config's observation of the workload compared with all off (optimizations 2-8 "
         "identical, aggressive levels only fallbacks): "
         + ("all agree." if not problems else "PROBLEMS: " + "; ".join(problems))),
    ]
    return "\n\n".join(out) + "\n"


def _tensor_section(t: dict | None) -> list[str]:
    if t is None:
        return []
    met = "met" if t["default"] >= BUDGET_RATE else "NOT met"
    return [
        "## default tensor-program generator (`programs()`), RefSystem.observe in one process",
        (f"{int(t['programs'])} programs (derandomized, {t['instrs/program']:.1f} instructions "
         f"each on average; {int(t['skipped'])} use an op without a symbolic rule and are "
         "skipped), each traced by the ops' symbolic shape rules in lockstep with eager. CPU "
         "seconds of this process, each pass from an empty sympy cache over programs not seen "
         "before (warm-up on other programs); wall-clock alongside: the machine is shared."),
        _table(["config", "programs/s (CPU)", "programs/s (wall)"],
               [[c, f"{t[c]:.0f}", f"{t[c + ' wall']:.0f}"] for c in ("default", "all-off")]),
        f"Budget (DESIGN): >= {BUDGET_RATE:.0f} programs/s on one core: {met}.",
    ]


def _torch_section(m: dict | None, args) -> list[str]:
    if m is None:
        return []
    import torch
    from torch_bench import torch_tables

    return [
        f"## torch {torch.__version__}: the same workload, slow paths restored one by one",
        ("torch's own ShapeEnv driven with the same question program (as the torch-env system "
         "drives it), each optimization switched back to its pre-optimization code by "
         "shapefuzz/systems/torch_toggles.py (docs/explanation/torch-internals.md); the last column shows the "
         f"slow code really ran. CPU seconds, minimum of {args.torch_reps} round-robin runs."),
        *torch_tables(m, _table),
    ]


def _ablation_row(name: str, m: dict, on: dict, off: dict) -> list[str]:
    gap = off["trace"] - on["trace"]
    share = (m["trace"] - on["trace"]) / gap if gap > 0 else 0.0
    return [name, f"{m['trace']:.3f}", f"{m['trace'] / on['trace']:.2f}x", f"{100 * share:.0f}%",
            f"{m['trace_median']:.3f}"]


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def main(argv=None) -> int:
    sys.path.insert(0, __file__.rsplit("/", 1)[0])  # torch_bench, next to this file
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=32)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--programs", type=int, default=500)
    ap.add_argument("--tensor-programs", type=int, default=300)
    ap.add_argument("--torch-reps", type=int, default=5, help="0: skip the torch tables")
    ap.add_argument("--out", default="benchmarks/ref_results.md")
    args = ap.parse_args(argv)
    program = unbind_split_flip_cat(args.chunks, args.layers)
    problems = check_semantics(program)
    timed(program, ALL_ON)  # warm imports and first-call costs, untimed
    everything = measure(program, {**CONFIGS, **ABLATION}, args.reps)  # one round-robin
    main_t = {k: everything[k] for k in CONFIGS}
    abl_t = {k: everything[k] for k in ABLATION}
    rate = generator_rate(args.programs)
    trate = tensor_rate(args.tensor_programs) if args.tensor_programs else None
    torch_m = None
    if args.torch_reps:
        from torch_bench import measure_torch

        torch_m = measure_torch(program, args.torch_reps)
    text = report(args, program, main_t, abl_t, rate, problems, trate, torch_m)
    with open(args.out, "w") as f:
        f.write(text)
    print(text)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
