"""Scoped patches of torch state, restored exactly, and a snapshot that proves they were.

Note [exact restore]: torch's config modules (torch.fx.experimental._config,
torch._dynamo.config, ...) keep their entries outside `vars()`, and their `__delattr__` *hides*
an entry for the rest of the process: a later read raises "... does not exist". A restore that
deletes what was "not there before" (a hand-written save/delattr, pytest 9's monkeypatch) breaks
every later reader of that flag. So a config module is patched only through its own
`config.patch(...)`, and every other owner (a class, a plain module) gets back exactly the entry
it had in its own `__dict__`: the old value, or no entry at all (a class then sees its base's
attribute again).

`torch_state()` reads every entry of the config modules the toggles touch, and the identity of
every attribute a slow path replaces; workers compare it after each job (Note [state guard] in
workers.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["HIDDEN", "patched", "state_drift", "stripped", "torch_state"]

#: what torch_state records for a config entry that can no longer be read
HIDDEN = "<hidden: reading it raises AttributeError>"


def _is_config_module(owner: Any) -> bool:
    from torch.utils._config_module import ConfigModule

    return isinstance(owner, ConfigModule)


@contextlib.contextmanager
def patched(owner: Any, attr: str, value: Any) -> Iterator[None]:
    """Set owner.attr for the block; on exit (also on an exception) the owner is as before."""
    if _is_config_module(owner):
        with owner.patch(**{attr: value}):
            yield
        return
    own = vars(owner)
    had_own, old = attr in own, own.get(attr)
    setattr(owner, attr, value)
    try:
        yield
    finally:
        if had_own:
            setattr(owner, attr, old)
        else:
            delattr(owner, attr)  # no entry of its own before: a class sees its base's again


@contextlib.contextmanager
def stripped(owner: Any, attr: str) -> Iterator[None]:
    """owner.attr is gone for the block, as on a torch that moved it (Note [torch names] in
    needs.py); on exit the owner is exactly as before (Note [exact restore]). A config module's
    entry is taken out of its `_config` table, never `delattr`ed (that would hide it for good),
    and put back at its place; a class or module loses its own entry only (a base's attribute
    cannot be stripped here: strip it from the base)."""
    if _is_config_module(owner):
        table = owner._config
        before = list(table.items())
        del table[attr]  # KeyError: no such entry to strip
        try:
            yield
        finally:
            table.clear()
            table.update(before)  # the same entry objects, in their order
            if hasattr(owner, "_is_dirty"):
                owner._is_dirty = True  # a hash read meanwhile is of the stripped table
        return
    own = vars(owner)
    if attr not in own:
        raise ValueError(f"{owner!r} has no entry {attr!r} of its own to strip; strip it from the "
                         "class or module that defines it")
    old = own[attr]
    delattr(owner, attr)
    try:
        yield
    finally:
        setattr(owner, attr, old)


def _config_modules(dynamo: bool = True) -> tuple[Any, ...]:
    import torch.fx.experimental._config

    if not dynamo:
        return (torch.fx.experimental._config,)
    import torch._dynamo.config

    return torch.fx.experimental._config, torch._dynamo.config


def _config_entries(module: Any) -> Iterator[tuple[str, Any]]:
    for name, entry in sorted(module._config.items()):
        if entry.deprecated:  # a read warns, and torch ignores the value
            continue
        try:
            yield f"{module.__name__}.{name}", repr(getattr(module, name))
        except AttributeError:
            yield f"{module.__name__}.{name}", HIDDEN


#: torch._C's torch-function dispatch state, read by torch_state; no shapefuzz patch touches it
DISPATCH_STATE = ("_is_torch_function_enabled", "_is_torch_function_all_disabled", "_len_torch_function_stack")


def torch_state(targets: tuple[tuple[Any, str], ...] = (), dynamo: bool = True) -> dict[str, Any]:
    """Every entry of the torch config modules (by repr), torch.fx.config's flag, and for each
    (owner, attr) in `targets` the identity of the owner's own entry (None when it has none).
    `dynamo=False` leaves out torch._dynamo.config, whose 150 entries are most of the cost (0.6
    of 0.8 ms; Note [state guard] in campaign/workers.py says when that is enough)."""
    import torch
    import torch.fx.config as fx_config

    out: dict[str, Any] = {}
    for module in _config_modules(dynamo):
        out.update(_config_entries(module))
    out["torch.fx.config.do_not_emit_stack_traces"] = repr(fx_config.do_not_emit_stack_traces)
    # torch-function dispatch left disabled (a DisableTorchFunction never exited) makes every
    # later trace in the process take other paths: x[u] in export, torch.sym_not in runtime asserts
    out.update((f"torch._C.{name}", getattr(torch._C, name)()) for name in DISPATCH_STATE)
    for owner, attr in targets:
        entry = vars(owner).get(attr)
        out[f"{getattr(owner, '__qualname__', owner.__name__)}.{attr}"] = (
            None if entry is None else id(entry))
    return out


def state_drift(before: dict[str, Any], after: dict[str, Any], partial: bool = False) -> list[str]:
    """One line per entry that differs: `name: before -> after`. `partial`: `after` read only
    some entries (torch_state(dynamo=False)); the others are not compared."""
    keys = set(after) if partial else set(before) | set(after)
    return [f"{k}: {before.get(k, '<absent>')} -> {after.get(k, '<absent>')}"
            for k in sorted(keys) if before.get(k) != after.get(k)]


def torch_owned(drift: list[str]) -> bool:
    """Whether a drift is only in torch's own dispatch state (torch._C's torch-function flags
    and mode stack), which no shapefuzz patch touches: torch left it changed, e.g. a
    DisableTorchFunction that an exception in Dynamo's guard building skipped (reports/torch-2.13,
    "torch-function state left disabled")."""
    owned = {f"torch._C.{name}" for name in DISPATCH_STATE}
    return bool(drift) and all(d.split(":", 1)[0] in owned for d in drift)
