"""From a z3 counter-model to concrete inputs of a tensor program, and the axioms a trace gives
a tensor program's symbols (Note [axioms] in shapefuzz.systems.claims).

Note [counterexample replay]: a model assigns every symbol of a query a value. Input dims take
theirs directly (the input is resized; its data is kept, cycled to the new size). An unbacked
symbol bound inside the program (item(), nonzero(), masked_select) has no input of its own: its
value follows the data. So the data is searched, greedily, one element at a time (values the
model wants, 0, +-1, the original; booleans flipped), running the traced graph to read off each
symbol's value, until every symbol has the model's value or the budget is spent. Whatever input
the search ends with is then replayed through eager and the artifact: the finding is confirmed
only when they disagree, so an imperfect search can miss a bug but never invent one.
"""

from __future__ import annotations

import math
from typing import Any

import sympy
import torch

from shapefuzz.program import InputSpec, Program

__all__ = ["input_axioms", "model_inputs", "size_axioms"]

MAX_NUMEL = 512
SEARCH_BUDGET = 160  # graph runs per counter-model


def input_axioms(program: Program, fakes: list, backed_size_oblivious: bool = False,
                 specialize_zero_one: bool = True) -> list[tuple[int, str, Any]]:
    """Creation ranges of input dims: a dynamic (backed) dim >= 2 under 0/1 specialization
    (else >= 0); an unbacked input dim >= 0 (it is a size). Known from the start."""
    out = []
    for spec, f in zip(program.inputs, fakes):
        for dim_kind, s in zip(spec.dims, getattr(f, "shape", ())):
            e = s.node.expr if isinstance(s, torch.SymInt) else None
            if isinstance(e, sympy.Symbol):
                low = 2 if dim_kind == "dynamic" and specialize_zero_one and not backed_size_oblivious else 0
                out.append((0, "range", sympy.Ge(e, low)))
    return out


def size_axioms(gm: torch.fx.GraphModule) -> list[tuple[int, str, Any]]:
    """Physically true of every run: an unbacked symbol that is a tensor's size is >= 0, and the
    count of nonzero / masked_select is at most its input's numel."""
    out, seen = [], set()
    counting = {"nonzero", "masked_select"}
    for n in gm.graph.nodes:
        v = n.meta.get("val")
        if not isinstance(v, torch.Tensor):
            continue
        for s in v.shape:
            e = s.node.expr if isinstance(s, torch.SymInt) else None
            if isinstance(e, sympy.Symbol) and not str(e).startswith("s") and e not in seen:
                seen.add(e)
                out.append((0, "size", sympy.Ge(e, 0)))
        name = getattr(n.target, "__name__", str(n.target)).split(".")[0]
        if name in counting and n.args and isinstance(v.shape[0], torch.SymInt):
            src = n.args[0 if name == "nonzero" else 1]
            sv = src.meta.get("val") if isinstance(src, torch.fx.Node) else None
            if isinstance(sv, torch.Tensor):
                numel = sympy.Integer(1)
                for s in sv.shape:
                    numel *= s.node.expr if isinstance(s, torch.SymInt) else sympy.Integer(int(s))
                out.append((0, "size", sympy.Le(v.shape[0].node.expr, numel)))
    return out


def _resized(spec: InputSpec, shape: list[int]) -> InputSpec:
    n = math.prod(shape)
    data = spec.data
    new = tuple(data[i % len(data)] for i in range(n)) if data else _zeros(spec.dtype, n)
    return InputSpec(spec.name, spec.dtype, tuple(shape), spec.dims, new)


def _zeros(dtype: str, n: int) -> tuple:
    return tuple({"float": 0.0, "int": 0, "bool": False}[dtype] for _ in range(n))


def _sizes(program: Program, fakes: list, model: dict[str, int]) -> list[list[int]] | None:
    shapes = []
    for spec, f in zip(program.inputs, fakes):
        shape = list(spec.shape)
        for d, s in enumerate(getattr(f, "shape", ())):
            e = s.node.expr if isinstance(s, torch.SymInt) else None
            if isinstance(e, sympy.Symbol) and str(e) in model:
                shape[d] = int(model[str(e)])
        if any(n < 0 for n in shape) or math.prod(shape) > MAX_NUMEL:
            return None
        shapes.append(shape)
    return shapes


def model_inputs(program: Program, fakes: list, bind, model: dict[str, int],
                 budget: int = SEARCH_BUDGET) -> tuple[tuple[InputSpec, ...] | None, str]:
    """(inputs, note): inputs whose symbols take the model's values as far as the search gets
    (Note [counterexample replay]). `bind(specs) -> {name: value}` runs the traced graph."""
    shapes = _sizes(program, fakes, model)
    if shapes is None:
        return None, "the model's sizes are negative or too large to build"
    specs = [_resized(s, sh) for s, sh in zip(program.inputs, shapes)]
    input_syms = {str(s.node.expr) for f in fakes for s in getattr(f, "shape", ())
                  if isinstance(s, torch.SymInt)}
    targets = {n: v for n, v in model.items() if n not in input_syms}
    if not targets:
        return tuple(specs), "sizes from the model"
    best = _distance(bind(tuple(specs)), targets)
    runs = 1
    pool = sorted({0, 1, -1, 2} | {int(v) for v in targets.values()})
    while best > 0 and runs < budget:
        improved = False
        for i, spec in enumerate(specs):
            for p in range(len(spec.data)):
                for cand in _candidates(spec, p, pool):
                    trial = list(specs)
                    data = list(spec.data)
                    data[p] = cand
                    trial[i] = InputSpec(spec.name, spec.dtype, spec.shape, spec.dims, tuple(data))
                    d = _distance(bind(tuple(trial)), targets)
                    runs += 1
                    if d < best:
                        best, specs, improved = d, trial, True
                        spec = trial[i]
                    if best == 0 or runs >= budget:
                        break
                if best == 0 or runs >= budget:
                    break
            if best == 0 or runs >= budget:
                break
        if not improved:
            break
    note = "every symbol takes the model's value" if best == 0 else (
        f"the data search got within {best} of the model ({runs} runs)")
    return tuple(specs), note


def _candidates(spec: InputSpec, p: int, pool: list[int]) -> list:
    cur = spec.data[p]
    if spec.dtype == "bool":
        return [not cur]
    conv = float if spec.dtype == "float" else int
    out = [conv(v) for v in pool + [int(cur) + 1, int(cur) - 1]]
    return [v for v in dict.fromkeys(out) if v != cur]


def _distance(binding: dict[str, int], targets: dict[str, int]) -> int:
    return sum(abs(binding[n] - v) if n in binding else 1000 for n, v in targets.items())
