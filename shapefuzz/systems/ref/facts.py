"""What the env learns from a fact: a guard (true on the hints) or a deferred runtime assert (a
torch._check, true whenever the program is valid).

A fact refines value ranges (u >= 3 gives u the range [3, oo]), an equality becomes a
replacement when one side can be solved for a symbol (u == s + 1 gives u := s + 1), and every
fact becomes an axiom that later static proofs may look up (torch's ShapeEnv.axioms).

Note [facts are true]: the reference only ever learns facts that hold for the concrete values of
a valid program (backed guards are decided on the hints; checks hold or the program is invalid).
So everything derived here holds too, and static answers built on it equal the truth.

Optimizations here: do_not_emit_stack_traces (2) picks between `record_plain` and
`record_with_stack`; smart_sort_direct_hint (4) between `smart_key_direct` and
`smart_key_size_hint`.
"""

from __future__ import annotations

import math
import sys
import traceback
from collections import Counter

import sympy

from shapefuzz.systems.ref.env import RefEnv, expand
from shapefuzz.systems.ref.ranges import Interval, add

__all__ = [
    "axiom_lookup",
    "isolate",
    "learn",
    "negate",
    "record_assert",
    "record_guard",
    "record_plain",
    "record_stack",
    "record_with_stack",
    "refine_ranges",
    "smart_key_direct",
    "smart_key_size_hint",
    "smart_order",
]

INF = math.inf

# the interval of lhs - rhs that each relational asserts
_DIFF_RANGE = {sympy.Ge: (0, INF), sympy.Gt: (1, INF), sympy.Le: (-INF, 0),
               sympy.Lt: (-INF, -1), sympy.Eq: (0, 0)}
_NEGATION = {sympy.Lt: sympy.Ge, sympy.Le: sympy.Gt, sympy.Gt: sympy.Le, sympy.Ge: sympy.Lt,
             sympy.Eq: sympy.Ne, sympy.Ne: sympy.Eq}


def negate(rel: sympy.Basic) -> sympy.Basic:
    """not rel, as a relational (what a guard records when the hint says False)."""
    return _NEGATION[type(rel)](*rel.args)


def record_guard(env: RefEnv, g: sympy.Basic) -> None:
    _record(env, env.guards, g)


def record_assert(env: RefEnv, a: sympy.Basic) -> None:
    _record(env, env.asserts, a)


def _record(env: RefEnv, where: list, fact: sympy.Basic) -> None:
    if env.settings.do_not_emit_stack_traces:
        record_plain(env, where, fact)
    else:
        record_with_stack(env, where, fact)


def record_plain(env: RefEnv, where: list, fact: sympy.Basic) -> None:
    """Optimization 2 on: record the fact, no stack."""
    where.append(fact)
    learn(env, fact)


def record_with_stack(env: RefEnv, where: list, fact: sympy.Basic) -> None:
    """Optimization 2 off: also remember where the fact came from."""
    where.append(fact)
    env.stacks.append(record_stack(env))
    learn(env, fact)


def record_stack(env: RefEnv) -> str:
    """A cheap summary of who asked (file:line function, innermost last), without reading source
    lines, like torch's CapturedTraceback.extract."""
    env.stats["stack"] += 1
    frames = traceback.StackSummary.extract(traceback.walk_stack(sys._getframe(1)), limit=12,
                                            lookup_lines=False)
    return " <- ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}({f.name})" for f in frames)


def learn(env: RefEnv, fact: sympy.Basic) -> None:
    if not fact.is_Relational or not fact.free_symbols:
        return
    env.facts.append(fact)
    # Like torch's _maybe_guard_rel, order the symbols once per fact (optimization 4 decides how
    # the hints are read); ranges are refined and equalities solved in this order.
    order = smart_order(env, fact.free_symbols)
    refine_ranges(env, fact, order)
    if isinstance(fact, sympy.Eq):
        maybe_replace(env, env.replace(fact), order)


# ---- ranges ------------------------------------------------------------------------------------
def isolate(diff: sympy.Expr, sym: sympy.Symbol) -> tuple[int, sympy.Expr] | None:
    """diff as c*sym + rest, with c a nonzero int and rest free of sym; None if sym appears
    in any other way (inside a product, a FloorDiv ...)."""
    c, rest = 0, []
    for t in diff.args if diff.is_Add else (diff,):
        if sym not in t.free_symbols:
            rest.append(t)
            continue
        coeff, m = t.as_coeff_Mul()
        if m != sym or not coeff.is_Integer:
            return None
        c += int(coeff)
    return (c, sympy.Add(*rest)) if c else None


