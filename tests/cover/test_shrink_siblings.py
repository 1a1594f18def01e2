"""Every shrink finishes (issue 14): the findings one program shows beside the first one (here
the same planted ref bug under three configs, three signatures) are shrunk too, each from that
program, instead of being saved as found."""

from __future__ import annotations

from shapefuzz import systems
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
    shape = [b for b in camp.bugs.values() if b.finding.kind == "symbolic-shape"]
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
    shape = [b for b in camp.bugs.values() if b.finding.kind == "symbolic-shape"]
    assert {b.finding.config for b in shape} == set(CONFIGS), [b.finding.key for b in shape]
    assert all(b.shrunk for b in shape)
    assert len({b.program.dumps() for b in shape}) == 1  # the first one's shrunk program
    assert len([s for s in shrunk if s in {b.finding.key for b in shape}]) == 1, shrunk
