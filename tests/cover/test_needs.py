"""Note [torch names] (shapefuzz/systems/needs.py): a config whose torch names the running torch
lacks is reported unavailable, listed so by `shapefuzz systems` and skipped by a campaign; on the
torch CI runs, every config is available (a real rename fails here, loudly)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch.fx.experimental._config as fxx
from click.testing import CliRunner
from torch.fx.experimental import sym_node as sn
from torch.fx.experimental import symbolic_shapes as ss

from shapefuzz import BadInput
from shapefuzz.systems import CONFIGS, OPT_IN, available, unavailable
from shapefuzz.systems.needs import Need, missing
from shapefuzz.systems.patching import patched, state_drift, stripped, torch_state
from shapefuzz.systems.torch_toggles import PATCH_TARGETS, SLOW_PATHS, needs

FAST = "torch.fx.experimental.symbolic_shapes.ShapeEnv._maybe_fast_eval_comparison"
EVERY = tuple((s, c) for s in CONFIGS for c in CONFIGS[s] + tuple(OPT_IN.get(s, ())))


def test_every_config_is_available_on_the_running_torch():
    """A rename in this torch must fail CI, not skip its configs quietly."""
    assert unavailable(EVERY) == ()


def test_a_stripped_method_makes_its_configs_unavailable_and_the_others_stay():
    before = vars(ss.ShapeEnv)["_maybe_fast_eval_comparison"]
    targets = (("torch-env", "default"), ("torch-env", "slow:fast-eval-comparison"),
               ("torch-env", "all-slow"), ("torch-env", "slow:no-hint"),
               ("compile", "slow:fast-eval-comparison"), ("make_fx", "agfs=2"))
    with stripped(ss.ShapeEnv, "_maybe_fast_eval_comparison"):
        kept, skips = available(targets)
    assert vars(ss.ShapeEnv)["_maybe_fast_eval_comparison"] is before  # restored exactly
    assert kept == (("torch-env", "default"), ("torch-env", "slow:no-hint"), ("make_fx", "agfs=2"))
    assert [(k.system, k.config) for k in skips] == [
        ("torch-env", "slow:fast-eval-comparison"), ("torch-env", "all-slow"),
        ("compile", "slow:fast-eval-comparison")]
    for k in skips:
        assert k.reason.endswith(f"has no {FAST}"), k.reason
        line = k.line()
        assert "\n" not in line and line.startswith(f"shapefuzz: {k.system}:{k.config} skipped: torch ")


def test_a_stripped_config_entry_is_named_and_restored_exactly():
    before = torch_state(PATCH_TARGETS, dynamo=False)
    with stripped(fxx, "aggressive_guard_free_semantics"):
        skips = unavailable([("torch-env", "agfs=1"), ("export", "agfs=2"), ("export", "strict")])
        assert [k.config for k in skips] == ["agfs=1", "agfs=2"]
        assert "has no torch.fx.experimental._config.aggressive_guard_free_semantics" in skips[0].reason
    assert state_drift(before, torch_state(PATCH_TARGETS, dynamo=False)) == []
    assert fxx.aggressive_guard_free_semantics == 0  # readable again (a delattr would hide it)


def test_a_rewrite_whose_source_text_moved_is_unavailable():
    def _optimized_add(lhs, rhs, lhs_is_optimized_summation=False, rhs_is_optimized_summation=False):
        return lhs + rhs  # torch rewrote it: the text the slow path replaces is gone

    with patched(sn, "_optimized_add", _optimized_add):
        (skip,) = unavailable([("torch-env", "slow:add-from-args")])
    assert "no longer holds `result = sympy.Add._from_args(" in skip.reason


def test_a_setting_needs_its_keyword():
    assert missing(Need("torch.fx.experimental.symbolic_shapes.ShapeEnv._init", param="duck_shape")) == ""
    why = missing(Need("torch.fx.experimental.symbolic_shapes.ShapeEnv._init", param="no_such_setting"))
    assert why.endswith("ShapeEnv._init takes no argument no_such_setting")


def test_every_patched_attribute_is_declared_by_a_slow_path():
    """The names a slow path replaces are the ones it declares (ShapeEnv.__init__ and
    SymNode.__init__ are patched through names every torch has)."""
    def dotted(owner, attr: str) -> str:
        if isinstance(owner, type):
            return f"{owner.__module__}.{owner.__qualname__}.{attr}"
        return f"{owner.__name__}.{attr}"

    declared = {n.name for p in SLOW_PATHS.values() for n in p.needs}
    assert declared == {n.name for n in needs("all-slow")}
    assert {dotted(o, a) for o, a in PATCH_TARGETS if a != "__init__"} <= declared


def test_systems_lists_an_unavailable_config_with_its_reason():
    from shapefuzz.cli import cli

    with stripped(ss.ShapeEnv, "_maybe_fast_eval_comparison"):
        out = CliRunner().invoke(cli, ["systems"]).output
    line = next(x for x in out.splitlines() if x.strip().startswith("slow:fast-eval-comparison"))
    assert "[unavailable: torch " in line and f"has no {FAST}; a campaign skips it]" in line
    quiet = next(x for x in out.splitlines() if x.strip().startswith("slow:no-hint"))
    assert "unavailable" not in quiet
    assert "unavailable" not in CliRunner().invoke(cli, ["systems"]).output  # restored


def _opts(targets, tmp_path: Path):
    from shapefuzz.campaign.run import FuzzOptions
    from shapefuzz.strategies.settings import GenSettings

    return FuzzOptions(targets, 10.0, 1, 0, 1, tmp_path / "out", GenSettings(), (), 10.0, 5.0,
                       False, True)


def test_a_campaign_skips_an_unavailable_config_with_one_line(tmp_path, capsys):
    from shapefuzz.campaign.run import drop_unavailable

    targets = (("torch-env", "default"), ("torch-env", "slow:fast-eval-comparison"))
    with stripped(ss.ShapeEnv, "_maybe_fast_eval_comparison"):
        opts = drop_unavailable(_opts(targets, tmp_path))
    assert opts.targets == (("torch-env", "default"),)
    assert [k.to_json()["config"] for k in opts.skipped] == ["slow:fast-eval-comparison"]
    assert set(opts.skipped[0].to_json()) == {"system", "config", "reason"}
    err = capsys.readouterr().err.splitlines()
    assert err == [f"shapefuzz: torch-env:slow:fast-eval-comparison skipped: {opts.skipped[0].reason}"]
    assert not (tmp_path / "out").exists()


def test_a_campaign_of_only_unavailable_configs_is_bad_input(tmp_path):
    from shapefuzz.campaign.run import drop_unavailable

    with stripped(ss.ShapeEnv, "_maybe_fast_eval_comparison"), pytest.raises(BadInput) as e:
        drop_unavailable(_opts((("torch-env", "slow:fast-eval-comparison"),), tmp_path))
    assert "\n" not in str(e.value) and FAST in str(e.value)


def test_stripping_refuses_an_inherited_attribute():
    class Child(ss.ShapeEnv):
        pass

    with pytest.raises(ValueError, match="of its own"), stripped(Child, "_maybe_fast_eval_comparison"):
        pass


def test_a_replay_picks_its_targets_among_the_available_configs_only():
    """A case replayed on a torch that lacks a config's names does not run that config as one
    of its oracle's targets (it would be an error outcome, not the bug)."""
    from shapefuzz.cases.replay import every_target

    assert ("torch-env", "slow:fast-eval-comparison") in every_target()
    with stripped(ss.ShapeEnv, "_maybe_fast_eval_comparison"):
        targets = every_target()
    assert ("torch-env", "slow:fast-eval-comparison") not in targets and ("torch-env", "default") in targets
