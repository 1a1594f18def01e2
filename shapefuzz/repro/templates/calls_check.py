"""check.py for compile findings: the full harness (Note [repro templates] in
shapefuzz/repro/common.py). Pasted below the case's data and shapefuzz/systems/graph_facts.py:
the program is compiled with a recording backend, called on the sequence up to the call that
showed the finding, and that call is checked as the oracle checked it: against eager (with
every subset of guard_or_* branches sent to the general arm, Note [branch contract]), or the
recompile checks of Note [graph facts]."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import TYPE_CHECKING

import torch
import torch._dynamo
import torch.fx.experimental._config
from torch.fx.experimental import symbolic_shapes

if TYPE_CHECKING:
    from shapefuzz.repro.templates._slots import (
        BACKEND,
        CALLS,
        CHECK,
        DIMS,
        DYNAMO_CONFIG,
        ENV_KWARGS,
        FX_CONFIG,
        REFS,
        SETTINGS_VALUES,
        TARGET,
        UNDEFINED,
        GraphLog,
        _mark,
        _reusable,
        _silent_specialization,
        _stayed_static,
        f,
        facts_reject,
    )


def settings():
    """The config's settings, as graph_facts reads them (attributes)."""
    return SimpleNamespace(**SETTINGS_VALUES)


class _Spec:  # what _mark reads of an input spec
    def __init__(self, shape, dims):
        self.shape, self.dims = shape, dims


def run(fn, args):
    try:
        out = fn(*args)
    except Exception as e:
        return ("error", f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}")
    return ("ok", tuple(out) if isinstance(out, (tuple, list)) else (out,))


def same(a, b, compare_data):
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return not compare_data or torch.allclose(a.double(), b.double(), equal_nan=True)
    return (not isinstance(a, torch.Tensor)) and (not isinstance(b, torch.Tensor)) and int(a) == int(b)


def agrees(want, got):
    if want[0] != got[0]:
        return False
    return want[0] == "error" or (len(want[1]) == len(got[1]) and all(
        same(a, b, k not in UNDEFINED) for k, (a, b) in enumerate(zip(want[1], got[1]))))


def env_kwargs():
    if not ENV_KWARGS:
        return
    orig = symbolic_shapes.ShapeEnv.__init__

    def init(self, *a, **kw):
        kw.update(ENV_KWARGS)
        orig(self, *a, **kw)
    symbolic_shapes.ShapeEnv.__init__ = init


def check_call(i, inputs, got, log, new, runs, marked, first, fresh):
    """The target call, checked as the oracle did (0: no bug, 1: the bug)."""
    rejected = got[0] == "error" and "Runtime assertion failed" in got[1]
    if CHECK == "compare":
        if rejected:
            print("a runtime assert rejects the input:", got[1])
            return 0
        wants = [run(r, [t.clone() for t in inputs]) for r in REFS]
        if not any(agrees(w, got) for w in wants):
            print("eager    :", wants[0])
            print("compiled :", got)
            print("BUG: the compiled function disagrees with eager on this call")
            return 1
        print("OK: compiled and eager agree")
        return 0
    if CHECK == "unsound-reuse":
        why = "" if rejected else next(
            (f"graph {g}: {w}" for g in dict.fromkeys(runs) if (w := facts_reject(log.graphs[g], fresh))), "")
    elif CHECK == "extra-recompile":
        why = _reusable(log.graphs, fresh, len(log.graphs) - len(new))[1] if new else ""
    elif CHECK == "silent-specialization":
        why = _silent_specialization(new, marked) if got[0] == "ok" else ""
    else:
        why = _stayed_static(new, [_Spec(tuple(t.shape), d) for t, d in zip(inputs, DIMS)], first, settings())
    if why:
        print(f"BUG ({CHECK}): {why}")
        return 1
    print(f"OK: no {CHECK} at call {i}")
    return 0


def main():
    env_kwargs()
    for k, v in FX_CONFIG.items():
        setattr(torch.fx.experimental._config, k, v)
    log = GraphLog(BACKEND)
    torch._dynamo.reset()
    with torch._dynamo.config.patch(**DYNAMO_CONFIG):
        cf = torch.compile(f, backend=log, fullgraph=settings().fullgraph, dynamic=settings().dynamic)
        first = [tuple(t.shape) for t in CALLS[0]]
        for i, inputs in enumerate(CALLS):
            args = [t.clone() for t in inputs]
            marked = _mark(args, [_Spec(tuple(t.shape), d) for t, d in zip(args, DIMS)], settings().marks)
            n_graphs, n_runs = len(log.graphs), len(log.runs)
            log.call = i
            got = run(cf, args)
            new, runs = log.graphs[n_graphs:], log.runs[n_runs:]
            print(f"call {i}: shapes {[list(t.shape) for t in inputs]}, {got[0]}, "
                  f"{len(new)} new graph(s), ran {runs}")
            if i >= TARGET:
                return check_call(i, inputs, got, log, new, runs, marked, first, [t.clone() for t in inputs])
    print("the call sequence ended before the recorded call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
