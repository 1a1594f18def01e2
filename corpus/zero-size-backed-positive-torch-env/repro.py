"""shapefuzz repro: torch-env (no-specialize-zero-one): wrong-static on bool

oracle truth: every answer the ShapeEnv claims (not an undecided fallback) must equal the concrete answer for the values the sizes really have, also for other values its guards accept.
system torch-env, config no-specialize-zero-one; found with torch 2.13.0+cpu.
signature: truth:wrong-claim:torch-env:no-specialize-zero-one:C
question 0: bool(True) answered True (static); the concrete answer is False
Exits 1 while the bug is there, 0 once it is fixed.
"""
import sys
import torch
from torch._dynamo.source import ConstantSource
from torch.fx.experimental.symbolic_shapes import (
    DimDynamic, ShapeEnv, guard_or_false, guard_or_true, guard_size_oblivious, statically_known_true)

import torch.fx.experimental._config as fxx

se = None
wrong = []
claims = []  # (question, answer) for every answer that is not an undecided fallback
answers = []  # (answer, is_claim) per question, in order (metamorphic checks compare runs)
leaves = []  # the SymInt (or int) made for each backed/unbacked value, in order


def backed(hint, name):
    # as torch sizes tensors: under backed_size_oblivious no 0/1 specialization, size-like
    bso = fxx.backed_size_oblivious
    s = se.create_symbol(hint, source=ConstantSource(name), dynamic_dim=DimDynamic.DUCK,
                         do_not_specialize_zero_one=bso)
    if bso and not s.is_number:
        se.size_like.add(s)
    leaves.append(se.create_symintnode(s, hint=hint, source=ConstantSource(name)))
    return leaves[-1]


def unbacked():
    leaves.append(se.create_unbacked_symint())
    se.pending_fresh_unbacked_symbols.clear()
    return leaves[-1]


def claim(k, cond, got, fallback, want):
    """A question's answer must be the concrete one unless it is the mode's fallback taken
    because the ShapeEnv could not decide."""
    expr = cond.node.expr if isinstance(cond, torch.SymBool) else cond
    static = se._maybe_evaluate_static(expr) if isinstance(cond, torch.SymBool) else cond
    decided = static is not None
    answers.append((got, got != fallback or decided))
    if got != fallback or decided:
        claims.append((k, got))
    if got != want and (got != fallback or (decided and bool(static) != want)):
        wrong.append(f"question {k}: {expr} answered {got} (static: {static}); concretely {want}")


def replay(values, answers):
    """Under other values that satisfy every guard (with the ranges produce_guards checks) and
    every deferred assert, every claim must still be the concrete answer."""
    import sympy
    from torch.utils._sympy.symbol import SymT, symbol_is_type
    binding = {}
    for leaf, v in zip(leaves, values):
        e = leaf.node.expr if isinstance(leaf, torch.SymInt) else sympy.Integer(leaf)
        if (e.is_number and int(e) != v) or binding.setdefault(e, v) != v:
            return
    facts = [g.expr for g in se.guards] + [ra.expr for ras in se.deferred_runtime_asserts.values() for ra in ras]
    for s in binding:
        if not s.is_number and symbol_is_type(s, SymT.SIZE):
            vr = se.var_to_range[s]
            facts += [sympy.Ge(s, vr.lower)] if vr.lower.is_finite else []
            facts += [sympy.Le(s, vr.upper)] if vr.upper.is_finite else []
    binding = {k: v for k, v in binding.items() if not k.is_number}
    try:
        if not all(bool(f.xreplace(binding)) for f in facts):
            return
    except TypeError:
        return
    for k, got in claims:
        if k < len(answers) and got != answers[k]:
            wrong.append(f"question {k}: answered {got}; with values {values} every guard and assert "
                         f"holds but the concrete answer is {answers[k]}")




def start():
    return ShapeEnv(specialize_zero_one=False)


def main(cfg=None):
    global se
    se = start(cfg) if cfg is not None else start()
    v0 = backed(0, 'v0')
    v1 = v0 * v0
    c = v1 != 0
    claim(0, c, bool(c), None, False)
    v2 = backed(4, 'v2')
    v3 = v2 - 0
    c = v1 >= 0
    claim(1, c, guard_or_false(c), False, True)
    torch._check(v2 != 0)
    v4 = v3 % v3
    v5 = unbacked()  # concretely 2
    v6 = unbacked()  # concretely 0
    v7 = unbacked()  # concretely -1
    v8 = backed(5, 'v8')


if __name__ == '__main__':
    print('torch', torch.__version__)
    try:
        main()
    except Exception as e:
        print(f'raised {type(e).__name__}: {e}')
        if 'data-dependent' not in str(e).lower() and not type(e).__name__.startswith('GuardOnData'):
            sys.exit(1)
    for w in wrong:
        print('BUG:', w)
    print('OK: every claim matches the concrete answers' if not wrong else '')
    sys.exit(1 if wrong else 0)
