"""Shape systems. Each has a `name` and `observe(program, config, variants) -> Observation`, and
never raises for a failure of the program under test (Note [three kinds of failure]).

Systems are imported lazily by name, inside worker processes, so the campaign process never
runs torch code of a program under test.

Note [three kinds of failure]: STYLE 4's three kinds, never mixed:
- an invalid candidate (eager rejects the program, a question program breaks its own checks, a
  branch breaks the guard_or_* contract): generation drops it quietly, it is no finding;
- a failure of the program under test inside torch (an exception, a DDE, a crash, a hang): a
  system returns it as the Observation's outcome, and oracles judge it;
- a bug in shapefuzz itself: it raises, loudly, with the input attached (a worker answers
  "bug" and the pool raises ShapefuzzBug with the job; a job that leaves torch changed is
  reported the same way, Note [state guard] in workers.py)."""

from __future__ import annotations

import importlib

from shapefuzz import BadInput
from shapefuzz.systems.configs import REGISTRY, Config, config_of, default_names  # no torch import
from shapefuzz.systems.needs import available, unavailable  # no torch import until called

__all__ = [
    "CONFIGS",
    "DEFAULT_CONFIGS",
    "DEFAULT_SYSTEMS",
    "KINDS",
    "OPT_IN",
    "REGISTRY",
    "SYSTEMS",
    "Config",
    "accepts",
    "available",
    "config_of",
    "get_system",
    "targets_for",
    "unavailable",
]

SYSTEMS = {
    "eager": ("shapefuzz.systems.eager", "EagerSystem"),
    "make_fx": ("shapefuzz.systems.make_fx", "MakeFxSystem"),
    "export": ("shapefuzz.systems.export", "ExportSystem"),
    "compile": ("shapefuzz.systems.compile", "CompileSystem"),
    "torch-env": ("shapefuzz.systems.torch_env", "TorchEnvSystem"),
    "ref": ("shapefuzz.systems.ref", "RefSystem"),
}
#: named configs per system (opt-in ones aside), derived from the registry (systems/configs.py);
#: "default" is torch's own defaults. Names, not Configs: names are the contract (Note [config
#: names are the contract])
CONFIGS = {s: tuple(c.name for c in REGISTRY[s].values() if not c.opt_in) for s in SYSTEMS}
#: configs run only when named (--config inductor); slower than the rest
OPT_IN = {s: tuple(c.name for c in REGISTRY[s].values() if c.opt_in) for s in SYSTEMS}
#: configs a campaign runs when no --config is given (the traced systems are slow per config)
DEFAULT_CONFIGS = {s: default_names(s) for s in SYSTEMS}
# Note [default systems]: a campaign that names no system runs make_fx and export on tensor
# programs and torch-env, under every one of its configs, on question programs (the campaign
# draws each program from either kind). The mutation benchmark (benchmarks/mutation_bench.py)
# showed why torch-env belongs there: a regression in static evaluation, ranges or the sympy
# functions is asked about by question programs in seconds, while tensor programs reach it after
# hundreds of programs or never (statically_known_true returning True: torch-env found it in 13 s,
# make_fx and export at program 289; an off-by-one in _reduce_to_lowest_terms changed only
# torch-env's answers on 400 fixed programs). It showed next why all of its configs: of the 33
# mutants no 90 s campaign detected on the code of 3d54870, 10 changed, on the triage's fixed
# programs, torch-env's answers under backed-size-oblivious, no-specialize-zero-one or the
# slow:* paths and nothing else (create_symbol's specialize_zero_one, _guard_or's fallback,
# _maybe_evaluate_static_worker's unbacked_only, the sympy pow functions), and the default
# campaign ran torch-env under "default" alone. All 16 configs cost 19 ms of CPU a question program against 5 ms for one (150 fixed programs), where a
# tensor program's make_fx and export cost 83 ms: the tracers keep most of the budget.
#: the systems of a campaign that names none (Note [default systems])
DEFAULT_SYSTEMS = ("make_fx", "export", "torch-env")
#: which program kinds each system runs
KINDS = {"eager": ("tensors",), "make_fx": ("tensors",), "export": ("tensors",), "compile": ("tensors",),
         "torch-env": ("questions",), "ref": ("questions", "tensors")}


def targets_for(systems: tuple[str, ...] = (), configs: tuple[str, ...] = ()) -> tuple[tuple[str, str], ...]:
    """The (system, config) pairs a campaign runs: the default systems when none are named, each
    system's default configs when no config is named, every config with "all" (opt-in ones
    only by name). The CLI and the pytest plugin both ask this. Raises BadInput naming the
    unknown system or config and what is known. Whether the running torch can run each pair is
    `available`'s question (Note [torch names] in needs.py; run_fuzz asks it)."""
    fuzzable = [s for s in SYSTEMS if s != "eager"]
    for s in systems:
        if s not in fuzzable:
            raise BadInput(f"system {s!r} is not a system to fuzz; choose from {', '.join(fuzzable)}")
    out = []
    for s in systems or DEFAULT_SYSTEMS:
        known = CONFIGS[s] + OPT_IN.get(s, ())
        default = DEFAULT_CONFIGS.get(s, CONFIGS[s])
        names = (CONFIGS[s] if "all" in configs else configs) if configs else default
        for c in names:
            if c not in known:
                raise BadInput(f"config {c!r} is not a config of {s}; known: {', '.join(known)} "
                               "(`shapefuzz systems` lists them)")
            out.append((s, c))
    return tuple(out)


def accepts(system: str, kind: str) -> bool:
    return kind in KINDS.get(system, ())
_cache: dict[str, object] = {}


def get_system(name: str):
    if name not in _cache:
        mod, cls = SYSTEMS[name]
        _cache[name] = getattr(importlib.import_module(mod), cls)()
    return _cache[name]
