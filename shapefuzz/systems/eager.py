"""`eager`: ground truth. Runs the program with real tensors and records every output."""

from __future__ import annotations

import time

from shapefuzz.systems.common import reference_run
from shapefuzz.systems.observation import Observation, Outcome

__all__ = ["EagerSystem"]


class EagerSystem:
    name = "eager"

    def observe(self, program, config: str, variants):
        t0 = time.perf_counter()
        res = reference_run(program, program.inputs, frozenset())
        outcome = Outcome("ok") if res.ok else Outcome("error", *res.error.split(": ", 1), res.frame)
        return Observation(self.name, config, outcome, reference=res, artifact=res,
                           elapsed_s=time.perf_counter() - t0)
