"""Issue-form pieces for question programs: torch's ShapeEnv asked directly (shapefuzz/repro/
questions.py puts them together; Note [repro templates] in shapefuzz/repro/common.py). The
program's lines stand where `TRACE()` is."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import sympy
import torch
import torch.fx.experimental._config
from torch._dynamo.source import ConstantSource
from torch.fx.experimental.symbolic_shapes import (
    DimDynamic,
    GuardOnDataDependentSymNode,
    ShapeEnv,
    _constrain_range_for_size,
    constrain_range,
    guard_or_false,
    guard_or_true,
    guard_size_oblivious,
    statically_known_false,
    statically_known_true,
)
from torch.utils._sympy.symbol import SymT, symbol_is_type

from shapefuzz.systems.torch_toggles import applied

if TYPE_CHECKING:
    from shapefuzz.repro.templates._slots import (
        PROGRAM,
        SLOW_CONFIG,
        TRACE,
        VALUES,
        answers,
        claims,
        fits,
        se,
        wrong,
    )

#: every name a generated script may import from this template's imports
IMPORTED = (ShapeEnv, GuardOnDataDependentSymNode, guard_or_false, guard_or_true, guard_size_oblivious, statically_known_false, statically_known_true,
            torch.fx.experimental._config)


def backed(hint, name):  # a backed size, as torch makes one for a tensor dim
    src = ConstantSource(name)
    return se.create_symintnode(se.create_symbol(hint, src, DimDynamic.DUCK), hint=hint, source=src)


def constrain(v, lo, hi):  # as torch._constrain_as_size (lo >= 0) / constrain_range take one
    if lo >= 0 and isinstance(v, torch.SymInt) and isinstance(v.node.expr, sympy.Symbol):
        _constrain_range_for_size(v, min=lo, max=hi)
    else:
        constrain_range(v, min=lo, max=hi)


def backed_oblivious(hint, name):  # a backed size under backed_size_oblivious: size-like, not 0/1-specialized
    src = ConstantSource(name)
    s = se.create_symbol(hint, src, DimDynamic.DUCK, do_not_specialize_zero_one=True)
    se.size_like.add(s)
    return se.create_symintnode(s, hint=hint, source=src)


def unbacked():  # a fresh unbacked SymInt (its concrete value: in a comment where made)
    u = se.create_unbacked_symint()
    se.pending_fresh_unbacked_symbols.clear()
    return u


def claim(k, c, got, fallback, want):  # question k's answer must be the concrete one (want), unless a fallback
    expr = c.node.expr if isinstance(c, torch.SymBool) else c
    static = se._maybe_evaluate_static(expr) if isinstance(c, torch.SymBool) else c
    if got != fallback or static is not None:
        claims.append((k, got))
    if got != want and (got != fallback or (static is not None and bool(static) != want)):
        wrong.append(f"question {k}: {expr}: expected {want} (concretely), got {got} (static: {static})")


def guard_free(call):  # guard_or_* / statically_known_*: never a data-dependent error (they fall back)
    try:
        return call()
    except GuardOnDataDependentSymNode as e:
        print(f"BUG: a question that falls back where its answer is not known raised {type(e).__name__}: {e}")
        sys.exit(1)


def no_guard(call):  # statically_known_*: a bool, and no guard or runtime assert added
    before = (len(se.guards), se.num_deferred_runtime_asserts)
    got = call()
    if not isinstance(got, bool) or (len(se.guards), se.num_deferred_runtime_asserts) != before:
        print(f"BUG: a statically_known question returned {got!r} and added "
              f"{len(se.guards) - before[0]} guard(s), {se.num_deferred_runtime_asserts - before[1]} assert(s)")
        sys.exit(1)
    return got


def answer(k, c, got, fallback, want):  # question k's answer must be the concrete one (want), unless a fallback
    expr = c.node.expr if isinstance(c, torch.SymBool) else c
    static = se._maybe_evaluate_static(expr) if isinstance(c, torch.SymBool) else c
    if got != want and (got != fallback or (static is not None and bool(static) != want)):
        wrong.append(f"question {k}: {expr}: expected {want} (concretely), got {got} (static: {static})")


def value(k, v, want, leaves):  # value v{k} must evaluate to its concrete value (want) at the leaves' values
    binding = {x.node.expr: sympy.Integer(n) for x, n in leaves if isinstance(x, torch.SymInt)}
    e = v.node.expr if isinstance(v, torch.SymInt) else sympy.Integer(v)
    got = e.xreplace(binding)
    if got.is_number and int(got) != want:
        wrong.append(f"value v{k}: {e} is {got} where {binding}, concretely {want}")


def replay(leaves, answers):  # other values (leaf, value) every guard, assert and size range accepts: claims hold there too
    binding = {}
    for leaf, v in leaves:  # a specialized leaf (an int), or two that share a symbol, must fit
        e = sympy.sympify(leaf.node.expr if isinstance(leaf, torch.SymInt) else leaf)
        if e != v if e.is_number else binding.setdefault(e, v) != v:
            return print("the other values do not fit the symbols")
    facts = [g.expr for g in se.guards] + [a.expr for ras in se.deferred_runtime_asserts.values() for a in ras]
    if not all(f.xreplace(binding) == sympy.true for f in facts) or any(
            v not in se.var_to_range[s] for s, v in binding.items() if symbol_is_type(s, SymT.SIZE)):
        return print("the guards, asserts or size ranges reject the other values")
    for k, got in claims:
        if k < len(answers) and got != answers[k]:
            wrong.append(f"question {k}: expected {answers[k]} with {binding}, where every guard and "
                         f"assert holds, got {got}, claimed for every such value")
    return True


def run():
    """The program, then what its claims showed (a data-dependent error is an answer too)."""
    try:
        TRACE()
    except Exception as e:
        print(f"raised {type(e).__name__}: {e}")
        if "data-dependent" not in str(e).lower() and not type(e).__name__.startswith("GuardOnData"):
            sys.exit(1)
    print("\n".join("BUG: " + w for w in wrong) or "OK: every claim is the concrete answer")
    sys.exit(1 if wrong else 0)


def ask(k, c, got, fallback):  # record question k's answer, and whether it is a claim (no fallback)
    static = se._maybe_evaluate_static(c.node.expr) if isinstance(c, torch.SymBool) else c
    answers[-1].append((got, got != fallback or static is not None))


def two_runs(first, second, kind, mapping):
    """Each question's answer in the first run and, at mapping[k], in the second run: a claim
    in both must be the same claim (a fallback is always allowed)."""
    for run in (first, second):
        answers.append([])
        try:
            run()
        except Exception as e:
            answers[-1].append(("raised", type(e).__name__))
    for k, j in enumerate(mapping):
        a = answers[0][k] if k < len(answers[0]) else None
        b = answers[1][j] if j < len(answers[1]) else None
        print(f"question {k}: first run {a}, {kind} run {b}")
        if a != b and not (a and b and a[0] != "raised" and b[0] != "raised" and not (a[1] and b[1])):
            print(f"BUG: question {k} is answered differently in the {kind} run")
            sys.exit(1)
    print(f"OK: the {kind} run answers alike")


def slow_config():
    """A slow-path config: the program under shapefuzz's patches of torch (its one shapefuzz
    import), as the campaign ran it."""
    with applied(SLOW_CONFIG):  # shapefuzz's slow-path patches of torch
        PROGRAM()


def values_if_fit():
    """The other values' check of every computed value, where they fit every guard."""
    if fits:  # the other values fit every guard: each value must be its concrete one there
        VALUES()


def program():  # the program (metamorphic findings: its first run)
    global se
    PROGRAM()


def with_redundant_questions():  # the program with a statically_known_true before every question
    global se
    PROGRAM()
