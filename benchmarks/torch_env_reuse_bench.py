"""What Note [one analysis per run state] (shapefuzz/systems/torch_env.py) saves: the same
generated question programs observed under every default torch-env config, with the z3 checks
and guard replays reused across configs whose runs end alike, and without. Each side runs in a
fresh interpreter (the prover's caches start cold in both), the sides alternating, so load
drifts hit both alike.

    python benchmarks/torch_env_reuse_bench.py [N] [ROUNDS]      # default N = 300, ROUNDS = 2
"""

from __future__ import annotations

import subprocess
import sys
import time

from hypothesis import HealthCheck, Phase, given, settings


def side(mode: str, n: int) -> None:
    import shapefuzz.strategies as S
    import shapefuzz.systems.torch_env as te
    from shapefuzz.systems.configs import default_names

    programs: list = []

    @settings(max_examples=n, database=None, derandomize=True, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), deadline=None)
    @given(S.qprograms())
    def collect(p):
        programs.append(p)

    collect()
    if mode == "no-reuse":
        te._SameRun.evidence = lambda self, program, obs, compute: compute()
    system, configs = te.TorchEnvSystem(), default_names("torch-env")
    wall, cpu = time.perf_counter(), time.process_time()
    for p in programs:
        for c in configs:
            system.observe(p, c, ())
    print(f"{mode}\t{len(programs)}\t{len(configs)}\t{time.perf_counter() - wall:.2f}\t{time.process_time() - cpu:.2f}")


def main(n: int, rounds: int) -> None:
    print("side\tprograms\tconfigs\twall_s\tcpu_s")
    for _ in range(rounds):
        for mode in ("reuse", "no-reuse"):
            r = subprocess.run([sys.executable, __file__, "--side", mode, str(n)], capture_output=True, text=True,
                               check=True)
            print(r.stdout.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--side"]:
        side(sys.argv[2], int(sys.argv[3]))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 300, int(sys.argv[2]) if len(sys.argv) > 2 else 2)
