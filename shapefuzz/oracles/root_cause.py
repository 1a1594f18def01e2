"""Root-cause buckets for findings about an expression: what torch lost, not the whole
expression it lost it in (Note [root cause bucket]).

Note [root cause bucket]: a spurious DDE's expression is the program's, its bug is torch's. The
whole-expression class (`Eq[FloorDiv,Max,Min]`) gives every new program a new bucket although
torch lost the same thing in it, so a nightly with fresh seeds re-reports triaged rows. The bucket
is instead the smallest piece of knowledge torch's own interval reasoning
(torch.utils._sympy.value_ranges.bound_sympy over the ranges the ShapeEnv held) misses, that the
facts give (z3 proves it), and that decides the question:

1. every subterm t of the expression, smallest first (a symbol, then FloorDiv(u0, 2), then the
   sums around it), is asked two things of z3 (a few ms each): does a strictly tighter interval
   hold for t than torch's bound_sympy(t) (lo+1 / hi-1 for a finite bound; for an infinite one,
   a bound from the expression's own constants, e.g. |2//u| <= 2), and, for a function
   application, does t - a have a tighter interval than torch gives it, for each non-constant
   operand a (t <= a, t < a, t >= a ...: a FloorDiv below its numerator, a Mod below its
   divisor, a Min below each of its arguments). Relations to operands are the general form of
   what intervals cannot say;
2. each proved bound is a repair: t becomes a fresh symbol with the tighter range (or a + w, w in
   the tighter range of t - a), and the question goes through bound_sympy again (the relation and
   lhs - rhs against 0, so sympy cancels a against itself). The smallest t whose repair decides
   it is the root cause, `lost[FloorDiv(x+,c+)]`: its head and the class of each argument,
   constant `c` or not `x`, with its sign from torch's own range (`+` >= 0, `-` <= 0, none when
   unknown: no `?`, which known_issues.json's wildcards would read as any character), so
   `u0 < u0//2` and `Eq(u0 + 1, (u0 + 1)//2)` share one bucket and `2//u0 != 3` has another
   (Min and Max, whose only loss is their relation to an argument, are one bucket, lost[MinMax]). A
   symbol whose range the facts tighten is a fact torch did not carry into its ranges: with a
   relation that needs the facts and no subterm to blame, `lost[relation:transitive]`;
3. when no single repair decides it, all of them together may (the smallest repaired term is
   the bucket); otherwise the relation itself is the cause: `transitive` when torch's ranges
   alone do not imply it (the facts do), `integral` when the integers imply it but the reals do
   not (`Eq(3*u0, 1)`; functions abstracted by their ranges), `dependent` when the reals do
   (intervals forget that two occurrences are one value), else plain `lost[relation]`.

When torch's own intervals already decide the question, nothing was lost in them and the
bucket is `ignored[ranges]` (the evaluation did not consult them: a planted or real bug in the
order of torch's checks). The raiser (branch, bool, an aten op) is no part of it: the finding's detail keeps it. The work
is bounded (MAX_QUERIES z3 queries of QUERY_MS each, MAX_MS in all) and cached by the texts;
past the bound, or on an expression this cannot read, the caller keeps the whole-expression class.

For a wrong claim the general cause is the assumption torch made without being told
(`assumption_bucket`): the weakest of ASSUMPTIONS under which the facts prove the claim torch
made, e.g. `assumes[backed>=1]` for a size-0 backed symbol treated as positive.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

import sympy

from shapefuzz.oracles.read_expr import read_expr

__all__ = ["ASSUMPTIONS", "Knowledge", "assumption_bucket", "dde_bucket", "knowledge", "read_expr"]

MAX_QUERIES = 80
QUERY_MS = 100
RETRY_MS = 2000  # a query whose first budget ran out (_settled)
MAX_MS = 1500
#: (name, symbol-name prefix, lower bound), weakest first: the assumptions torch may make of a
#: symbol it was not told about (0/1 specialization, size-like unbacked symbols)
ASSUMPTIONS = (("backed>=1", "s", 1), ("unbacked>=0", "u", 0), ("backed>=2", "s", 2),
               ("unbacked>=1", "u", 1), ("unbacked>=2", "u", 2))
_HEADS = {"floor": "FloorDiv", "CleanDiv": "FloorDiv", "StrictLessThan": "Cmp", "LessThan": "Cmp",
          "StrictGreaterThan": "Cmp", "GreaterThan": "Cmp"}
#: heads whose bucket has no argument classes: Min and Max are monotone in every argument and
#: their interval is exact whatever the signs, so what torch loses of them is only their relation
#: to an argument (Min(a, b) <= a), the same for every class of argument
_SIGN_FREE = ("Min", "Max")
#: heads whose value is related to their operands in ways intervals cannot express
_ARITH = ("Add", "Mul", "Pow", "Symbol")


@dataclass(frozen=True, slots=True)
class Knowledge:
    """What the ShapeEnv held: `facts` (texts z3 is given: the observation's axioms and its
    backed ranges, as the system's own dde_check had them) and `ranges` (symbol name, lower,
    upper; None for an infinite bound), torch's var_to_range."""

    facts: tuple[str, ...]
    ranges: tuple[tuple[str, int | None, int | None], ...]


