"""Replaying a case: run its program through its system again and see whether the recorded
finding (by signature) still appears. Used by `shapefuzz replay` and the corpus tests."""

from __future__ import annotations

import json
from dataclasses import dataclass

from shapefuzz.cases import versions
from shapefuzz.cases.corpus import Case
from shapefuzz.oracles import check_all, targets_for_finding
from shapefuzz.program.kinds import kind_of
from shapefuzz.systems import CONFIGS
from shapefuzz.systems.jobs import Job, run_job
from shapefuzz.systems.needs import available
from shapefuzz.systems.observation import to_jsonable

__all__ = ["ReplayResult", "every_target", "observe_case", "replay_case", "targets_of",
           "torch_config_applied"]


@dataclass(frozen=True, slots=True)
class ReplayResult:
    case: Case
    reproduced: bool
    signatures: tuple[str, ...]

    @property
    def as_recorded(self) -> bool:
        """What the case records for the running torch release (Note [versions of a case]), else
        its status: bug / known-upstream cases must reproduce; fixed ones must not."""
        return self.reproduced == self.case.expected_to_reproduce(versions.running_release())


def torch_config_applied(pairs):
    """torch.fx.experimental._config overrides for a block, through its own patch()
    (Note [exact restore] in systems/patching.py)."""
    import torch.fx.experimental._config as fxx

    return fxx.patch(**dict(pairs))


def every_target() -> tuple[tuple[str, str], ...]:
    """Every (system, config) the running torch can run: the universe a replay picks its
    oracle's targets from (a config whose torch names this release lacks is left out, as a
    campaign skips it: systems/needs.py)."""
    return available(tuple((s, c) for s, cs in CONFIGS.items() for c in cs))[0]


def targets_of(case: Case) -> list[tuple[str, str]]:
    """The observations the recorded oracle compares (Note [oracle registry]); a config a case
    names that is no longer known still replays alone."""
    f = case.finding
    return list(targets_for_finding(f, every_target()) or ((f.system, f.config),))


def observe_case(case: Case, with_replay_input: bool = True):
    """(eager observation or None, the observations its oracle compares), in this process, under
    the case's torch config; with the case's replay input as the one variant if asked."""
    p = case.program
    replay = case.replay_inputs if with_replay_input else None
    variants = json.dumps([] if replay is None else [to_jsonable(list(replay))])
    with torch_config_applied(case.torch_config):
        eager = run_job(Job(p.dumps(), "eager", "default", "[]")) if kind_of(p).has_eager else None
        obs = [run_job(Job(p.dumps(), s, c, variants)) for s, c in targets_of(case)]
    return eager, obs


def replay_case(case: Case) -> ReplayResult:
    eager, obs = observe_case(case)
    sigs = tuple(f.key for f in check_all(case.program, eager, obs))
    return ReplayResult(case, case.finding.key in sigs, sigs)
