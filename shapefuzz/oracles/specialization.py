"""Silent specialization [medium]: a dim the user declared dynamic in a way whose contract
says "raise if you specialize it" must not come out of a successful trace as a constant.

Which declarations promise that, per torch 2.13 (as measured, and mark_unbacked's docstring):
- torch.export `Dim.DYNAMIC` and a named `Dim`: a specialization raises a constraint violation
  ("Constraints violated ... specialized it to be a constant"); `Dim.AUTO` may specialize
  silently by design, so the export system records nothing for dim-auto;
- torch.compile `mark_dynamic` (the recompile oracle's `silent-specialization`) and
  `mark_unbacked(strict=True)` (config mark-unbacked-strict, read by the same recompile check
  over the same graph facts, systems/graph_facts.constant_dims); plain `mark_unbacked` allows
  specialization by its documented default (strict=False).

The systems read which declared dims became constant from the trace's own fake inputs (a plain
int, a symbol replaced by a number or pinned to a one-value range: graph_facts.constant_dims)
and record them as this oracle's evidence (Specialization); this oracle reports them."""

from __future__ import annotations

from shapefuzz.oracles.agreement import signature
from shapefuzz.oracles.base import Oracle, register
from shapefuzz.oracles.findings import Finding, Severity
from shapefuzz.oracles.forms import ReproForm
from shapefuzz.systems.evidence import of
from shapefuzz.systems.evidence.specialization import Specialization, SpecializedDim
from shapefuzz.systems.observation import Observation

__all__ = ["ORACLE", "silent_specialization", "specialized"]

ORACLE = "specialization"


def specialized(obs: Observation) -> tuple[SpecializedDim, ...]:
    """The declared dims the system recorded as made constant (Note [typed evidence])."""
    ev = of(obs, Specialization)
    return ev.dims if ev is not None else ()


def silent_specialization(obs: Observation) -> list[Finding]:
    dims = specialized(obs)
    if obs.outcome.status != "ok" or not dims:
        return []
    return [Finding(ORACLE, Severity.MEDIUM, obs.system, obs.config, "silent-specialization",
                    f"{obs.system} ({obs.config}): a dim declared dynamic was specialized to a "
                    "constant without a constraint violation",
                    "\n".join(d.describe() for d in dims), signature(ORACLE, "silent-specialization", obs),
                    evidence=Specialization(dims))]


def _declared(case) -> dict:
    """The dims export declares dynamic, per input (repro/tracing.py's _dims_spec: non-static,
    size >= 2), which the exported program must keep symbolic."""
    return {"DECLARED": [[d for d, (k, n) in enumerate(zip(spec.dims, spec.shape)) if k != "static" and n >= 2]
                         for spec in case.program.inputs]}


#: Note [repro forms]: the program traced by its public call, then the exported program itself shows it
FORM = ReproForm("specialization", "shapefuzz.repro.templates.specialization", _declared,
                 lambda f: f.system in ("make_fx", "export"), writer="traced", check=True)

ORACLE_OBJ = register(Oracle(
    ORACLE, Severity.MEDIUM, "a dim declared Dim.DYNAMIC (or a named Dim) must stay symbolic, or the "
    "trace must raise a constraint violation", lambda c: silent_specialization(c.obs),
    kinds=("tensors",), per_observation=True, rank=35, forms=(FORM,), evidence=Specialization))