def knowledge(obs) -> Knowledge:
    """From an Observation: the ranges it recorded (torch-env), narrowed by its `range` facts
    (make_fx / export DDEs record the raising ShapeEnv's finite bounds that way)."""
    ranges: dict[str, list] = {n: list(_vr(t)) for n, t in getattr(obs, "ranges", ())}
    facts = [e for _, origin, e in obs.axioms]
    for _, origin, e in obs.axioms:
        if origin == "range":
            _narrow(ranges, e)
    facts += [f"{n} >= {lo}" for n, (lo, _) in ranges.items() if n.startswith("s") and lo is not None]
    facts += [f"{n} <= {hi}" for n, (_, hi) in ranges.items() if n.startswith("s") and hi is not None]
    return Knowledge(tuple(facts), tuple(sorted((n, lo, hi) for n, (lo, hi) in ranges.items())))


def _vr(text: str) -> tuple[int | None, int | None]:
    """`VR[0, int_oo]` -> (0, None)."""
    lo, _, hi = text.strip().removeprefix("VR[").removesuffix("]").partition(",")
    return _bound(lo), _bound(hi)


def _bound(text: str) -> int | None:
    t = text.strip()
    return int(t) if t.lstrip("-").isdigit() else None


def _narrow(ranges: dict, fact: str) -> None:
    """A `range` fact is `sym >= k` or `sym <= k` (shapefuzz.systems.traced.dde_facts)."""
    name, op, k = (fact.split() + ["", "", ""])[:3]
    if op in (">=", "<=") and _bound(k) is not None:
        lo, hi = ranges.setdefault(name, [None, None])
        ranges[name] = [max(lo, int(k)) if lo is not None else int(k), hi] if op == ">=" else \
            [lo, min(hi, int(k)) if hi is not None else int(k)]


# ---- the spurious-DDE bucket -------------------------------------------------------------------

def dde_bucket(expr: str, k: Knowledge) -> str:
    """Note [root cause bucket]; "" when it cannot tell (unreadable, or past its bounds)."""
    return _dde_bucket(expr, k)


@lru_cache(maxsize=512)
def _dde_bucket(expr: str, k: Knowledge) -> str:
    try:
        return _Analysis(expr, k).bucket()
    except _OutOfBudget:
        return ""
    except Exception:  # sympy, torch's value ranges and z3 each raise their own
        # kinds on odd expressions; the bucket is a refinement, the oracle's finding stands
        # with the whole-expression class (an exception here would lose the finding itself)
        return ""


class _OutOfBudget(Exception):
    pass


