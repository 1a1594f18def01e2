"""What the performance oracle (shapefuzz/oracles/performance.py, Note [scaling family]) costs
and what it sees, in one run:

1. make_fx's CPU time on bench.py's program set with the family measured (one in SAMPLE of the
   programs with symbols) and without, in interleaved rounds;
2. the growth orders of two fixed programs' families on unmodified torch and under each
   slowdown planted in tests/fixtures/slow_plants.py (the oracle's tests use the same ones).

    python benchmarks/perf_oracle_bench.py [--programs 160] [--rounds 2] [--out R.md]

CPU time is process time, so another process's load moves it less than wall time; it still
moves it (shared caches), hence the interleaved rounds."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "fixtures"))
sys.path.insert(0, str(HERE.parent / "tests" / "cover"))


def _make_fx_cpu(programs, measure_family: bool) -> tuple[float, int]:
    import shapefuzz.systems.make_fx as mf
    from shapefuzz.oracles.performance import families
    from shapefuzz.systems import scaling

    mf.wanted = scaling.wanted if measure_family else (lambda program, obs: False)
    system, measured = mf.MakeFxSystem(), 0
    start = time.process_time()
    for p in programs:
        try:
            measured += bool(families(system.observe(p, "default", [])))
        except Exception:  # a program make_fx cannot trace costs what it costs
            pass
    return time.process_time() - start, measured


def _orders(plant: str, program) -> str:
    import contextlib

    import slow_plants

    from shapefuzz.oracles.performance import scaling_findings
    from shapefuzz.systems import scaling
    from shapefuzz.systems.evidence import record
    from shapefuzz.systems.evidence.performance import ScalingEvidence
    from shapefuzz.systems.observation import Observation, Outcome, growth_order

    with slow_plants.planted(plant) if plant else contextlib.nullcontext():
        s = scaling.measure(program)
    obs = record(Observation("make_fx", "default", Outcome("ok")), ScalingEvidence((s,)))
    symptoms = ", ".join(f.symptom for f in scaling_findings(obs)) or "none"
    return (f"| {plant or 'unmodified'} | {' / '.join(f'{c:.3f}' for c in s.cpu_s)} | "
            f"{growth_order(s.ns, s.cpu_s):.2f} | {' / '.join(map(str, s.sizes))} | "
            f"{growth_order(s.ns, s.sizes):.2f} | {symptoms} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=160)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    import torch
    from bench import generate
    from test_performance_oracle import ASSERTS, QUESTIONS

    from shapefuzz.systems import scaling

    programs = generate(a.programs)
    _make_fx_cpu(programs[:10], False)  # warm-up
    off, on, measured = [], [], 0
    for _ in range(a.rounds):
        off.append(_make_fx_cpu(programs, False)[0])
        cpu, measured = _make_fx_cpu(programs, True)
        on.append(cpu)
    lines = [f"# Performance oracle, {time.strftime('%Y-%m-%d')}, torch {torch.__version__}", "",
             f"make_fx on bench.py's {a.programs} programs, CPU s per round (n = {scaling.NS}, "
             f"one in {scaling.SAMPLE} programs with symbols, {measured} measured):", "",
             "| without the family | with it | added |", "|---:|---:|---:|"]
    lines += [f"| {x:.1f} | {y:.1f} | {100 * (y - x) / x:+.0f}% |" for x, y in zip(off, on)]
    lines += ["", "Families of two fixed programs (tests/cover/test_performance_oracle.py):", "",
              "| torch | CPU s at n = 2 / 4 / 8 | time order | size | size order | finding |",
              "|---|---|---:|---|---:|---|"]
    for plant, program in (("", QUESTIONS), ("quadratic", QUESTIONS), ("", ASSERTS), ("assert-blowup", ASSERTS)):
        lines.append(_orders(plant, program))
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        a.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
