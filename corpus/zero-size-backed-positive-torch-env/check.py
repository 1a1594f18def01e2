"""torch-env (no-specialize-zero-one): wrong-static on bool
oracle truth: every answer the ShapeEnv claims (not an undecided fallback) must equal the concrete answer for the values the sizes really have, also for other values its guards accept.
signature: truth:wrong-claim:torch-env:no-specialize-zero-one:assumes[backed>=1]
system torch-env, config no-specialize-zero-one; found with torch 2.13.0+cpu. Exits 1 while the bug is there, 0 once it is fixed."""
import sys
import sympy
import torch
try: import pkgutil; [pkgutil.resolve_name(name) for name in ('torch._dynamo.source.ConstantSource', 'torch.fx.experimental.symbolic_shapes._constrain_range_for_size', 'torch.fx.experimental.symbolic_shapes.constrain_range', 'torch.fx.experimental.symbolic_shapes.guard_or_false', 'torch.fx.experimental.symbolic_shapes.guard_or_true', 'torch.fx.experimental.symbolic_shapes.guard_size_oblivious', 'torch.fx.experimental.symbolic_shapes.statically_known_false', 'torch.fx.experimental.symbolic_shapes.statically_known_true', 'torch.utils._sympy.symbol.symbol_is_type', 'torch.fx.experimental._config.backed_size_oblivious', 'torch.fx.experimental.symbolic_shapes.DimDynamic.DUCK', 'torch.fx.experimental.symbolic_shapes.ShapeEnv._maybe_evaluate_static', 'torch.utils._sympy.symbol.SymT.SIZE')]  # torch's private names used below: another torch version may have moved one
except (ImportError, AttributeError) as e: sys.exit(print(f"repro.py: this torch ({torch.__version__}) lacks a name it uses ({e}); the repro cannot run here") or 2)
import torch.fx.experimental._config as fxx
from torch._dynamo.source import ConstantSource
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, _constrain_range_for_size, constrain_range, guard_or_false, guard_or_true, guard_size_oblivious, statically_known_false, statically_known_true
from torch.utils._sympy.symbol import SymT, symbol_is_type

ENV_KWARGS = {'specialize_zero_one': False}
SLOW_CONFIG = ''
se = None
wrong, claims, answers, leaves = [], [], [], []

#: the names the generated main() uses (the questions' modes)
IMPORTED = (ShapeEnv, guard_or_false, guard_or_true, guard_size_oblivious, statically_known_false,
            statically_known_true)


def with_config(fn):
    """fn(ShapeEnv kwargs) under the case's config: plain settings, or shapefuzz's patches."""
    if not SLOW_CONFIG:
        return fn(ENV_KWARGS)
    from shapefuzz.systems.torch_toggles import applied  # a slow path: shapefuzz's torch patch

    with applied(SLOW_CONFIG) as cfg:
        return fn(cfg.env_kwargs)


def backed(hint, name):
    # as torch sizes tensors: under backed_size_oblivious no 0/1 specialization, size-like
    bso = fxx.backed_size_oblivious
    s = se.create_symbol(hint, source=ConstantSource(name), dynamic_dim=DimDynamic.DUCK,
                         do_not_specialize_zero_one=bso)
    if bso and not s.is_number:
        se.size_like.add(s)
    leaves.append(se.create_symintnode(s, hint=hint, source=ConstantSource(name)))
    return leaves[-1]


def constrain(v, lo, hi):
    """A range constraint, as torch._constrain_as_size (lo >= 0) / constrain_range take one."""
    if lo >= 0 and isinstance(v, torch.SymInt) and isinstance(v.node.expr, sympy.Symbol):
        _constrain_range_for_size(v, min=lo, max=hi)
    else:
        constrain_range(v, min=lo, max=hi)


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


def replay(values, concrete):
    """Under other values that satisfy every guard (with the ranges produce_guards checks) and
    every deferred assert, every claim must still be the concrete answer."""
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
        if k < len(concrete) and got != concrete[k]:
            wrong.append(f"question {k}: answered {got}; with values {values} every guard and assert "
                         f"holds but the concrete answer is {concrete[k]}")


def truth_main(main):
    print("torch", torch.__version__)
    try:
        with_config(main)
    except Exception as e:
        print(f"raised {type(e).__name__}: {e}")
        if "data-dependent" not in str(e).lower() and not type(e).__name__.startswith("GuardOnData"):
            return 1
    for w in wrong:
        print("BUG:", w)
    print("OK: every claim matches the concrete answers" if not wrong else "")
    return 1 if wrong else 0


def metamorphic_main(first, second, kind, mapping):
    """The answers of two runs (fresh: the same program again; redundant: with a
    statically_known_true before every question, `mapping` gives each question's index there)."""
    for run in (first, second):
        try:
            with_config(run)
        except Exception as e:
            answers.append(("raised", type(e).__name__))
        answers.append("|")
    cut = answers.index("|")
    one, two = answers[:cut], answers[cut + 1:-1]
    for k, j in enumerate(mapping):
        a = one[k] if k < len(one) else None
        b = two[j] if j < len(two) else None
        if a != b and not (a and b and a[0] != "raised" and b[0] != "raised" and not (a[1] and b[1])):
            print(f"BUG: question {k}: {a} on the first run, {b} on the {kind} run")
            return 1
    print(f"OK: the {kind} run answers alike")
    return 0

def main(env_kwargs):
    global se
    se = ShapeEnv(**env_kwargs)
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


if __name__ == "__main__":
    sys.exit(truth_main(main))