class _Analysis:
    """One DDE expression under one Knowledge: torch's ranges, the facts, and the z3 budget."""

    def __init__(self, expr: str, k: Knowledge):
        from torch.utils._sympy.numbers import int_oo
        from torch.utils._sympy.value_ranges import ValueRanges

        from shapefuzz.systems.prover import Compiled  # lazy: registry import stays z3-free

        e = read_expr(expr)
        self.e = e.args[0] if isinstance(e, sympy.Not) else e
        self.syms = {s.name: s for s in self.e.free_symbols}
        inf = lambda b, sign: sign * int_oo if b is None else sympy.Integer(b)
        self.ranges = {self.syms.get(n, sympy.Symbol(n, integer=True)): ValueRanges(inf(lo, -1), inf(hi, 1))
                       for n, lo, hi in k.ranges}
        # torch's own ranges count as facts here: the question is what torch's knowledge implies
        self.facts = [read_expr(f) for f in k.facts] + self._range_facts()
        self.consts = _constants(self.e)
        self.compiled, self.queries, self.t0, self.fresh = Compiled(), 0, time.perf_counter(), 0

    # -- the parts of the Note ------------------------------------------------------------------
    def bucket(self) -> str:
        if self._decides(self.e, self.ranges):
            return "ignored[ranges]"  # torch's own intervals decide it: it lost it elsewhere
        repairs = []
        for t in _subterms(self.e):
            for repl, vr in self._repairs(t):
                w_ranges = {**self.ranges, **vr}
                if self._decides(self.e.xreplace({t: repl}), w_ranges):
                    return self._label(t)
                repairs.append((t, repl, vr))
        if repairs and self._all_decide(repairs):
            return self._label(repairs[0][0])
        cause = self._relation_cause()
        return f"lost[relation:{cause}]" if cause else "lost[relation]"

    def _all_decide(self, repairs) -> bool:
        e, ranges, done = self.e, dict(self.ranges), set()
        for t, repl, vr in repairs:
            if t not in done:
                done.add(t)
                e = e.xreplace({t: repl})
                ranges.update(vr)
        return self._decides(e, ranges)

    def _label(self, t: sympy.Basic) -> str:
        if t.is_Symbol:
            return "lost[relation:transitive]"  # a range the facts give and torch did not keep
        head = _HEADS.get(type(t).__name__, type(t).__name__)
        if head in _SIGN_FREE:
            return "lost[MinMax]"  # one gap, mirrored: Min(a, b) <= a as Max(a, b) >= a
        classes = [self._arg_class(a) for a in t.args]
        if head in ("Add", "Mul"):
            classes.sort()  # commutative: the order is sympy's, not the bug's
        return f"lost[{head}({','.join(classes)})]"

    def _arg_class(self, a: sympy.Basic) -> str:
        if a.is_Number:
            return "c+" if a >= 0 else "c-"
        vr = self._bound(a)
        sign = "" if vr is None else "+" if vr.lower >= 0 else "-" if vr.upper <= 0 else ""
        return "x" + sign

    # -- repairs: the tighter knowledge z3 proves of a subterm -------------------------------------
    def _repairs(self, t: sympy.Basic):
        """(replacement, its ranges) for each bound z3 proves tighter than torch's."""
        vr = self._bound(t)
        if vr is None:
            return
        lo, hi = self._tighter(t, vr)
        if lo is not None or hi is not None:
            w = self._fresh()
            yield w, {w: _vr_of(lo if lo is not None else vr.lower, hi if hi is not None else vr.upper)}
        if type(t).__name__ in _ARITH:
            return
        for a in dict.fromkeys(x for x in t.args if not x.is_Number):
            d = t - a
            dvr = self._bound(d)
            if dvr is None:
                continue
            dlo, dhi = self._tighter(d, dvr, (-1, 0, 1))
            if dlo is not None or dhi is not None:
                w = self._fresh()
                yield a + w, {w: _vr_of(dlo if dlo is not None else dvr.lower,
                                        dhi if dhi is not None else dvr.upper)}

    def _tighter(self, t, vr, candidates=None) -> tuple:
        """The strongest lower and upper bound of t among the candidates (the expression's
        constants and their neighbours) that the facts prove and torch's vr does not hold."""
        cands = set(candidates or self.consts)
        cands |= {int(vr.lower) + 1} if _finite(vr.lower) else set()
        cands |= {int(vr.upper) - 1} if _finite(vr.upper) else set()
        cands = sorted(cands)
        lo = hi = None
        for c in (c for c in cands if not _finite(vr.lower) or c > vr.lower):
            if not self._proves(sympy.Ge(t, c)):
                break
            lo = c
        for c in (c for c in reversed(cands) if not _finite(vr.upper) or c < vr.upper):
            if not self._proves(sympy.Le(t, c)):
                break
            hi = c
        return lo, hi

    # -- the relation itself --------------------------------------------------------------------
    def _relation_cause(self) -> str:
        """Which way the facts decide it, then what that needs (Note [root cause bucket], 3)."""
        claim = self.e if self._proves(self.e) else sympy.Not(self.e)
        if not self._proves(claim, facts=self._range_facts()):
            return "transitive"
        if not self.e.is_Relational:
            return ""
        if _relaxed(self.e, claim is self.e, self, real=True):
            return "dependent"
        return "integral" if _relaxed(self.e, claim is self.e, self, real=False) else ""

    def _range_facts(self) -> list:
        out = []
        for s, vr in self.ranges.items():
            out += [sympy.Ge(s, vr.lower)] if _finite(vr.lower) else []
            out += [sympy.Le(s, vr.upper)] if _finite(vr.upper) else []
        return out

    # -- torch's intervals and z3 -----------------------------------------------------------------
    def _bound(self, t):
        from torch.utils._sympy.value_ranges import bound_sympy

        try:
            return bound_sympy(t, self.ranges)
        except Exception:  # torch's analysis has no handler, or asserts: no interval to compare
            return None

    def _decides(self, e, ranges) -> bool:
        from torch.utils._sympy.value_ranges import bound_sympy

        if e in (sympy.true, sympy.false):
            return True
        try:
            if bound_sympy(e, ranges).is_singleton():
                return True
            if not e.is_Relational:
                return False
            d = bound_sympy(e.lhs - e.rhs, ranges)
        except Exception:
            return False
        return _decided_by_difference(type(e).__name__, d)

    def _proves(self, claim, facts=None) -> bool:
        from shapefuzz.systems.prover import (  # lazy: registry import stays z3-free
            SmtSettings,
            prove,
        )

        self.queries += 1
        if self.queries > MAX_QUERIES or (time.perf_counter() - self.t0) * 1000 > MAX_MS:
            raise _OutOfBudget
        facts = self.facts if facts is None else facts
        return _settled(lambda ms: prove(facts, claim, SmtSettings(ms), self.compiled).status) == "unsat"

    def _fresh(self) -> sympy.Symbol:
        self.fresh += 1
        return sympy.Symbol(f"zr{self.fresh}", integer=True)


