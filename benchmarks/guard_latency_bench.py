"""Note [no guard latency profile] (shapefuzz/systems/compile.py): the compile system's CPU per
program with Dynamo's guard latency profile skipped (as campaigns run it) and left in, the ways
alternating in one interpreter over the same generated programs.

    python benchmarks/guard_latency_bench.py [N_PROGRAMS] [ROUNDS] [CONFIG]
"""

from __future__ import annotations

import contextlib
import sys
import time

from hypothesis import HealthCheck, Phase, given, settings


def main(n: int, rounds: int, config: str) -> None:
    import shapefuzz.strategies as S
    import shapefuzz.systems.compile as compile_system

    programs: list = []

    @settings(max_examples=n, database=None, derandomize=True, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), deadline=None)
    @given(S.programs())
    def collect(p):
        programs.append(p)

    collect()
    system = compile_system.CompileSystem()
    skip = compile_system._no_guard_latency_profile
    ways = {"skipped": skip, "left in": contextlib.nullcontext}
    for p in programs[:3]:  # Dynamo's first compiles pay its imports
        system.observe(p, config, [])
    cpu: dict[str, list[float]] = {w: [] for w in ways}
    for _ in range(rounds):
        for way, ctx in ways.items():
            compile_system._no_guard_latency_profile = ctx
            t = time.process_time()
            for p in programs:
                system.observe(p, config, [])
            cpu[way].append(time.process_time() - t)
    compile_system._no_guard_latency_profile = skip
    print(f"compile:{config}, {len(programs)} programs, CPU s per round")
    for way, xs in cpu.items():
        print(f"{way}\t" + " / ".join(f"{x:.2f}" for x in xs), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40, int(sys.argv[2]) if len(sys.argv) > 2 else 3,
         sys.argv[3] if len(sys.argv) > 3 else "default")
