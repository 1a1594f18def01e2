"""Every shrink finishes (issue 14): the findings one program shows beside the first one (here
the same planted ref bug under three configs, three signatures) are shrunk too, each from that
program, instead of being saved as found."""

from __future__ import annotations

import time

from shapefuzz import systems
from shapefuzz.campaign import shrinking
from shapefuzz.campaign.engine import Campaign, CampaignSettings
from shapefuzz.campaign.shrinking import Shrinker
from shapefuzz.ops import get_op
from shapefuzz.strategies import GenSettings
from shapefuzz.systems.jobs import run_job

CONFIGS = ("default", "all-off", "off:expr-cache")


def _plant_narrow(monkeypatch) -> None:
    """narrow() claims one more element than it has whenever start is not 0."""
    narrow = type(get_op("narrow"))
    orig = narrow.symbolic

    def bad(self, args, n_out, s):
        (out,) = orig(self, args, n_out, s)
        if s.static(args[2]) == 0:
            return (out,)
        d = args[1]
        return (s.tensor(out.shape[:d] + (out.shape[d] + 1,) + out.shape[d + 1:], out.dtype),)

    monkeypatch.setattr(narrow, "symbolic", bad)


def test_findings_beside_the_first_are_shrunk_too(monkeypatch):
    monkeypatch.setitem(systems.KINDS, "ref", ("tensors",))
    _plant_narrow(monkeypatch)
    cfg = CampaignSettings(tuple(("ref", c) for c in CONFIGS), budget_s=600, seed=0,
                           gen=GenSettings(families=("layout",)), shrink_budget_s=10,
                           max_examples=40)
    first: dict[str, int] = {}  # each finding's program size when it was first met

    def on_bug(bug) -> None:
        first.setdefault(bug.finding.key, bug.program.size())

    camp = Campaign(cfg, lambda jobs: [run_job(j) for j in jobs], on_bug=on_bug).run()
    shape = [b for b in camp.bugs.values() if b.finding.symptom == "symbolic-shape"]
    assert {b.finding.config for b in shape} == set(CONFIGS), [b.finding.key for b in shape]
    assert all(b.shrunk for b in shape), [(b.finding.key, b.shrunk) for b in shape]
    # each was shrunk from its own first program, not only the first finding of that program
    assert all(b.program.size() < first[b.finding.key] for b in shape), [
        (b.finding.key, first[b.finding.key], b.program.size()) for b in shape]


def test_siblings_take_the_shrunk_program_of_their_bucket(monkeypatch):
    """The planted ref bug shows under three configs in each program: one Hypothesis shrink,
    and each sibling takes its program after one evaluation."""
    monkeypatch.setitem(systems.KINDS, "ref", ("tensors",))
    _plant_narrow(monkeypatch)
    shrunk: list[str] = []
    pending = Shrinker.pending
    monkeypatch.setattr(Shrinker, "pending",
                        lambda self: shrunk.append(self.camp.pending_shrink["signature"]) or pending(self))
    cfg = CampaignSettings(tuple(("ref", c) for c in CONFIGS), budget_s=600, seed=0,
                           gen=GenSettings(families=("layout",)), shrink_budget_s=10, max_examples=40)
    camp = Campaign(cfg, lambda jobs: [run_job(j) for j in jobs]).run()
    shape = [b for b in camp.bugs.values() if b.finding.symptom == "symbolic-shape"]
    assert {b.finding.config for b in shape} == set(CONFIGS), [b.finding.key for b in shape]
    assert all(b.shrunk for b in shape)
    assert len({b.program.dumps() for b in shape}) == 1  # the first one's shrunk program
    assert len([s for s in shrunk if s in {b.finding.key for b in shape}]) == 1, shrunk


def _prune_runs(monkeypatch, share: float) -> list[int]:
    """Evaluations each pruning made, with evaluations of 0.4 s while it prunes, a 2 s shrink
    budget, and every step of pruning keeping the finding (each candidate is the program
    itself), so only `tries` and the share stop it."""
    monkeypatch.setitem(systems.KINDS, "ref", ("tensors",))
    monkeypatch.setattr(shrinking, "PRUNE_SHARE", share)
    _plant_narrow(monkeypatch)
    pruning, runs = [False], []
    orig = Shrinker._prune

    def counted_prune(self, bug, tries=8):
        pruning[0] = True
        runs.append(0)
        try:
            orig(self, bug, tries)
        finally:
            pruning[0] = False

    def jobs(js):
        if pruning[0]:
            time.sleep(0.4)
            runs[-1] += 1
        return [run_job(j) for j in js]

    monkeypatch.setattr(Shrinker, "_prune", counted_prune)
    monkeypatch.setattr(shrinking, "candidates", lambda program: [program])
    cfg = CampaignSettings((("ref", "default"),), budget_s=600, seed=0,
                           gen=GenSettings(families=("layout",)), shrink_budget_s=2, max_examples=40)
    Campaign(cfg, jobs).run()
    return runs


def test_pruning_stops_within_its_share_of_the_shrink_budget(monkeypatch):
    """Note [prune budget]: each pruning stops after its share of the shrink budget (1 s: the
    evaluation under way then included, so at most 3 of 0.4 s), where without the share it
    runs up to 8 evaluations."""
    share = shrinking.PRUNE_SHARE
    unbounded = _prune_runs(monkeypatch, 1000.0)
    assert unbounded and max(unbounded) > 3, unbounded  # the share is what stops it
    bounded = _prune_runs(monkeypatch, share)
    assert bounded and max(bounded) <= 3, bounded