def _vr_of(lo, hi):
    from torch.utils._sympy.value_ranges import ValueRanges

    return ValueRanges(sympy.sympify(lo), sympy.sympify(hi))


def _finite(b) -> bool:
    return bool(getattr(b, "is_Integer", False))


def _decided_by_difference(rel: str, d) -> bool:
    """Does lhs - rhs in d decide the relation (against 0)?"""
    lo, hi = d.lower, d.upper
    pos, neg = _finite(lo) and lo > 0, _finite(hi) and hi < 0
    nonneg, nonpos = _finite(lo) and lo >= 0, _finite(hi) and hi <= 0
    return {"Equality": pos or neg or (nonneg and nonpos), "Unequality": pos or neg or (nonneg and nonpos),
            "StrictLessThan": neg or nonneg, "LessThan": nonpos or pos,
            "StrictGreaterThan": pos or nonpos, "GreaterThan": nonneg or neg}.get(rel, False)


def _constants(e: sympy.Basic) -> tuple[int, ...]:
    """The candidate bounds: the expression's integer constants, their negations and
    neighbours, and -1, 0, 1 (so |2//u| <= 2 and Mod(x, 3) <= 2 are within reach)."""
    out = {-1, 0, 1}
    for x in sympy.preorder_traversal(e):
        if x.is_Integer and abs(int(x)) < 10**6:
            c = int(x)
            out |= {c - 1, c, c + 1, -c - 1, -c, -c + 1}
    return tuple(sorted(out))


def _subterms(e: sympy.Basic) -> list:
    """The non-constant, non-boolean subterms of e, smallest first (ties: in traversal order)."""
    seen: dict = {}
    for x in sympy.postorder_traversal(e):
        if x.is_Number or (not x.is_Symbol and isinstance(x, sympy.logic.boolalg.Boolean)):
            continue  # (a Symbol is a sympy Boolean too)
        seen.setdefault(x, len(seen))
    return sorted(seen, key=lambda x: (_size(x), seen[x]))


def _size(x: sympy.Basic) -> int:
    return sum(1 for _ in sympy.preorder_traversal(x))


