"""Which named configs the running torch can run: each toggle, setting and slow path declares the
torch names it needs (Need values, next to the code that patches them), and `unavailable` reads
those declarations, never a table of its own.

Note [torch names]: shapefuzz patches and reads torch's private names (docs/explanation/torch-internals.md),
and a user's torch (a release after 2.13, a nightly, a source build) may have moved one. A config
whose names are gone is *unavailable*: `shapefuzz systems` says so, a campaign skips it with one
line (stderr) and records it in report.json's `skipped_configs`; it is never an error outcome, a
finding or a shapefuzz bug. tests/cover/test_needs.py checks that on the torch CI runs every
default config is available, so a real rename fails CI loudly instead of being skipped quietly.
This module imports no torch until asked (the campaign process lists configs without it)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from shapefuzz.systems.compile_settings import settings_of
from shapefuzz.systems.configs import config_of, is_config
from shapefuzz.systems.torch_names import Need

__all__ = ["Need", "Skip", "available", "missing", "needs_of", "unavailable"]


def missing(need: Need) -> str:
    """What the running torch lacks of `need`, as the end of a sentence ("has no X"), or ""."""
    import inspect
    import pkgutil

    import torch

    version = f"torch {torch.__version__}"
    try:
        obj = pkgutil.resolve_name(need.name)
    except (ImportError, AttributeError):  # a config module raises AttributeError for a gone entry
        return f"{version} has no {need.name}"
    if need.fragment:
        try:
            found = inspect.getsource(inspect.unwrap(obj)).count(need.fragment)
        except (OSError, TypeError):  # no source to rewrite (a compiled or C function)
            found = 0
        if found != 1:
            return f"{version}'s {need.name} no longer holds `{need.fragment}` (the slow path rewrites it)"
    if need.param:
        try:
            params = inspect.signature(obj).parameters
        except (TypeError, ValueError):
            params = {}
        if need.param not in params:
            return f"{version}'s {need.name} takes no argument {need.param}"
    return ""


@dataclass(frozen=True, slots=True)
class Skip:
    """A (system, config) the running torch cannot run, and why (one line)."""

    system: str
    config: str
    reason: str

    def line(self) -> str:
        return f"shapefuzz: {self.system}:{self.config} skipped: {self.reason}"

    def to_json(self) -> dict[str, str]:
        return {"system": self.system, "config": self.config, "reason": self.reason}


def needs_of(system: str, config: str) -> tuple[Need, ...]:
    """The torch names (system, config) needs beyond what the system itself uses, read from the
    configs' own declarations: torch_toggles for torch-env, make_fx and export's toggle configs,
    compile_settings for compile. ref and eager patch nothing of torch."""
    if system in ("ref", "eager"):
        return ()
    if system == "compile":
        s = settings_of(config)
        return tuple(Need(n) for n in s.torch_names()) + _toggle_needs(s.toggles)
    # an export front end's toggles are "default": it uses the public torch.export API only
    return _toggle_needs(config_of(system, config).toggles if is_config(system, config) else config)


def _toggle_needs(config: str) -> tuple[Need, ...]:
    from shapefuzz.systems import torch_toggles  # lazy: configs list without torch

    try:
        return torch_toggles.needs(config)
    except ValueError:  # a name no torch_toggles config knows: nothing of torch to check
        return ()


def unavailable(targets: Iterable[tuple[str, str]]) -> tuple[Skip, ...]:
    """One Skip per target whose needs the running torch lacks (the first missing name)."""
    out = []
    for system, config in targets:
        why = next((m for m in map(missing, needs_of(system, config)) if m), "")
        if why:
            out.append(Skip(system, config, why))
    return tuple(out)


def available(targets: tuple[tuple[str, str], ...]) -> tuple[tuple[tuple[str, str], ...], tuple[Skip, ...]]:
    """(the targets the running torch can run, the Skips of the others)."""
    skips = unavailable(targets)
    gone = {(s.system, s.config) for s in skips}
    return tuple(t for t in targets if t not in gone), skips
