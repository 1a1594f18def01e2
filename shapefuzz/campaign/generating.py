"""A generating round's programs in flight (Note [parallel rounds] in engine.py): the test body
submits each program's jobs to the executor and returns; results are processed strictly in
generation order; a new finding cancels the programs after it."""

from __future__ import annotations

import time
from typing import Any

from hypothesis import Phase

from shapefuzz.campaign.evaluate import evaluate, jobs_for
from shapefuzz.campaign.phases import Step, Stop
from shapefuzz.program import Program

__all__ = ["Flight"]


class Flight:
    """The generating half of a Campaign: programs submitted and not yet processed, by their
    index in the round, and the results that came back ahead of their turn."""

    def __init__(self, camp: Any):
        self.camp = camp
        self.programs: dict[int, Program] = {}
        self.results: dict[int, list] = {}

    def round(self) -> bool:
        """Run round `camp.round` from `camp.pos`; True when it ended on a new finding."""
        camp = self.camp
        camp.step, camp.phase = Step.GENERATE, "generating"
        self.programs, self.results = {}, {}
        with camp.clock.phase("generate"):
            camp.hypothesis_run((Phase.generate,))
            while self.programs:
                if camp.elapsed() > camp.budget.end_s():
                    self._abandon()  # a worker still starting or hanging: no time left
                    break
                self.drain(0.25)
        camp.save_checkpoint(force=True)
        return camp.pending_shrink is not None

    def _abandon(self) -> None:
        for j in list(self.programs):
            self.camp.pool.cancel((self.camp.round, j))
        self.programs.clear()
        self.results.clear()

    def _no_more(self) -> bool:
        camp = self.camp
        if camp.pending_shrink is not None or camp.out_of_time():
            return True
        return (camp.cfg.max_examples is not None
                and camp.stats.programs + len(self.programs) >= camp.cfg.max_examples)

    def submit_step(self, i: int, program) -> None:
        camp, cfg = self.camp, self.camp.cfg
        if i < camp.pos:  # processed before a resume (Note [resume]): its score told again
            return camp.feedback.tell(i)
        if self._no_more():
            raise Stop
        t = time.perf_counter()
        camp.pool.submit((camp.round, i), jobs_for(program, cfg.targets, cfg.n_variants, cfg.seed, cfg.rotate))
        self.programs[i] = program
        while len(self.programs) > cfg.parallel:
            self.drain(0.25)
        while camp.feedback.on and i in self.programs and camp.pending_shrink is None:
            self.drain(0.25)  # Note [coverage feedback]: its own score, before the body returns
        camp.feedback.tell(i, camp.pool, (camp.round, i))
        camp.stats.trace_s += time.perf_counter() - t
        if self._no_more():
            raise Stop

    def drain(self, timeout: float) -> None:
        camp = self.camp
        with camp.clock.phase("wait"):
            done = camp.pool.poll(timeout)
        for (rnd, i), obs in done:
            if rnd == camp.round and i in self.programs:
                self.results[i] = obs
        while camp.pos in self.results and camp.pending_shrink is None:
            i = camp.pos
            program = self.programs.pop(i)
            self._process(i, program, self.results.pop(i))
        with camp.clock.phase("bookkeeping"):
            camp.on_progress(camp)
            camp.save_checkpoint()

    def _process(self, i: int, program, obs: list) -> None:
        camp, cfg = self.camp, self.camp.cfg
        with camp.clock.phase("oracles"):
            ev = evaluate(program, cfg.targets, lambda jobs: obs, cfg.n_variants, cfg.seed, cfg.rotate)
        camp.pos = i + 1
        camp.count(ev)
        new = camp.record(ev, program, shrunk=False)
        if new is None:
            return
        camp.pending_shrink = {"index": i, "signature": new.key, "program": program.dumps()}
        for j in [j for j in self.programs if j > i]:  # speculative: not counted, not kept
            camp.pool.cancel((camp.round, j))
            del self.programs[j]
        self.results.clear()
        camp.save_checkpoint(force=True)
