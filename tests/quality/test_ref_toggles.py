"""A bug planted in one optimization's path of the reference ShapeEnv is found by a short
campaign over every ref config, and the config differential names that optimization."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from shapefuzz.campaign import Campaign, CampaignSettings
from shapefuzz.systems import CONFIGS
from shapefuzz.workers import run_job

_spec = importlib.util.spec_from_file_location("ref_plants", Path(__file__).parents[1] / "cover" / "test_ref.py")
plants = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plants)


def _campaign(budget: float) -> Campaign:
    cfg = CampaignSettings(tuple(("ref", c) for c in CONFIGS["ref"]), budget_s=budget, seed=0,
                           shrink_budget_s=10)
    return Campaign(cfg, lambda jobs: [run_job(j) for j in jobs]).run()


def test_unmodified_reference_has_no_finding():
    camp = _campaign(10)
    assert camp.stats.programs > 50
    assert not camp.bugs, [b.finding.signature for b in camp.bugs.values()]


# The smart-sort plant only changes which side of s0 == s1 + 2 is eliminated: s0 -> s1 + 2 or
# s1 -> s0 - 2 are equivalent, so the observation is the same up to equivalence, which is what
# the config differential compares (tests/cover/test_ref.py sees the textual change).
_EQUIVALENT_ONLY = {"smart-sort"}


@pytest.mark.parametrize("opt", sorted(set(plants.PLANTED) - _EQUIVALENT_ONLY))
def test_planted_bug_is_found_and_blamed(opt, monkeypatch):
    module, name, bad = plants.PLANTED[opt]
    monkeypatch.setattr(module, name, bad)
    camp = _campaign(25)
    blamed = {b.finding.signature.rsplit(":", 1)[1] for b in camp.bugs.values()
              if b.finding.oracle == "config-differential"}
    assert opt in blamed, f"config differential blamed {blamed} for a bug planted in {opt}"