def _relaxed(e: sympy.Basic, truth: bool, an: _Analysis, real: bool) -> bool:
    """Do torch's ranges imply e (or, not truth, its negation) with each non-polynomial subterm abstracted to a fresh variable
    in its torch range, over the reals (real) or the integers? Nonlinear real arithmetic can be
    slow: a timeout is a no."""
    import z3

    abstract: dict = {}
    vars_: dict = {}

    def var(key, vr):
        v = vars_.get(key)
        if v is None:
            v = vars_[key] = (z3.Real if real else z3.Int)(f"r{len(vars_)}")
            bounds.extend(b for b in (_z3_bound(v, vr.lower, True), _z3_bound(v, vr.upper, False)) if b is not None)
        return v

    def tr(x):
        if x.is_Integer:
            return z3.IntVal(int(x)) if not real else z3.RealVal(int(x))
        if x.is_Symbol:
            return var(x, an.ranges.get(x) or _vr_of(-sympy.oo, sympy.oo))
        if x.is_Add:
            return z3.Sum([tr(a) for a in x.args])
        if x.is_Mul:
            r = tr(x.args[0])
            for a in x.args[1:]:
                r = r * tr(a)
            return r
        if x.is_Pow and x.exp.is_Integer and 0 < int(x.exp) <= 8:
            b = tr(x.base)
            r = b
            for _ in range(int(x.exp) - 1):
                r = r * b
            return r
        vr = an._bound(x)
        if vr is None:
            raise ValueError("no range")
        abstract[x] = True
        return var(x, vr)

    bounds: list = []
    try:
        lhs, rhs = tr(e.lhs), tr(e.rhs)
    except ValueError:
        return False
    rel = {"Equality": lhs == rhs, "Unequality": lhs != rhs, "StrictLessThan": lhs < rhs,
           "LessThan": lhs <= rhs, "StrictGreaterThan": lhs > rhs, "GreaterThan": lhs >= rhs}[type(e).__name__]
    s = z3.Solver()
    s.set(timeout=QUERY_MS)
    s.add(*bounds, z3.Not(rel) if truth else rel)
    an.queries += 1
    return s.check() == z3.unsat


def _z3_bound(v, b, lower: bool):
    if not _finite(b):
        return None
    return v >= int(b) if lower else v <= int(b)


# ---- the wrong-claim bucket --------------------------------------------------------------------

def assumption_bucket(claim: str, k: Knowledge) -> str:
    """`assumes[<name>]`: the weakest of ASSUMPTIONS under which the facts prove `claim` (a claim
    torch made and the values refute), "" when none does or the claim cannot be read. Only the
    symbols of the claim and the facts are assumed about."""
    return _assumption_bucket(claim, k)


@lru_cache(maxsize=512)
def _assumption_bucket(claim: str, k: Knowledge) -> str:
    from shapefuzz.systems.prover import (  # lazy: registry import stays z3-free
        Compiled,
        SmtSettings,
        prove,
    )

    try:
        c = read_expr(claim)
        facts = [read_expr(f) for f in k.facts]
        if not getattr(c, "free_symbols", None):
            return ""
        syms = set(c.free_symbols).union(*(f.free_symbols for f in facts))
        compiled = Compiled()
        for name, prefix, lo in ASSUMPTIONS:
            extra = [sympy.Ge(s, lo) for s in syms if s.name.startswith(prefix) and s.name[1:].isdigit()]
            if not extra:
                continue
            status = _settled(lambda ms, extra=extra: prove(facts + extra, c, SmtSettings(ms), compiled).status)
            if status == "unsat":
                return f"assumes[{name}]"
            if status != "sat":  # undecided: a stronger assumption must not be named for it
                return ""
    except Exception:  # as in _dde_bucket: the finding keeps its expression shape
        return ""
    return ""


def _settled(query) -> str:
    """`query(timeout_ms)`'s verdict, asked again with a longer budget when the first ran out:
    on a loaded machine the 100 ms budget (wall time, sympy's translation included) runs out on
    queries z3 answers at once, and a bucket must not depend on the machine's load (a campaign
    beside two others named a size-0 backed symbol's claim assumes[backed>=2], not [backed>=1])."""
    status = query(QUERY_MS)
    return query(RETRY_MS) if status in ("timeout", "unknown") else status
