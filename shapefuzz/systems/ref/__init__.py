"""The reference ShapeEnv (`ref`): a small, readable implementation on sympy of the symbolic
shape semantics the seeds describe, with each of seed 000's optimizations as a toggle.

Reading order: settings (the toggles) -> exprs (expressions) -> ranges (value-range analysis)
-> env (state, replacements, hints) -> facts (what guards and checks teach) -> evaluate
(questions and checks) -> execute (run a question program) -> system (the Observation);
for tensor programs: shapes (the API of the ops' symbolic shape rules) -> tensors (running a
tensor program in lockstep with eager) -> repro (confirming ref findings).

Importing this package loads only the settings (no sympy), so the system registry can list the
configs cheaply; RefSystem, run and Trace are loaded on first use.
"""

from shapefuzz.systems.ref.settings import OPTIMIZATIONS, RefSettings, config_names, settings_for

__all__ = ["OPTIMIZATIONS", "RefSettings", "RefSystem", "Trace", "config_names", "run",
           "settings_for"]

_LAZY = {"RefSystem": "shapefuzz.systems.ref.system", "run": "shapefuzz.systems.ref.execute",
         "Trace": "shapefuzz.systems.ref.execute"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
