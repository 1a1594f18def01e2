"""What Note [echo runs] (shapefuzz/program/kinds.py) saves: the metamorphic echoes of generated
question programs (the program in a fresh env, and with a redundant question before each one)
run through `observe`, as before, and through `answers`, in one interpreter, the two ways
alternating over rounds; CPU seconds.

    python benchmarks/echo_runs_bench.py [N] [ROUNDS]      # default N = 300, ROUNDS = 3
"""

from __future__ import annotations

import sys
import time

from hypothesis import HealthCheck, Phase, given, settings


def main(n: int, rounds: int) -> None:
    import shapefuzz.strategies as S
    from shapefuzz.program.metamorphic import redundant
    from shapefuzz.systems import get_system

    programs: list = []

    @settings(max_examples=n, database=None, derandomize=True, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), deadline=None)
    @given(S.qprograms())
    def collect(p):
        programs.append(p)

    collect()
    print("system\tway\tprograms\tcpu_s per round")
    for name in ("torch-env", "ref"):
        system = get_system(name)
        ways = {"observe": lambda p: system.observe(p, "default", []),  # noqa: B023 - used in this loop
                "answers": lambda p: system.answers(p, "default")}  # noqa: B023
        for p in programs[:20]:  # warm the caches both ways read
            system.observe(p, "default", [])
        cpu: dict[str, list[float]] = {w: [] for w in ways}
        for _ in range(rounds):
            for way, run in ways.items():
                t = time.process_time()
                for p in programs:
                    run(p)
                    run(redundant(p))
                cpu[way].append(time.process_time() - t)
        for way, xs in cpu.items():
            print(f"{name}\t{way}\t{len(programs)}\t" + " / ".join(f"{x:.2f}" for x in xs), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300, int(sys.argv[2]) if len(sys.argv) > 2 else 3)