def _ceil_div(x, c: int):
    return x if math.isinf(x) else -((-x) // c)


def _floor_div(x, c: int):
    return x if math.isinf(x) else x // c


def _linear_terms(diff: sympy.Expr) -> tuple[list, dict]:
    """The terms of diff, and for each symbol that occurs in exactly one term, as c*sym with an
    int c: its (term index, c)."""
    terms = list(diff.args) if diff.is_Add else [diff]
    occurs = Counter(s for t in terms for s in t.free_symbols)
    linear = {}
    for i, t in enumerate(terms):
        coeff, m = t.as_coeff_Mul()
        if m.is_Symbol and coeff.is_Integer and occurs[m] == 1:
            linear[m] = (i, int(coeff))
    return terms, linear


def refine_ranges(env: RefEnv, rel: sympy.Basic, order: list) -> None:
    """For each symbol s in `order` that rel constrains linearly (rel is c*s + rest cmp 0),
    s's range meets what rel allows given rest's range. rest's range is the sum of the other
    terms' ranges (prefix and suffix sums: one pass, even for the long sums cat produces)."""
    terms, linear = _linear_terms(rel.lhs - rel.rhs)
    if isinstance(rel, sympy.Ne):
        if len(terms) <= 2:
            for sym, (i, c) in linear.items():
                _refine_ne(env, sym, c, sympy.Add(*terms[:i], *terms[i + 1:]))
        return
    bounds = [env.bound(t) for t in terms]
    prefix = [Interval(0, 0)]
    for b in bounds:
        prefix.append(add(prefix[-1], b))
    suffix = [Interval(0, 0)]
    for b in reversed(bounds):
        suffix.append(add(suffix[-1], b))
    suffix.reverse()  # suffix[i]: the sum of bounds[i:]
    lo_d, hi_d = _DIFF_RANGE[type(rel)]
    for sym in (s for s in order if s in linear):
        i, c = linear[sym]
        rb = add(prefix[i], suffix[i + 1])
        lo, hi = lo_d - rb.hi, hi_d - rb.lo  # c*sym = diff - rest
        if c < 0:
            lo, hi, c = -hi, -lo, -c
        _update_range(env, sym, Interval(_ceil_div(lo, c), _floor_div(hi, c)))


def _refine_ne(env: RefEnv, sym: sympy.Symbol, c: int, rest: sympy.Expr) -> None:
    if rest.free_symbols or int(rest) % c:
        return
    v, r = -int(rest) // c, env.range_of(sym)
    if r.lo == v:
        _update_range(env, sym, Interval(v + 1, r.hi))
    elif r.hi == v:
        _update_range(env, sym, Interval(r.lo, v - 1))


def _update_range(env: RefEnv, sym: sympy.Symbol, new: Interval) -> None:
    cur = env.range_of(sym)
    r = cur.intersect(new)
    if r is None or r == cur:
        return  # empty: contradictory facts, only in an invalid program; keep what we had
    env.ranges[sym] = r
    if r.is_singleton() and sym not in env.replacements:
        env.set_replacement(sym, sympy.Integer(r.lo))  # a range of one value is a value


# ---- replacements ------------------------------------------------------------------------------
def smart_key_direct(env: RefEnv, sym: sympy.Symbol) -> tuple[int, str]:
    """Optimization 4: read the hint from the backed-hint dict."""
    hint = env.backed_hints.get(sym)
    return (sys.maxsize if hint is None else hint, sym.name)


def smart_key_size_hint(env: RefEnv, sym: sympy.Symbol) -> tuple[int, str]:
    """Optimization 4 off: ask size_hint() (replace + substitute + range analysis), even for
    unbacked symbols whose answer is then ignored, as _smart_symbol_sort did before."""
    hint = env.size_hint(sym)
    if hint is None or env.is_unbacked(sym):
        return (sys.maxsize, sym.name)
    return (hint, sym.name)


def smart_order(env: RefEnv, symbols) -> list:
    """Symbols in the order facts are used on them: unbacked first (they are what a fact is
    usually about), then backed by decreasing hint, then by decreasing name."""
    key = smart_key_direct if env.settings.smart_sort_direct_hint else smart_key_size_hint
    return sorted(symbols, key=lambda s: key(env, s), reverse=True)


def maybe_replace(env: RefEnv, eq: sympy.Basic, order: list) -> None:
    """Turn a true equality into a replacement. Like torch's _maybe_guard_rel, prefer to
    eliminate unbacked symbols, then the backed symbol with the largest hint, then the largest
    name; only a coefficient of +-1 is solved (no division), and a backed symbol is never
    replaced by an expression with unbacked symbols (its guards must stay decidable)."""
    if not isinstance(eq, sympy.Eq) or not eq.free_symbols:
        return
    diff = eq.lhs - eq.rhs
    free = diff.free_symbols
    for sym in (s for s in order if s in free):
        iso = isolate(diff, sym)
        if iso is None or iso[0] not in (1, -1):
            continue
        target = expand(-iso[0] * iso[1])
        if not env.is_unbacked(sym) and env.has_unbacked(target):
            continue
        env.set_replacement(sym, target)
        _transfer(env, sym, target)
        return


def _transfer(env: RefEnv, sym: sympy.Symbol, target: sympy.Expr) -> None:
    """Keep what was known about sym: its range (and size-likeness) now constrain target."""
    if len(target.free_symbols) != 1:
        return
    (y,) = target.free_symbols
    iso = isolate(target, y)
    if iso is None or iso[0] not in (1, -1) or iso[1].free_symbols:
        return
    c, k = iso[0], int(iso[1])  # sym = c*y + k  =>  y = c*(sym - k)
    r = env.range_of(sym)
    lo, hi = r.lo - k, r.hi - k
    _update_range(env, y, Interval(lo, hi) if c == 1 else Interval(-hi, -lo))
    if sym in env.size_like and target == y:
        env.size_like.add(y)


# ---- axioms ------------------------------------------------------------------------------------
def _canon(d: sympy.Expr) -> sympy.Expr:
    return -d if d.could_extract_minus_sign() else d


def _normal_form(rel: sympy.Basic) -> tuple[str, sympy.Expr] | None:
    """(form, d): "ge" means d >= 0 (a strict < or > is d - 1 >= 0 over the integers), "eq" and
    "ne" mean d == 0 and d != 0, with d's sign canonicalized."""
    t, (lhs, rhs) = type(rel), rel.args
    if t is sympy.Ge:
        return "ge", lhs - rhs
    if t is sympy.Gt:
        return "ge", lhs - rhs - 1
    if t is sympy.Le:
        return "ge", rhs - lhs
    if t is sympy.Lt:
        return "ge", rhs - lhs - 1
    if t in (sympy.Eq, sympy.Ne):
        return ("eq" if t is sympy.Eq else "ne"), _canon(lhs - rhs)
    return None


def _implications(rel: sympy.Basic) -> list[tuple[tuple[str, sympy.Expr], bool]]:
    nf = _normal_form(rel)
    if nf is None:
        return []
    form, d = nf
    if form == "ge":  # d >= 0, so -d > 0 (that is -d - 1 >= 0) is false
        return [(("ge", d), True), (("ge", -d - 1), False)]
    if form == "ne":
        return [(("ne", d), True), (("eq", d), False)]
    return [(("eq", d), True), (("ne", d), False), (("ge", d), True), (("ge", -d), True),
            (("ge", d - 1), False), (("ge", -d - 1), False)]


def axiom_table(env: RefEnv) -> dict:
    """Every fact and what it implies, rewritten with the current replacements. A new fact
    extends the table; after a new replacement only the facts that mention a replaced symbol
    are rewritten, and the table is rebuilt from the per-fact implications."""
    version, entries, table = env.axiom_cache or (env.version, [], {})
    if version != env.version:
        entries = [e if not _stale(env, e[0]) else _entry(env, e[0]) for e in entries]
        table = {k: v for _, imps in entries for k, v in imps}
    for f in env.facts[len(entries):]:
        entries.append(_entry(env, f))
        table.update(entries[-1][1])
    env.axiom_cache = (env.version, entries, table)
    return table


def _entry(env: RefEnv, fact: sympy.Basic) -> tuple:
    f = env.replace(fact)
    return f, (_implications(f) if f.is_Relational else [])


def _stale(env: RefEnv, f: sympy.Basic) -> bool:
    return any(s in env.replacements for s in f.free_symbols)


def axiom_lookup(env: RefEnv, rel: sympy.Basic) -> bool | None:
    if not env.facts:
        return None
    nf = _normal_form(rel)
    return None if nf is None else axiom_table(env).get(nf)
