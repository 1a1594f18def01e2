"""repro.py for a compile case: the whole call sequence, standalone (torch only).

The script compiles the program's function with a recording backend, makes the calls of the
sequence up to the one that showed the finding, and checks that call as the oracle did: against
eager (with every subset of guard_or_* branches forced to the general arm, Note [branch
contract]), or the recompile checks of Note [graph facts]. The helpers that read a graph's facts
are copied verbatim from shapefuzz/systems/compile.py (our code, never case data), so the repro
checks exactly what the campaign checked. Exits 1 while the bug is there, 0 once it is fixed.

Slow-path configs (slow:*, all-slow) need shapefuzz's patches of torch: their repro runs with
torch as shipped plus the config's settings, which is what a config-differential finding is
about anyway (the difference to the default)."""

from __future__ import annotations

import inspect
from itertools import combinations

from shapefuzz.codegen import HEADER, function_source, inputs_source
from shapefuzz.repro import RUN_AND_COMPARE

__all__ = ["compile_repro_source"]

_COPIED = ("Graph", "GraphLog", "_inner_backend", "bind_inputs", "_strides_differ", "facts_reject",
           "asserts_reject", "_bind", "_bind_one", "_eval", "_show", "_reusable", "_within_ranges",
           "_mark", "_silent_specialization", "_stayed_static")

_PRELUDE = '''from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch
import torch._dynamo
from torch.utils._sympy.symbol import SymT, symbol_is_type

_SOURCE = re.compile(r"^L\\['v(\\d+)'\\](?:\\.size\\(\\)\\[(\\d+)\\])?$")
CompileSettings = Any
InputSpec = Any
'''

_MAIN = '''

class _Spec:  # what _mark reads of an input spec
    def __init__(self, shape, dims):
        self.shape, self.dims = shape, dims


''' + RUN_AND_COMPARE + '''def agrees(want, got):
    if want[0] != got[0]:
        return False
    return want[0] == "error" or (len(want[1]) == len(got[1]) and all(
        same(a, b, k not in UNDEFINED) for k, (a, b) in enumerate(zip(want[1], got[1]))))


def env_kwargs():
    if not ENV_KWARGS:
        return
    from torch.fx.experimental import symbolic_shapes as ss
    orig = ss.ShapeEnv.__init__

    def init(self, *a, **kw):
        kw.update(ENV_KWARGS)
        orig(self, *a, **kw)
    ss.ShapeEnv.__init__ = init


def main():
    env_kwargs()
    for k, v in FX_CONFIG.items():
        setattr(torch.fx.experimental._config, k, v)
    log = GraphLog(BACKEND)
    torch._dynamo.reset()
    with torch._dynamo.config.patch(**DYNAMO_CONFIG):
        cf = torch.compile(f, backend=log, fullgraph=SETTINGS.fullgraph, dynamic=SETTINGS.dynamic)
        first = [tuple(t.shape) for t in CALLS[0]]
        for i, inputs in enumerate(CALLS):
            args = [t.clone() for t in inputs]
            marked = _mark(args, [_Spec(tuple(t.shape), d) for t, d in zip(args, DIMS)], SETTINGS.marks)
            n_graphs, n_runs = len(log.graphs), len(log.runs)
            log.call = i
            got = run(cf, args)
            new, runs = log.graphs[n_graphs:], log.runs[n_runs:]
            fresh = [t.clone() for t in inputs]
            print(f"call {i}: shapes {[list(t.shape) for t in inputs]}, {got[0]}, "
                  f"{len(new)} new graph(s), ran {runs}")
            if i < TARGET:
                continue
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
                why = _reusable(log.graphs, fresh, n_graphs)[1] if new else ""
            elif CHECK == "silent-specialization":
                why = _silent_specialization(new, marked) if got[0] == "ok" else ""
            else:
                why = _stayed_static(new, [_Spec(tuple(t.shape), d) for t, d in zip(inputs, DIMS)], first, SETTINGS)
            if why:
                print(f"BUG ({CHECK}): {why}")
                return 1
            print(f"OK: no {CHECK} at call {i}")
            return 0
    print("the call sequence ended before the recorded call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def _soft(program) -> list[int]:
    return [pos for pos, ins in enumerate(program.instrs) if ins.op == "branch" and ins.args[0] != "if"]


def compile_repro_source(case, head: str) -> str:
    from shapefuzz.systems import compile as comp
    from shapefuzz.systems.compile_settings import settings_of
    from shapefuzz.systems.torch_toggles import toggles

    f, p = case.finding, case.program
    s = settings_of(f.config)
    t = toggles(s.toggles)
    target = max(f.replay_index + 1, 0)
    calls = comp.call_sequence(p)[: target + 1]
    check = f.kind if f.oracle == "recompile" else "compare"
    soft = _soft(p)
    subsets = [()] + ([c for k in range(1, len(soft) + 1) for c in combinations(soft, k)] if len(soft) <= 4 else [])
    refs = "".join(function_source(p, f"f_ref{k}", frozenset(sub)) + "\n" for k, sub in enumerate(subsets))
    copied = "\n\n".join(inspect.getsource(getattr(comp, name)) for name in _COPIED)
    undefined = sorted(k for k, v in enumerate(p.outputs) if v in p.undefined_data())
    settings = (f"class SETTINGS:\n    dynamic = {s.dynamic!r}\n    fullgraph = {s.fullgraph!r}\n"
                f"    marks = {s.marks!r}\n    automatic_dynamic = {bool(s.automatic_dynamic)!r}\n")
    calls_src = "CALLS = [\n" + "".join(
        "    " + inputs_source(c, "_").split("=", 1)[1].strip().replace("\n", "\n    ") + ",\n" for c in calls) + "]\n"
    return "".join([
        head, _PRELUDE, HEADER, "import torch.fx.experimental._config\n\n",
        f"FX_CONFIG = {dict(case.torch_config) | t.fx_overrides()!r}\n",
        f"DYNAMO_CONFIG = {dict(s.dynamo)!r}\n", f"ENV_KWARGS = {t.env_kwargs()!r}\n",
        f"BACKEND = {s.backend!r}\n", settings, f"CHECK = {check!r}\n", f"TARGET = {target!r}\n",
        f"DIMS = {[list(x.dims) for x in p.inputs]!r}\n", f"UNDEFINED = {undefined!r}\n\n",
        function_source(p, "f"), "\n# eager references: every subset of guard_or_* branches sent to the general arm\n",
        refs, f"REFS = [{', '.join(f'f_ref{k}' for k in range(len(subsets)))}]\n\n", calls_src, "\n\n",
        copied, _MAIN])
