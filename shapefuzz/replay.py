"""Replaying a case: run its program through its system again and see whether the recorded
finding (by signature) still appears. Used by `shapefuzz replay` and the corpus tests."""

from __future__ import annotations

import json
from dataclasses import dataclass

from shapefuzz.corpus import Case
from shapefuzz.observation import to_jsonable
from shapefuzz.oracles import check_all
from shapefuzz.workers import Job, run_job

__all__ = ["ReplayResult", "replay_case", "torch_config_applied"]


@dataclass(frozen=True, slots=True)
class ReplayResult:
    case: Case
    reproduced: bool
    signatures: tuple[str, ...]

    @property
    def as_recorded(self) -> bool:
        """bug / known-upstream cases must reproduce; fixed ones must not."""
        return self.reproduced == (self.case.status != "fixed")


def torch_config_applied(pairs):
    """torch.fx.experimental._config overrides for a block, through its own patch()
    (Note [exact restore] in systems/patching.py)."""
    import torch.fx.experimental._config as fxx

    return fxx.patch(**dict(pairs))


def _targets(case: Case) -> list[tuple[str, str]]:
    """The observations the recorded oracle compares: one config, a system's every config
    (config differential), or both question systems (system differential)."""
    from shapefuzz.systems import CONFIGS

    f = case.finding
    if f.oracle == "config-differential":
        return [(f.system, c) for c in CONFIGS[f.system]]
    if f.oracle == "system-differential":
        return [("ref", "default"), (f.system, "default")]  # f.system: the torch side
    if f.oracle == "frontend-differential":
        from shapefuzz.oracles.frontends import pair_of

        return list(pair_of(f))
    return [(f.system, f.config)]


def replay_case(case: Case) -> ReplayResult:
    p = case.program
    variants = json.dumps([] if case.replay_inputs is None else [to_jsonable(list(case.replay_inputs))])
    targets = _targets(case)
    with torch_config_applied(case.torch_config):
        eager = run_job(Job(p.dumps(), "eager", "default", "[]")) if p.kind == "tensors" else None
        obs = [run_job(Job(p.dumps(), s, c, variants)) for s, c in targets]
    sigs = tuple(f.signature for f in check_all(p, eager, obs))
    return ReplayResult(case, case.finding.signature in sigs, sigs)
