"""The config model (shapefuzz/systems/configs.py): one registry every config table derives from,
export's front ends as fields instead of parsed names, and a clear error for an unknown name."""

from __future__ import annotations

import subprocess
import sys

import pytest

from shapefuzz import BadInput
from shapefuzz.systems import CONFIGS, DEFAULT_CONFIGS, OPT_IN, SYSTEMS
from shapefuzz.systems.configs import (
    REGISTRY,
    Config,
    config_of,
    configs_of,
    default_names,
    is_config,
)


def test_the_registry_lists_every_system_in_order_and_the_tables_derive_from_it():
    assert tuple(REGISTRY) == tuple(SYSTEMS)
    for system, configs in REGISTRY.items():
        assert all(c.system == system and c.name == name for name, c in configs.items())
        assert CONFIGS[system] + OPT_IN[system] == tuple(configs)
        assert set(DEFAULT_CONFIGS[system]) <= set(CONFIGS[system])
        assert DEFAULT_CONFIGS[system] == default_names(system)
        assert all(c.switches for c in configs.values())  # `shapefuzz systems` prints one line each


def test_export_front_ends_are_fields_not_parsed_names():
    assert config_of("export", "default") == Config("export", "default", config_of("export", "default").switches)
    both = config_of("export", "strict+named-dims")
    assert (both.strict, both.dims, both.decomposed, both.toggles) == (True, "named", False, "default")
    assert "strict=True" in both.switches and "named Dim" in both.switches
    dec = config_of("export", "named-dims+decomposed")
    assert (dec.strict, dec.dims, dec.decomposed) == (False, "named", True)
    assert config_of("export", "dim-auto").dims == "auto"
    assert config_of("export", "decomposed").decomposed
    toggle = config_of("export", "agfs=1")
    assert (toggle.toggles, toggle.strict, toggle.dims, toggle.decomposed) == ("agfs=1", False, "dynamic", False)


def test_toggle_configs_name_their_torch_toggles():
    assert all(c.toggles == c.name for s in ("make_fx", "torch-env") for c in configs_of(s))
    assert config_of("compile", "prefer-deferred").toggles == "prefer-deferred"
    assert config_of("compile", "dynamic=True").toggles == "default"
    assert config_of("ref", "agfs=2").toggles == "agfs=2" and config_of("ref", "all-off").toggles == "default"


def test_an_unknown_name_is_a_clear_error_naming_the_known_configs():
    with pytest.raises(BadInput, match=r"'nope' is not a config of export; known: default, strict, .*shapefuzz systems"):
        config_of("export", "nope")
    with pytest.raises(BadInput, match="unknown system 'nope'; known: eager, make_fx"):
        config_of("nope", "default")
    assert is_config("export", "strict") and not is_config("make_fx", "strict")


def test_a_config_refuses_fields_it_cannot_mean():
    with pytest.raises(ValueError, match="dims='static'"):
        Config("export", "x", "", dims="static")
    with pytest.raises(ValueError, match="export's"):
        Config("make_fx", "x", "", strict=True)


def test_the_registry_imports_no_torch():
    code = "import sys, shapefuzz.systems.configs; assert 'torch' not in sys.modules, sorted(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)
