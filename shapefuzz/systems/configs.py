"""The config model: one frozen Config per named config of each system, in one registry
(REGISTRY, looked up with `config_of`). Everything that lists or interprets configs reads it:
systems.CONFIGS / DEFAULT_CONFIGS / OPT_IN, the export system's front end, the repro scripts'
settings, `shapefuzz systems` and the docs' config reference. Torch-free at import (the
campaign process lists configs without torch).

Note [config names are the contract]: a config is named by a plain string everywhere it
crosses a boundary (case.json, report.json, CLI flags, worker messages, pickles;
docs/reference/case-json.md). A Config is what a name means inside one process: code asks the
registry for it (`config_of(system, name)`) instead of parsing the name ("+" in name,
name.endswith("decomposed")), so a config's meaning is written once, here."""

from __future__ import annotations

from dataclasses import dataclass, replace

from shapefuzz import BadInput
from shapefuzz.systems.compile_settings import (
    OPT_IN_CONFIGS,
    TOGGLE_CONFIGS,
    compile_config_names,
    settings_of,
)
from shapefuzz.systems.describe import describe
from shapefuzz.systems.ref.settings import config_names as ref_config_names  # no sympy import

__all__ = ["DIM_KINDS", "EXPORT_FRONT_ENDS", "REGISTRY", "Config", "config_of", "configs_of", "default_names",
           "is_config"]

#: how export declares a dynamic dim: Dim.DYNAMIC, a named Dim(min=2, max=...), Dim.AUTO
DIM_KINDS = ("dynamic", "named", "auto")


@dataclass(frozen=True, slots=True)
class Config:
    """One named config of one system: what it switches (one line, `shapefuzz systems`), the
    torch_toggles config applied around the run (`toggles`), and export's front end (strict
    tracing, how dynamic dims are declared, whether ep.run_decompositions() is what runs).
    `default`: a campaign runs it when no --config is given; `opt_in`: only when named."""

    system: str
    name: str
    switches: str
    toggles: str = "default"  # a torch_toggles config name (systems/torch_toggles.py)
    strict: bool = False  # export: torch.export.export(strict=True)
    dims: str = "dynamic"  # export: one of DIM_KINDS
    decomposed: bool = False  # export: replay ep.run_decompositions()
    default: bool = True
    opt_in: bool = False

    def __post_init__(self) -> None:
        if self.dims not in DIM_KINDS:
            raise ValueError(f"Config {self.system}:{self.name}: dims={self.dims!r}, expected one of {DIM_KINDS}")
        if self.system != "export" and (self.strict or self.dims != "dynamic" or self.decomposed):
            raise ValueError(f"Config {self.system}:{self.name}: strict, dims and decomposed are export's")


# ---- export's front ends ------------------------------------------------------------------------
#: each part of an export front-end name: what it sets and what it switches
_EXPORT_PARTS: dict[str, tuple[dict, str]] = {
    "strict": ({"strict": True}, "torch.export.export(strict=True): Dynamo traces the program's source"),
    "dim-auto": ({"dims": "auto"}, "dynamic dims declared Dim.AUTO"),
    "named-dims": ({"dims": "named"}, "dynamic dims declared as named Dim(min=2, max=...)"),
    "decomposed": ({"decomposed": True}, "the exported program after ep.run_decompositions() is what runs"),
}
#: export's own configs (the torch_toggles configs follow them, on the default front end)
EXPORT_FRONT_ENDS = ("default", "strict", "dim-auto", "named-dims", "strict+named-dims", "decomposed",
                     "named-dims+decomposed")


def _front_end(name: str) -> Config:
    """An export front end from its parts; the only place a "+" in an export name is read."""
    out = Config("export", name, describe("export", "default"))
    if name == "default":
        return out
    parts = name.split("+")
    for part in parts:
        out = replace(out, **_EXPORT_PARTS[part][0])
    return replace(out, switches="; ".join(_EXPORT_PARTS[p][1] for p in parts))


# ---- the registry -------------------------------------------------------------------------------
#: the torch_toggles configs, "default" first (tests check them against torch_toggles.config_names())
_TOGGLES = ("default",) + TOGGLE_CONFIGS
#: configs a campaign runs when no --config is given, where not every config (the traced systems
#: are slow per config), in the order a campaign runs them
_DEFAULTS = {"make_fx": ("default",), "export": ("default",),
             "compile": ("default", "dynamic=True", "mark-dynamic", "aot_eager")}


def _build() -> dict[str, dict[str, Config]]:
    def toggle(system: str, name: str) -> Config:
        return Config(system, name, describe(system, name), toggles=name)

    def compile_config(name: str, opt_in: bool = False) -> Config:
        return Config("compile", name, describe("compile", name), toggles=settings_of(name).toggles, opt_in=opt_in)

    by_system = {
        "eager": [Config("eager", "default", describe("eager", "default"))],
        "make_fx": [toggle("make_fx", n) for n in _TOGGLES],
        "export": [_front_end(n) for n in EXPORT_FRONT_ENDS] + [toggle("export", n) for n in TOGGLE_CONFIGS],
        "compile": [compile_config(n) for n in compile_config_names()]
                   + [compile_config(n, opt_in=True) for n in OPT_IN_CONFIGS],
        "torch-env": [toggle("torch-env", n) for n in _TOGGLES],
        # a ref config named like a torch toggle mirrors it (what a repro of it switches in torch)
        "ref": [Config("ref", n, describe("ref", n), toggles=n if n in _TOGGLES else "default")
                for n in ref_config_names()],
    }
    out = {}
    for system, configs in by_system.items():
        picked = _DEFAULTS.get(system)
        out[system] = {c.name: replace(c, default=not c.opt_in and (picked is None or c.name in picked))
                       for c in configs}
    return out


#: system -> config name -> Config, in listing order (Note [config names are the contract])
REGISTRY: dict[str, dict[str, Config]] = _build()


def default_names(system: str) -> tuple[str, ...]:
    """The configs a campaign runs of `system` when no --config is given, in campaign order."""
    return _DEFAULTS.get(system) or tuple(c.name for c in configs_of(system) if c.default)


def configs_of(system: str) -> tuple[Config, ...]:
    """Every named config of `system`, opt-in ones included, in listing order."""
    if system not in REGISTRY:
        raise BadInput(f"unknown system {system!r}; known: {', '.join(REGISTRY)}")
    return tuple(REGISTRY[system].values())


def is_config(system: str, name: str) -> bool:
    return name in REGISTRY.get(system, {})


def config_of(system: str, name: str) -> Config:
    """The Config named `name` of `system`; BadInput naming the known ones for an unknown name."""
    found = REGISTRY.get(system, {}).get(name) if isinstance(name, str) else None
    if found is None:
        known = ", ".join(c.name for c in configs_of(system))
        raise BadInput(f"config {name!r} is not a config of {system}; known: {known} "
                       "(`shapefuzz systems` lists them)")
    return found
