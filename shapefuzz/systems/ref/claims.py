"""z3 on ref's tensor observations (shapefuzz.systems.claims, Note [axioms]): the facts ref had
at each decision of a tensor program, and each static / guard / assert claim asked of the prover
with counter-models replayed through eager.

Note [ref tensor claims]: the axioms are the input dims' creation ranges (backed >= 2 under 0/1
specialization, else >= 0; unbacked input dims >= 0), each fresh unbacked symbol's creation range
(an op's size >= 0, a count at most its input's numel when the op gives it), and every guard and
deferred assert from the decision after the one that recorded it. A counter-model becomes new
inputs (the input dims take the model's sizes; data is the program's own, cycled); the replay
runs ref on them in lockstep with eager, and confirms the refutation only when ref answers the
same question the same way there and the claim is false under that run's binding: a wrong
answer on a real input, not a model eager cannot produce. z3 runs on the configs in Z3_CONFIGS:
the baseline and torch's default, to which the config differential compares every other
config, so a toggle's wrong answer is seen there and z3's cost is paid twice per program, not
fifteen times.
"""

from __future__ import annotations

import math

import sympy

from shapefuzz.program import InputSpec
from shapefuzz.systems.claims import check_claims, dde_check, replay_bounds
from shapefuzz.systems.observation import ReplayRecord, RunResult
from shapefuzz.systems.ref.evaluate import DataDependentError
from shapefuzz.systems.ref.exprs import text

__all__ = ["Z3_CONFIGS", "tensor_axioms", "tensor_claims"]

Z3_CONFIGS = ("all-off", "default")


def tensor_axioms(program, tr) -> list[tuple[int, str, sympy.Basic]]:
    """(at, origin, expr) for one TensorTrace (Note [ref tensor claims])."""
    env, st = tr.env, tr.env.settings
    low = 0 if st.backed_size_oblivious or not st.specialize_zero_one else 2
    out = [(0, "range", sympy.Ge(sym, low)) for sym in env.backed_hints]
    for at, sym, lo, hi in tr.shapes.created:
        if not math.isinf(lo):
            out.append((at, "size", sympy.Ge(sym, int(lo))))
        if not math.isinf(hi):
            out.append((at, "size", sympy.Le(sym, int(hi))))
    for at, origin, fact in tr.shapes.facts:
        out.append((at, origin, fact))
    return out


def tensor_claims(program, tr, config: str, replay) -> tuple[tuple, tuple]:
    """(axioms as text, z3 checks). `replay(specs) -> (TensorTrace, binding)` runs ref and eager
    on other inputs under the same config."""
    axioms = tensor_axioms(program, tr)
    shown = tuple((at, origin, text(e)) for at, origin, e in axioms)
    if config not in Z3_CONFIGS:
        return shown, ()
    facts = [e for _, _, e in axioms]
    if tr.failure is not None:
        c = dde_check(tr.failure.expr, facts) if isinstance(tr.failure, DataDependentError) else None
        return shown, ((c,) if c is not None else ())
    binding = {**tr.env.backed_hints, **tr.binding}
    syms = set().union(*(e.free_symbols for e in facts)) if facts else set()
    bounds = replay_bounds(syms | set(binding), binding)

    def realize(k, claim, model):
        return _confirm(program, tr, k, claim, model, replay)

    decisions = list(tr.shapes.decisions)
    checks = check_claims(decisions, axioms, facts, set(), bounds, realize=realize)
    return shown, tuple(checks)


def _confirm(program, tr, k: int, claim, model: dict, replay):
    specs = _resized(program, tr, model)
    if specs is None:
        return False, "the model's sizes cannot be built", None, None
    new, binding = replay(specs)
    rec = ReplayRecord(specs, True, RunResult(True), None)
    if new is None or k >= len(new.shapes.decisions):
        return False, "ref does not reach that question on the model's input", rec, None
    if new.shapes.decisions[k] != tr.shapes.decisions[k]:
        return False, "ref asks or answers otherwise on the model's input", rec, None
    value = claim.xreplace({s: sympy.Integer(binding[s]) for s in claim.free_symbols if s in binding})
    if value is sympy.false:
        return True, f"on inputs {[s.shape for s in specs]} ref answers it the same way; it is false there", rec, None
    return False, "the claim holds on the model's input (the model used values eager does not produce)", rec, None


def _resized(program, tr, model: dict):
    """The program's inputs with every input dim that is a symbol in the model resized."""
    names = {str(s): v for s, v in model.items()} if model else {}
    out = []
    for spec, sym_shape in zip(program.inputs, tr.input_shapes):
        shape = []
        for n, e in zip(spec.shape, sym_shape):
            v = names.get(str(e), n) if getattr(e, "is_Symbol", False) else n
            if not isinstance(v, int) or v < 0 or v > 24:
                return None
            shape.append(v)
        numel = math.prod(shape)
        data = tuple(spec.data[i % len(spec.data)] for i in range(numel)) if spec.data else \
            tuple([False if spec.dtype == "bool" else 0] * numel)
        out.append(InputSpec(spec.name, spec.dtype, tuple(shape), spec.dims, data))
    return tuple(out)

