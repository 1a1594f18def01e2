"""Note [exact restore]: every kind of owner a patch touches is back as it was after the block,
value and readability, also when the block raises."""

from __future__ import annotations

import contextlib
import types
from dataclasses import replace

import pytest
import torch._dynamo.config as dynamo_config
import torch.fx.config as fx_config
import torch.fx.experimental._config as fxx

from shapefuzz.systems.patching import HIDDEN, patched, state_drift, torch_state
from shapefuzz.systems.torch_toggles import CONFIGS, PATCH_TARGETS, applied


class Base:
    inherited = "base"


class Child(Base):
    own = "child"


MODULE = types.ModuleType("planted_module")
MODULE.present = 1

#: (owner, attribute, value in the block, how to read it afterwards)
OWNERS = [
    pytest.param(fxx, "inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY", True, id="fx-config-module"),
    pytest.param(dynamo_config, "automatic_dynamic_shapes", False, id="dynamo-config-module"),
    pytest.param(fx_config, "do_not_emit_stack_traces", True, id="plain-torch-module"),
    pytest.param(Child, "own", "patched", id="class-own-attribute"),
    pytest.param(Child, "inherited", "patched", id="class-inherited-attribute"),
    pytest.param(MODULE, "present", 2, id="module-global"),
    pytest.param(MODULE, "absent", 3, id="module-global-absent"),
]


def _read(owner, attr):
    return getattr(owner, attr, "<absent>")


@pytest.mark.parametrize(("owner", "attr", "value"), OWNERS)
@pytest.mark.parametrize("raises", [False, True], ids=["exit", "exception"])
def test_patched_restores_value_and_readability(owner, attr, value, raises):
    before = _read(owner, attr)
    own_before = attr in vars(owner)
    with pytest.raises(RuntimeError) if raises else contextlib.nullcontext(), \
            patched(owner, attr, value):
        assert getattr(owner, attr) == value
        if raises:
            raise RuntimeError("the block fails")
    assert _read(owner, attr) == before
    assert (attr in vars(owner)) == own_before  # a class sees its base's attribute again


def test_patching_a_config_module_twice_in_a_row_keeps_the_entry_readable():
    for _ in range(2):
        with patched(dynamo_config, "automatic_dynamic_shapes", False):
            pass
    assert dynamo_config.automatic_dynamic_shapes is True


@pytest.mark.parametrize("name", sorted(CONFIGS) + ["all-slow+agfs=2+stack-traces-off"])
def test_every_config_leaves_torch_state_as_it_found_it(name):
    before = torch_state(PATCH_TARGETS)
    with pytest.raises(RuntimeError), applied(name, frontend="export"):
        raise RuntimeError("a trace that fails inside the config")
    with applied(name, frontend="export"):
        pass
    assert state_drift(before, torch_state(PATCH_TARGETS)) == []


def test_state_drift_sees_a_hidden_entry_and_a_replaced_attribute():
    before = torch_state(PATCH_TARGETS)
    # what pytest 9's monkeypatch (and the old hand-written restore) did to a config entry
    delattr(fxx, "inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY")
    try:
        with patched(*PATCH_TARGETS[0], property(lambda self: 0)):
            drift = state_drift(before, torch_state(PATCH_TARGETS))
    finally:
        fxx.inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY = False  # a set un-hides it
    assert any("inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY" in d and HIDDEN in d for d in drift), drift
    assert any(d.startswith("SymNode.expr:") for d in drift), drift
    assert state_drift(before, torch_state(PATCH_TARGETS)) == []


def test_state_drift_sees_torch_function_dispatch_left_disabled():
    """A DisableTorchFunction a job never exits changes every later trace in the worker (seen in
    campaigns: x[u] then fails in export, a runtime assert's torch.sym_not becomes a method call
    on a bool): the state guard must see it."""
    import torch

    before = torch_state(PATCH_TARGETS)
    guard = torch._C.DisableTorchFunction()
    guard.__enter__()
    try:
        drift = state_drift(before, torch_state(PATCH_TARGETS))
    finally:
        guard.__exit__(None, None, None)
    assert any(d.startswith("torch._C._is_torch_function_enabled:") for d in drift), drift
    assert state_drift(before, torch_state(PATCH_TARGETS)) == []


def test_a_check_without_dynamo_compares_only_what_it_read():
    """Note [state guard]: a Dynamo-free job's check reads no torch._dynamo.config entry, is not
    fooled by their absence, and still sees a changed fx config entry or patched attribute."""
    full = torch_state(PATCH_TARGETS)
    part = torch_state(PATCH_TARGETS, dynamo=False)
    assert not any(k.startswith("torch._dynamo.config.") for k in part)
    assert any(k.startswith("torch._dynamo.config.") for k in full) and set(part) < set(full)
    assert state_drift(full, part, partial=True) == []
    assert state_drift(full, part) != []  # compared whole, the entries it left out are drift
    with fxx.patch(translation_validation=not fxx.translation_validation):
        drift = state_drift(full, torch_state(PATCH_TARGETS, dynamo=False), partial=True)
    assert [d.split(":")[0] for d in drift] == ["torch.fx.experimental._config.translation_validation"], drift


def test_settings_are_applied_as_a_user_applies_them():
    """Note [user settings]: make_fx builds its own ShapeEnv (no patch of torch), export and
    compile get only what they take no argument for forced, and findings there are low."""
    from torch.fx.experimental import symbolic_shapes as ss

    from shapefuzz.oracles.base import _outside_supported
    from shapefuzz.oracles.findings import Finding
    from shapefuzz.systems.torch_toggles import toggles, unsupported_settings

    orig = ss.ShapeEnv.__init__
    with applied("no-specialize-zero-one") as cfg:
        assert ss.ShapeEnv.__init__ is orig and cfg.env_kwargs == {"specialize_zero_one": False}
    with applied("no-duck-shape", frontend="export") as cfg:
        assert ss.ShapeEnv.__init__ is orig and ss.ShapeEnv().duck_shape is False  # a config flag
    assert toggles("no-specialize-zero-one").unsupported("make_fx") == {}
    assert unsupported_settings("export", "no-specialize-zero-one") == ("specialize_zero_one=False",)
    assert unsupported_settings("export", "strict") == () == unsupported_settings("make_fx", "no-specialize-zero-one")
    f = Finding("eager-agreement", "critical", "export", "no-specialize-zero-one", "trace-error", "s", "d", "k")
    low = _outside_supported(f)
    assert low.severity == "low" and "outside torch's supported settings" in low.detail
    assert _outside_supported(replace(f, config="default")).severity == "critical"
