"""The reference ShapeEnv's state: symbols, hints, ranges, replacements, guards and asserts, and
the values (nodes) a program computes.

Note [what the env may see]: a backed symbol comes with a hint (its value in this run) which the
env may use to guard. An unbacked symbol's value is known to the program only (for the ground
truth and the binding), never to the env: its range starts at (-oo, oo) and only checks refine it.

Two optimizations of seed 000 live here, each as two small module-level functions (one per path)
that `expr_of` / `hint_of` pick between:

- expr cache (optimization 3): `expr_cached` keeps each node's replaced expression and recomputes
  it only when the replacements version counter moved; `expr_uncached` calls replace() on every
  access, as SymNode.expr did before the cache.
- _NO_HINT sentinel (optimization 6): a node built from a hint-less operand is born with
  NO_HINT, and asking for its hint is a lookup; without the sentinel it is born with None and
  every lookup retries `compute_hint` (which fails again unless replacements made it backed).
  Answers never depend on which: a node's hint is only a shortcut for size_hint(expr).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import sympy

from shapefuzz.systems.ref.exprs import RELATIONALS
from shapefuzz.systems.ref.ranges import UNKNOWN, Interval, bound
from shapefuzz.systems.ref.settings import RefSettings

__all__ = [
    "NO_HINT",
    "Node",
    "RefEnv",
    "expr_cached",
    "expr_uncached",
    "hint_lookup",
    "hint_retry",
]


class _NoHint:
    def __repr__(self) -> str:
        return "NO_HINT"


#: "this value has no hint, do not try again" (torch's _NO_HINT, sym_node.py)
NO_HINT = _NoHint()


@dataclass(frozen=True, slots=True)
class Node:
    """One SymInt/SymBool value. `raw` is its expression when it was built (from its operands'
    replaced expressions); the current expression is `env.expr_of(node)`."""

    id: int
    raw: sympy.Basic
    hint: object  # int | bool (known), NO_HINT (known to be missing), None (unknown: compute)
    is_sum: bool = False  # raw is a sum of distinct symbols (Note [optimized summation])


class RefEnv:
    def __init__(self, settings: RefSettings):
        self.settings = settings
        self.backed_hints: dict[sympy.Symbol, int] = {}
        self.hint_subs: dict[sympy.Symbol, sympy.Integer] = {}  # the same, for xreplace
        self.unbacked: list[sympy.Symbol] = []
        self.ranges: dict[sympy.Symbol, Interval] = {}
        self.size_like: set[sympy.Symbol] = set()  # assumed >= 2 by size-oblivious questions
        # Always fully resolved: no target mentions a replaced symbol (set_replacement keeps it so).
        self.replacements: dict[sympy.Symbol, sympy.Expr] = {}
        self.version = 0  # bumped on every replacement change (optimization 3's invalidation)
        self.guards: list[sympy.Basic] = []
        self.asserts: list[sympy.Basic] = []
        self.facts: list[sympy.Basic] = []  # every guard and assert: the axioms of static proofs
        self.stacks: list[str] = []  # one per guard/assert when stack traces are on
        self.stats: Counter[str] = Counter()  # call counts, so tests can see which path ran
        self.axiom_cache: tuple | None = None  # owned by facts.axiom_table
        self._duck: dict[int, sympy.Symbol] = {}
        self._expr_cache: dict[int, tuple[int, sympy.Basic]] = {}
        self._n_nodes = 0

    # ---- symbols and nodes -------------------------------------------------------------------
    def node(self, raw: sympy.Basic, hint: object, is_sum: bool = False) -> Node:
        if hint is None:  # no sentinel: the caller could not tell, so try now (torch's __init__)
            hint = self.compute_hint(raw)
        self._n_nodes += 1
        if self.settings.expr_cache:
            # Note [fresh nodes are replaced]: raw is built from operands' current expressions,
            # so it is already its own replacement at this version; seed the cache with it.
            self._expr_cache[self._n_nodes] = (self.version, raw)
        return Node(self._n_nodes, raw, hint, is_sum)

    def constant(self, value: int) -> Node:
        return self.node(sympy.Integer(value), value)

    def create_backed(self, hint: int) -> Node:
        s = self.settings
        if hint in (0, 1) and s.specialize_zero_one and not s.backed_size_oblivious:
            return self.constant(hint)  # 0/1 specialization: sizes 0 and 1 are never symbolic
        if s.duck_shape and hint in self._duck:
            # duck sizing: equal hints, one symbol (as replaced by now: Note [fresh nodes are replaced])
            return self.node(self.replace(self._duck[hint]), hint)
        sym = sympy.Symbol(f"s{len(self.backed_hints)}", integer=True, nonnegative=True)
        self.backed_hints[sym] = hint
        self.hint_subs[sym] = sympy.Integer(hint)
        # Under 0/1 specialization a symbol's hint is >= 2, and so (guarded) is every input it
        # will be used for; backed_size_oblivious keeps 0 and 1 possible but treats sizes as
        # size-like (>= 2) in size-oblivious questions.
        small = s.backed_size_oblivious or not s.specialize_zero_one
        self.ranges[sym] = Interval(0 if small else 2, math.inf)
        if s.backed_size_oblivious:
            self.size_like.add(sym)
        if s.duck_shape:
            self._duck[hint] = sym
        return self.node(sym, hint)

    def create_unbacked(self) -> Node:
        sym = sympy.Symbol(f"u{len(self.unbacked)}", integer=True)
        self.unbacked.append(sym)
        self.ranges[sym] = UNKNOWN
        return self.node(sym, NO_HINT if self.settings.no_hint_sentinel else None)

    def is_unbacked(self, sym: sympy.Symbol) -> bool:
        return sym not in self.backed_hints

    def has_unbacked(self, expr: sympy.Basic) -> bool:
        return any(s not in self.backed_hints for s in expr.free_symbols)

    def range_of(self, sym: sympy.Symbol) -> Interval:
        return self.ranges.get(sym, UNKNOWN)

    def bound(self, expr: sympy.Basic) -> Interval:
        return bound(expr, self.range_of)

    # ---- replacements ------------------------------------------------------------------------
    def replace(self, expr: sympy.Basic) -> sympy.Basic:
        """expr with every replaced symbol substituted (torch's ShapeEnv.replace)."""
        self.stats["replace"] += 1
        subs = {s: self.replacements[s] for s in expr.free_symbols if s in self.replacements}
        if not subs:
            return expr
        return expand(expr.xreplace(subs))

    def set_replacement(self, sym: sympy.Symbol, target: sympy.Expr) -> None:
        """sym := target from now on. Targets stay fully resolved, so replace() is one pass."""
        for k, v in list(self.replacements.items()):
            if sym in v.free_symbols:
                self.replacements[k] = expand(v.xreplace({sym: target}))
        self.replacements[sym] = target
        self.version += 1

    def expr_of(self, node: Node) -> sympy.Basic:
        if self.settings.expr_cache:
            return expr_cached(self, node)
        return expr_uncached(self, node)

    # ---- hints -------------------------------------------------------------------------------
    def hint_of(self, node: Node):
        """The node's concrete value in this run if the env can know it, else None."""
        if self.settings.no_hint_sentinel:
            return hint_lookup(self, node)
        return hint_retry(self, node)

    def compute_hint(self, expr: sympy.Basic):
        """The value of expr on the backed hints, or None if it mentions an unbacked symbol."""
        self.stats["compute_hint"] += 1
        e = self.replace(expr)
        if self.has_unbacked(e):
            return None
        return concrete(e.xreplace(self.hint_subs))

    def size_hint(self, expr: sympy.Basic):
        """Like compute_hint, but an unbacked expression whose range is a single value has that
        value as its hint (torch's size_hint tries static evaluation too: the costly part)."""
        self.stats["size_hint"] += 1
        e = self.replace(expr).xreplace(self.hint_subs)
        if not e.free_symbols:
            return concrete(e)
        if isinstance(e, tuple(RELATIONALS.values())):
            return None
        r = self.bound(e)
        return int(r.lo) if r.is_singleton() else None


def expand(e: sympy.Basic) -> sympy.Basic:
    """Multiply out products of sums (torch's safe_expand), so equal polynomials print and hash
    alike. Only the mul hint: sympy's other expansions (logs, powers) do not apply to integer
    shape arithmetic and each costs a full pass; powers of sums stay folded, as a chain of
    squarings (v = v * v) would otherwise grow exponentially."""
    return e.expand(mul=True, multinomial=False, power_exp=False, power_base=False, log=False,
                    basic=False)


def concrete(e: sympy.Basic):
    """A closed sympy value as a Python int/bool (None if it is not one)."""
    if e is sympy.true or e is sympy.false:
        return bool(e)
    if e.is_Integer:
        return int(e)
    if e.is_Relational and not e.free_symbols:
        return bool(e.simplify())
    return None


# ---- optimization 3: the two paths of SymNode.expr ------------------------------------------
def expr_cached(env: RefEnv, node: Node) -> sympy.Basic:
    hit = env._expr_cache.get(node.id)
    if hit is not None and hit[0] == env.version:
        return hit[1]
    e = env.replace(node.raw)
    env._expr_cache[node.id] = (env.version, e)
    return e


def expr_uncached(env: RefEnv, node: Node) -> sympy.Basic:
    return env.replace(node.raw)


# ---- optimization 6: the two paths of a hint lookup ------------------------------------------
def hint_lookup(env: RefEnv, node: Node):
    return None if node.hint is NO_HINT or node.hint is None else node.hint


def hint_retry(env: RefEnv, node: Node):
    if node.hint is None or node.hint is NO_HINT:
        return env.compute_hint(env.expr_of(node))
    return node.hint
