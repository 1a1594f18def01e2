"""Valid fraction of the default generator: the share of generated programs that run in eager
without an error (invalid ones are still fuzzed, for error agreement). Target >= 70%.

    python benchmarks/validity.py [N]      # default N = 1000
"""

from __future__ import annotations

import sys
import warnings
from collections import Counter

from hypothesis import HealthCheck, given, seed, settings

from shapefuzz.program.interp import make_inputs, run
from shapefuzz.strategies import programs


def main(n: int = 1000) -> None:
    warnings.filterwarnings("ignore")
    stats: Counter = Counter()
    errors: Counter = Counter()

    @seed(0)
    @settings(database=None, max_examples=n, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def collect(p):
        stats["programs"] += 1
        stats["instrs"] += len(p.instrs)
        try:
            run(p, make_inputs(p.inputs))
            stats["valid"] += 1
        except Exception as e:  # an invalid program: counted, by error type
            errors[type(e).__name__] += 1

    collect()
    frac = stats["valid"] / stats["programs"]
    print(f"| programs | valid in eager | valid fraction | mean instructions |\n|---:|---:|---:|---:|\n"
          f"| {stats['programs']} | {stats['valid']} | {frac:.3f} | {stats['instrs'] / stats['programs']:.1f} |")
    print("invalid by error type:", dict(errors.most_common()))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
