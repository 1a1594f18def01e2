"""Cost of the history replays on make_fx observations (Note [tensor history replay] in
shapefuzz/systems/tensor_history.py): the same generated programs observed with the recording
and the fresh-env replays on and off, alternating, so load drifts hit both sides alike.

    python benchmarks/history_bench.py [N] [SEED]      # default N = 100, SEED = 0
"""

from __future__ import annotations

import contextlib
import sys
import time
import warnings

from hypothesis import HealthCheck, given, seed, settings

from shapefuzz.oracles.history import records as history_records
from shapefuzz.strategies import programs
from shapefuzz.systems import tensor_history
from shapefuzz.systems.evidence.history import HistoryEvidence
from shapefuzz.systems.make_fx import MakeFxSystem
from shapefuzz.systems.patching import patched


def sample(n: int, s: int) -> list:
    out: list = []

    @seed(s)
    @settings(database=None, max_examples=n, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def collect(p):
        out.append(p)

    collect()
    return out


@contextlib.contextmanager
def replays_off():
    with patched(tensor_history, "run_with", lambda trace, asked: trace()), \
            patched(tensor_history, "replay", lambda asked, values: HistoryEvidence()):
        yield


def observe_all(ps) -> tuple[float, int, int]:
    t0, records, findings = time.perf_counter(), 0, 0
    for p in ps:
        o = MakeFxSystem().observe(p, "default", ())
        rs = history_records(o)
        records += len(rs)
        findings += sum(r.fresh[1] in ("static", "guard", "assert") for r in rs)
    return time.perf_counter() - t0, records, findings


def main(n: int = 100, s: int = 0) -> None:
    warnings.filterwarnings("ignore")
    ps = sample(n, s)
    on = off = 0.0
    for _ in range(2):
        t, records, sharper = observe_all(ps)
        on += t
        with replays_off():
            off += observe_all(ps)[0]
    print(f"| programs | history records | fresh claims | make_fx s, replays off | on | ratio |\n"
          f"|---:|---:|---:|---:|---:|---:|\n| {len(ps)} | {records} | {sharper} | {off / 2:.1f} | "
          f"{on / 2:.1f} | {on / off:.2f} |")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
