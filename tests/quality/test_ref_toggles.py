"""A bug planted in one optimization's path of the reference ShapeEnv is found by a short
campaign over every ref config, and the config differential names that optimization; a bug
planted in one op's symbolic shape rule is found by a short campaign over tensor programs, and
the unmodified reference stays quiet on both kinds of program."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from shapefuzz import systems
from shapefuzz.campaign.engine import Campaign, CampaignSettings
from shapefuzz.ops import get_op
from shapefuzz.systems import CONFIGS
from shapefuzz.systems.jobs import run_job

_spec = importlib.util.spec_from_file_location("ref_plants", Path(__file__).parents[1] / "cover" / "test_ref.py")
plants = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plants)


@pytest.fixture
def kind(monkeypatch):
    """Run `ref` campaigns on one program kind only."""

    def only(k: str) -> None:
        monkeypatch.setitem(systems.KINDS, "ref", (k,))

    return only


def _campaign(budget: float, configs=CONFIGS["ref"], max_examples: int | None = None,
              shrink_s: float = 10) -> Campaign:
    cfg = CampaignSettings(tuple(("ref", c) for c in configs), budget_s=budget, seed=0,
                           shrink_budget_s=shrink_s, max_examples=max_examples)
    return Campaign(cfg, lambda jobs: [run_job(j) for j in jobs]).run()


def test_unmodified_reference_has_no_finding(kind):
    kind("questions")
    camp = _campaign(10)
    assert camp.stats.programs > 30
    assert not camp.bugs, [b.finding.key for b in camp.bugs.values()]


def test_unmodified_reference_has_no_finding_on_tensor_programs(kind):
    kind("tensors")
    camp = _campaign(20)
    assert camp.stats.programs > 15
    assert not camp.bugs, [b.finding.key for b in camp.bugs.values()]


def test_a_bug_planted_in_a_shape_rule_is_found(kind, monkeypatch):
    """narrow() claims one more element than it has whenever start is not 0."""
    kind("tensors")
    narrow = type(get_op("narrow"))
    orig = narrow.symbolic

    def bad(self, args, n_out, s):
        (out,) = orig(self, args, n_out, s)
        if s.static(args[2]) == 0:
            return (out,)
        d = args[1]
        return (s.tensor(out.shape[:d] + (out.shape[d] + 1,) + out.shape[d + 1:], out.dtype),)

    monkeypatch.setattr(narrow, "symbolic", bad)
    camp = _campaign(40, ("default",))
    found = [b for b in camp.bugs.values() if b.finding.system == "ref"]
    assert any(b.finding.symptom == "symbolic-shape" for b in found), [b.finding.key for b in found]
    # split, chunk and the narrow_full branch narrow too (multi.split_by, split_with_sizes)
    users = {"narrow", "split", "chunk", "unbind", "branch"}
    assert all(users & set(b.program.op_names()) for b in found), [
        b.program.pretty() for b in found]


# The smart-sort plant only changes which side of s0 == s1 + 2 is eliminated: s0 -> s1 + 2 or
# s1 -> s0 - 2 are equivalent, so the observation is the same up to equivalence, which is what
# the config differential compares (tests/cover/test_ref.py sees the textual change).
_EQUIVALENT_ONLY = {"smart-sort"}
TOGGLE_PLANTS = sorted(set(plants.PLANTED) - _EQUIVALENT_ONLY)


@pytest.fixture(scope="module")
def planted_everywhere():
    """One campaign with every toggle's plant in place at once (a campaign per plant ran the
    same 1500 programs six times). Each plant sits on its toggle's own path (the function is
    called only when that toggle is on), so a bisection step that turns one toggle on over
    all-off runs exactly that plant, as in a campaign with that plant alone; all-off against
    default: every toggle differs, so each blame is a real bisection. A fixed number of
    programs (the same ones whatever the machine's load); seed 0 meets the six plants at
    programs 57 to 1179 (the last, expr-cache, at 1179: 2000 leave a margin). Shrinking is not
    what this checks: 1 s each."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(systems.KINDS, "ref", ("questions",))
        for opt in TOGGLE_PLANTS:
            module, name, bad = plants.PLANTED[opt]
            mp.setattr(module, name, bad)
        return _campaign(900, ("all-off", "default"), max_examples=2000, shrink_s=1)


def test_every_planted_toggle_is_blamed_alone(planted_everywhere):
    """Each plant is found and named on its own; a blame naming two toggles (seed 0: one
    relationals+skip-static after program 1500) is two plants meeting on one program, so it
    may only name planted toggles: never smart-sort (no plant) or the baseline."""
    blamed = _blamed(planted_everywhere)
    assert {b for b in blamed if "+" not in b} == set(TOGGLE_PLANTS), blamed
    assert all(set(b.split("+")) <= set(TOGGLE_PLANTS) for b in blamed), blamed


def _blames(program) -> set[str]:
    """The toggles the config differential blames for `program`, observed afresh by ref."""
    from shapefuzz.oracles.differential import config_differential
    from shapefuzz.systems.ref.system import RefSystem

    obs = [RefSystem().observe(program, c) for c in ("all-off", "default")]
    return {f.signature.config for f in config_differential(obs, program)}


def _blamed_on(camp, blame: str) -> list:
    return [b for b in camp.bugs.values()
            if b.finding.oracle == "config-differential" and b.finding.signature.config == blame]


def _assert_caused_by_its_plants(bug, blame: str) -> None:
    """The finding blamed on `blame` is those plants': its program shows no difference on the
    unmodified reference, and with the plants of `blame` alone in place the blame is `blame`
    and nothing else (what a campaign with those plants alone would report for it)."""
    assert _blames(bug.program) == set(), bug.program.pretty()
    with pytest.MonkeyPatch.context() as mp:
        for opt in blame.split("+"):
            module, name, bad = plants.PLANTED[opt]
            mp.setattr(module, name, bad)
        assert _blames(bug.program) == {blame}, (blame, bug.program.pretty())


@pytest.mark.parametrize("opt", TOGGLE_PLANTS)
def test_planted_bug_is_found_and_blamed(opt, planted_everywhere):
    found = _blamed_on(planted_everywhere, opt)
    assert found, f"no finding blamed on {opt}: {_blamed(planted_everywhere)}"
    for bug in found:
        _assert_caused_by_its_plants(bug, opt)


def test_a_blame_on_two_toggles_is_their_two_plants(planted_everywhere):
    pairs = sorted(b for b in _blamed(planted_everywhere) if "+" in b)
    if not pairs:  # seed 0's 2000 programs meet one (relationals+skip-static); none: nothing to check
        pytest.skip("no blame on two toggles in this campaign")
    for blame in pairs:
        for bug in _blamed_on(planted_everywhere, blame):
            _assert_caused_by_its_plants(bug, blame)


def _blamed(camp) -> set[str]:
    return {b.finding.signature.config for b in camp.bugs.values()
            if b.finding.oracle == "config-differential"}


def test_planted_bug_in_aggressive_range_analysis_is_blamed_on_agfs(monkeypatch, kind):
    """agfs=1's range-only answers claim True for everything: bisection over the toggles that
    differ between all-off and agfs=1 (all eight) names the level alone."""
    kind("questions")
    monkeypatch.setattr(plants.eval_mod, "range_only", lambda env, expr: True)
    # shrinking is not what this checks
    camp = _campaign(900, ("all-off", "agfs=1", "default"), max_examples=600, shrink_s=1)
    assert _blamed(camp) == {"agfs"}, _blamed(camp)


def test_a_bug_in_the_baseline_path_is_blamed_on_the_baseline(monkeypatch, kind):
    """The no-hint sentinel's slow path (all-off's: retry compute_hint) returns every known int
    hint off by one, so all-off guards on wrong hints: where the baseline's own answers are
    wrong the blame says so instead of naming a toggle; where they are not (a difference the
    concrete answers do not show) the bisection names the planted toggle, nothing else."""
    kind("questions")
    real = plants.env_mod.hint_retry

    def off_by_one(env, node):
        v = real(env, node)
        return v + 1 if type(v) is int else v

    monkeypatch.setattr(plants.env_mod, "hint_retry", off_by_one)
    camp = _campaign(900, ("all-off", "default", "off:no-hint"), max_examples=300, shrink_s=1)
    cds = [b for b in camp.bugs.values() if b.finding.oracle == "config-differential"]
    on_base = [b for b in cds if b.finding.signature.config == "all-off"]
    assert on_base and all("baseline all-off is itself wrong" in b.finding.detail for b in on_base)
    assert _blamed(camp) <= {"all-off", "no-hint"}, _blamed(camp)
