"""How the question oracles group what they find (spurious_dde, history): an expression's class,
which is a signature's shape, one finding per bucket, and whether a question's facts hold. Not an
oracle itself: both import it without changing the order the oracles register in (the order
check_all runs them)."""

from __future__ import annotations

from shapefuzz.oracles.findings import Finding
from shapefuzz.program.questions import truth

__all__ = ["expr_class", "one_per_bucket", "valid_until"]

_FUNCTIONS = {"floor": "FloorDiv", "CleanDiv": "FloorDiv", "Abs": "Abs"}


def one_per_bucket(findings: list[Finding]) -> list[Finding]:
    """The first finding of each (symptom, shape, where) bucket, the default config's first:
    one program meets a config-independent incompleteness under every config."""
    findings = sorted(findings, key=lambda f: f.config != "default")  # stable: keeps the order
    seen, out = set(), []
    for f in findings:
        key = (f.signature.symptom, f.signature.shape, f.signature.where)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def valid_until(program, k: int) -> bool:
    """Every fact the program states before its question k holds concretely (a false one is
    an invalid program: from contradicting facts z3 proves anything)."""
    asks = program.asks()
    bad = truth(program).failed_check
    return k < len(asks) and (bad is None or bad > asks[k])


def expr_class(text: str) -> str:
    """The expression's class, its signature shape: the relation (Eq for == / !=, Cmp for
    orderings) and the functions in it, with `nonlinear` for a product or power of symbols, so
    Min/Max, Mod/PythonMod and FloorDiv land in separate buckets: `Cmp[FloorDiv,nonlinear]`."""
    import sympy

    from shapefuzz.systems.prover import parse  # lazy: registry import stays z3-free

    try:
        e = parse(text)
    except Exception:
        return "?"
    rel = "Eq" if isinstance(e, (sympy.Eq, sympy.Ne)) else "Cmp" if e.is_Relational else type(e).__name__
    fns, nonlinear = set(), False
    for x in sympy.preorder_traversal(e):
        if isinstance(x, sympy.Function) or type(x).__name__ in ("Max", "Min"):  # a LatticeOp
            fns.add(_FUNCTIONS.get(type(x).__name__, type(x).__name__))
        elif (x.is_Mul and sum(1 for a in x.args if a.free_symbols) > 1) or (x.is_Pow and x.base.free_symbols):
            nonlinear = True
    return f"{rel}[{','.join(sorted(fns) + (['nonlinear'] if nonlinear else []))}]"
