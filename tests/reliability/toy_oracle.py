"""TEST-ONLY: an oracle registered from outside the package (`--plugin toy_oracle`), to show
that a new oracle with evidence of its own and a repro form of its own is this module and its
template (Note [oracle registry], Note [typed evidence], Note [repro forms]). Its rule is a toy:
"make_fx never produces an output tensor of rank 2 or more".

- its evidence, `ToyRanks`, is declared here and recorded on every make_fx observation by a
  recorder (the systems run the recorders where each job ends; no system knows this oracle);
- its check reads the evidence typed, and its finding carries it (case files hold it as data);
- its repro form reads the evidence's fields into the script's values; its template
  (toy_repro.py) runs the program eagerly and exits 1 when an output has rank >= 2, so the
  campaign's confirmation step really runs it."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.oracles.base import Oracle, register
from shapefuzz.oracles.findings import Finding
from shapefuzz.oracles.forms import ReproForm
from shapefuzz.oracles.signature import make_signature
from shapefuzz.systems import evidence

NAME = "toy-rank"


@evidence.declare(NAME)
@dataclass(frozen=True, slots=True)
class ToyRanks:
    """The rank of each tensor output make_fx traced (-1: not a tensor)."""

    ranks: tuple[int, ...]
    exprs: tuple[str, ...] = ()


@evidence.recorder
def ranks(program, obs) -> ToyRanks | None:
    if obs.system != "make_fx" or obs.outcome.status != "ok":
        return None
    return ToyRanks(tuple(e.count(",") + 1 if e.startswith("[") and e != "[]" else 0 if e == "[]" else -1
                          for e in obs.out_exprs), obs.out_exprs)


def check(c) -> list[Finding]:
    ev = evidence.of(c.obs, ToyRanks)
    if ev is None or not any(r >= 2 for r in ev.ranks):
        return []
    obs = c.obs
    return [Finding(NAME, "low", obs.system, obs.config, "rank-2-output",
                    "make_fx produced an output of rank >= 2", f"output shapes {list(ev.exprs)}",
                    str(make_signature(NAME, "rank-2-output", obs.system, obs.config)), evidence=ev)]


def values(case) -> dict:
    """What the script needs: the least rank that is the bug, and the ranks the trace saw."""
    return {"MIN_RANK": 2, "TRACED_RANKS": list(evidence.of(case.finding, ToyRanks).ranks)}


register(Oracle(NAME, "low", "toy: make_fx outputs have rank 0 or 1", check, kinds=("tensors",),
                per_observation=True, evidence=ToyRanks, forms=(ReproForm("toy-rank", "toy_repro", values),)))
