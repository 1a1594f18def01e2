"""torch.compile's side of the silent-specialization check (oracles/specialization.py): under
mark_unbacked(strict=True) (config mark-unbacked-strict) a specialization must raise; the
recompile oracle's graph facts (graph_facts.constant_dims) see a specialized graph."""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch._dynamo

from shapefuzz.oracles import check_all
from shapefuzz.oracles.recompile import calls_of
from shapefuzz.program import Instr
from shapefuzz.systems import get_system
from shapefuzz.systems.graph_facts import GraphLog, _silent_specialization

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cover"))
from _helpers import I, R, inp, prog

X = inp([1.0] * 5, (5,), dims=("dynamic",))
#: torch._check(x.shape[0] == 5) pins the dim
PINNED = prog([X], [I("size", R(0), 0), Instr("check", ("==", R(1), 5), 0), I("flip", R(0), (0,))])
CLEAN = prog([X], [I("flip", R(0), (0,))])


def observe(p, config):
    eager = get_system("eager").observe(p, "default", [])
    return eager, get_system("compile").observe(p, config, [])


def test_strict_unbacked_raises_on_a_specialization():
    eager, obs = observe(PINNED, "mark-unbacked-strict")
    assert obs.outcome.status == "constraint", obs.outcome.short()
    assert check_all(PINNED, eager, [obs]) == []


def test_strict_unbacked_at_size_one_specializes_silently_in_torch_2_13():
    """torch 2.13's mark_unbacked(strict=True) returns before it marks the dim unbacked (it only
    records the strict constraint), so the dim is a backed symbol with 0/1 specialization: calls
    of sizes >= 2 share one symbolic graph, a size-1 call compiles a graph with the constant 1
    and raises nothing, although the docstring promises an error on any specialization. The
    check sees exactly those calls (and none of the others)."""
    eager, obs = observe(CLEAN, "mark-unbacked-strict")
    assert obs.outcome.status == "ok"
    pinned = [r for r in calls_of(obs) if r.silent_specialization]
    assert pinned and all(min(min(s) for s in r.shapes) < 2 for r in pinned), pinned
    assert all(not r.silent_specialization for r in calls_of(obs) if min(min(s) for s in r.shapes) >= 2)
    keys = [f.key for f in check_all(CLEAN, eager, [obs])]
    assert keys == ["recompile:silent-specialization:compile:mark-unbacked-strict"], keys


def test_the_graph_facts_see_a_specialized_unbacked_dim():
    """Plain mark_unbacked (strict=False) specializes PINNED silently by design; judged as if it
    had been strict, the check over the graph's facts reports it, as it would a strict mark
    that failed to raise."""
    from shapefuzz.systems.compile import program_function

    torch._dynamo.reset()
    log = GraphLog("eager")
    x = torch.ones(5)
    torch._dynamo.decorators.mark_unbacked(x, 0)
    torch.compile(program_function(PINNED), backend=log, fullgraph=True)(x)
    torch._dynamo.reset()
    why = _silent_specialization(log.graphs, ((0, 0),))
    assert "input 0 dim 0" in why and "specialized it to 5" in why, why
    assert _silent_specialization(log.graphs, ()) == ""
