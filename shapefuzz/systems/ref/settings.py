"""The reference ShapeEnv's toggles and its named configs.

One field per optimization of seed 000 (each switches between two real code paths), plus the
ShapeEnv settings that change what may be assumed. Like torch's ShapeEnvSettings, every
result-changing choice lives in this one frozen value, and the library never reads the
environment: the CLI turns a config name into a RefSettings with `settings_for`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields, replace

__all__ = ["ALL_OFF", "OPTIMIZATIONS", "RefSettings", "config_names", "settings_for", "toggle_parts"]


@dataclass(frozen=True, slots=True)
class RefSettings:
    # 1. guard_or_false/true on hint-less expressions: 0 full static reasoning, 1 range analysis
    #    only, 2 the fallback at once (also skips the fast comparison path). Changes answers
    #    (a claim may become its fallback), so it is not part of "all on" / "all off".
    aggressive_guard_free_semantics: int = 0
    # 2. when False, each guard and deferred assert records a stack summary
    do_not_emit_stack_traces: bool = True
    # 3. cache each value's replaced expression, invalidated by the replacements version counter
    expr_cache: bool = True
    # 4. orient replacements by reading backed hints from the dict, not through size_hint()
    smart_sort_direct_hint: bool = True
    # 5. a single unbacked symbol vs a constant is built with evaluate=False
    unevaluated_unbacked_relationals: bool = True
    # 6. a value without a hint remembers it (_NO_HINT) instead of retrying compute_hint
    no_hint_sentinel: bool = True
    # 7. check(u >= 0) on an unbounded unbacked u skips static evaluation
    skip_static_eval_unbounded: bool = True
    # 8. sums of distinct symbols are built with sympy.Add._from_args
    add_from_args: bool = True
    # ShapeEnv settings (torch's defaults)
    specialize_zero_one: bool = True
    duck_shape: bool = True
    backed_size_oblivious: bool = False
    prefer_deferred_runtime_asserts_over_guards: bool = False

    def __post_init__(self) -> None:
        if self.aggressive_guard_free_semantics not in (0, 1, 2):
            level = self.aggressive_guard_free_semantics
            raise ValueError(f"aggressive_guard_free_semantics={level!r}: expected 0, 1 or 2")
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name != "aggressive_guard_free_semantics" and not isinstance(v, bool):
                raise ValueError(f"RefSettings.{f.name}={v!r}: expected a bool")


#: short name (used in config names "off:<name>") -> RefSettings field, for optimizations 2-8.
#: Optimization 1 has levels, not on/off: its configs are "agfs=1" and "agfs=2".
OPTIMIZATIONS = {  # the same short names as torch-env's "slow:<name>" configs where it has one
    "no-stack-traces": "do_not_emit_stack_traces",
    "expr-cache": "expr_cache",
    "smart-sort": "smart_sort_direct_hint",
    "relationals": "unevaluated_unbacked_relationals",
    "no-hint": "no_hint_sentinel",
    "skip-static": "skip_static_eval_unbounded",
    "add-from-args": "add_from_args",
}

ALL_OFF = RefSettings(**{f: False for f in OPTIMIZATIONS.values()})

_CONFIGS: dict[str, RefSettings] = {
    "default": RefSettings(),
    "all-off": ALL_OFF,
    "agfs=1": RefSettings(aggressive_guard_free_semantics=1),
    "agfs=2": RefSettings(aggressive_guard_free_semantics=2),
    **{f"off:{short}": replace(RefSettings(), **{field: False})
       for short, field in OPTIMIZATIONS.items()},
    "no-specialize-zero-one": RefSettings(specialize_zero_one=False),
    "no-duck-shape": RefSettings(duck_shape=False),
    "backed-size-oblivious": RefSettings(backed_size_oblivious=True),
    "prefer-deferred": RefSettings(prefer_deferred_runtime_asserts_over_guards=True),
}


#: what each config name sets when it is a part of "a+b": a named config its changes from
#: default; "on:<short>" and "agfs=0" set one toggle back to default's value (so that a blame
#: bisection can build any mix of toggles on top of "all-off": shapefuzz/oracles/differential.py)
_PARTS: dict[str, dict] = {
    **{name: {f.name: getattr(c, f.name) for f in fields(RefSettings)
              if getattr(c, f.name) != getattr(_CONFIGS["default"], f.name)}
       for name, c in _CONFIGS.items()},
    **{f"on:{short}": {field: True} for short, field in OPTIMIZATIONS.items()},
    "agfs=0": {"aggressive_guard_free_semantics": 0},
}


def config_names() -> tuple[str, ...]:
    """Every named config of the `ref` system; "default" has all optimizations on (agfs level 0,
    as in torch 2.13), "all-off" is the baseline the config differential compares against."""
    return tuple(_CONFIGS)


def settings_for(name: str) -> RefSettings:
    """The settings of a config name; "a+b" applies b's changes (from default) on top of a's,
    e.g. "off:expr-cache+off:add-from-args" or "all-off+on:expr-cache"."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"ref: config name must be a non-empty str, got {name!r}; known configs: "
                         f"{', '.join(_CONFIGS)}")
    return _settings_for(name)


@functools.lru_cache(maxsize=256)  # observe() asks once per program; names repeat
def _settings_for(name: str) -> RefSettings:
    out = _CONFIGS["default"]
    for part in name.split("+"):
        if part not in _PARTS:
            raise ValueError(_unknown(part, name))
        out = replace(out, **_PARTS[part])
    return out


def _unknown(part: str, name: str) -> str:
    hint = ""
    if part == "off:agfs":
        hint = (" aggressive_guard_free_semantics has levels, not on/off: 'default' already has"
                " level 0; use 'agfs=1' or 'agfs=2'.")
    elif part.startswith("off:"):
        hint = f" The optimizations are: {', '.join(OPTIMIZATIONS)}."
    where = f" (in {name!r})" if part != name else ""
    return (f"ref: unknown config {part!r}{where}; known configs: {', '.join(_CONFIGS)}"
            f" (combine with '+').{hint}")


def toggle_parts(base: str, other: str) -> list[str]:
    """The config parts that turn `base`'s optimization toggles into `other`'s, one per toggle
    that differs ("on:<short>", "off:<short>", "agfs=<level>"): what a blame bisects over. The
    ShapeEnv settings (0/1 specialization ...) are not toggles: they change what may be assumed."""
    a, b = settings_for(base), settings_for(other)
    parts = [("on:" if getattr(b, field) else "off:") + short
             for short, field in OPTIMIZATIONS.items() if getattr(a, field) != getattr(b, field)]
    if a.aggressive_guard_free_semantics != b.aggressive_guard_free_semantics:
        parts.append(f"agfs={b.aggressive_guard_free_semantics}")
    return parts
