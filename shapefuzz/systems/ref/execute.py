"""Executing a question program (shapefuzz.program.questions) on a fresh reference env.

Each instruction becomes one env operation, as torch's SymNode methods would drive a ShapeEnv:
backed/unbacked create a symbol, binop builds a value from its operands' current (replaced)
expressions and hints, check is torch._check, ask answers a question in its mode. The program
stops at the first failure (a data-dependent error, a false check, a division by zero), which is
recorded, never raised: a failing program under test is data (STYLE 4).
"""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.program import Ref
from shapefuzz.program.questions import BINOPS, COMPARE, QProgram
from shapefuzz.systems.ref.env import NO_HINT, Node, RefEnv
from shapefuzz.systems.ref.evaluate import Answer, CheckFailed, DataDependentError, ask, check
from shapefuzz.systems.ref.exprs import build_binop, build_relational, is_symbol_sum
from shapefuzz.systems.ref.ranges import Interval
from shapefuzz.systems.ref.settings import RefSettings

__all__ = ["Trace", "binop", "relational", "run"]

#: what stops a program: the program's failure, not the reference's
FAILURES = (DataDependentError, CheckFailed, ZeroDivisionError)


@dataclass(frozen=True, slots=True)
class Trace:
    env: RefEnv
    nodes: tuple[Node, ...]  # one per value the program defined before it stopped
    answers: tuple[Answer, ...]  # one per question answered
    failure: Exception | None  # one of FAILURES, or None when the program ran to its end
    #: (at, origin, sympy expr) as learned: Note [axioms] in shapefuzz.systems.claims
    axioms: tuple = ()


def run(program: QProgram, settings: RefSettings) -> Trace:
    env = RefEnv(settings)
    nodes: list[Node] = []
    answers: list[Answer] = []

    def operand(a) -> Node:
        return nodes[a.index] if isinstance(a, Ref) else env.constant(a)

    failure = None
    axioms: list[tuple] = []
    try:
        for ins in program.instrs:
            a = ins.args
            seen = (len(env.guards), len(env.asserts))
            if ins.op == "backed":
                nodes.append(env.create_backed(a[0]))
                _creation_range(env, nodes[-1], axioms, len(answers))
            elif ins.op == "unbacked":
                nodes.append(env.create_unbacked())  # its value a[0] stays with the program
            elif ins.op == "binop":
                nodes.append(binop(env, a[0], operand(a[1]), operand(a[2])))
            elif ins.op == "check":
                rel = relational(env, a[0], operand(a[1]), operand(a[2]))
                checked = env.expr_of(rel)
                check(env, rel)
                axioms.append((len(answers), "check", checked))
            elif ins.op == "check_is_size":
                rel = relational(env, ">=", operand(a[0]), env.constant(0))
                checked = env.expr_of(rel)
                check(env, rel)
                axioms.append((len(answers), "check", checked))
                _size_like(env, operand(a[0]))
            elif ins.op == "constrain_range":
                axioms += constrain(env, operand(a[0]), a[1], a[2], len(answers))
            else:
                answers.append(ask(env, a[0], relational(env, a[1], operand(a[2]), operand(a[3]))))
            axioms += [(len(answers), "guard", g) for g in env.guards[seen[0]:]]
            axioms += [(len(answers), "assert", x) for x in env.asserts[seen[1]:]]
    except FAILURES as e:
        failure = e
    return Trace(env, tuple(nodes), tuple(answers), failure, tuple(axioms))


def _size_like(env: RefEnv, node: Node) -> None:
    sym = env.expr_of(node)
    if getattr(sym, "is_Symbol", False) and env.is_unbacked(sym):
        env.size_like.add(sym)


def constrain(env: RefEnv, node: Node, lo: int, hi: int, at: int) -> list:
    """A range constraint, as torch takes one (shapefuzz.systems.torch_env.Note [facts torch is
    given]): a symbol's range narrows (size-like when lo >= 0), a constant is checked, any
    other expression is ignored. Returns the axioms it adds."""
    import sympy

    e = env.expr_of(node)
    if e.is_Integer:
        if not lo <= int(e) <= hi:
            raise CheckFailed(sympy.And(sympy.Ge(e, lo), sympy.Le(e, hi)), "constant out of range")
        return []
    if not e.is_Symbol:
        return []
    r = env.range_of(e).intersect(Interval(lo, hi))
    if r is None:
        raise CheckFailed(sympy.And(sympy.Ge(e, lo), sympy.Le(e, hi)), "empty range")
    env.ranges[e] = r
    if lo >= 0:
        env.size_like.add(e)
    return [(at, "range", sympy.Ge(e, lo)), (at, "range", sympy.Le(e, hi))]


def _creation_range(env: RefEnv, node: Node, axioms: list, at: int) -> None:
    """A new backed symbol's range from the 0/1 policy (not from env.ranges: Note [axioms])."""
    import sympy

    sym = node.raw
    if isinstance(sym, sympy.Symbol):
        s = env.settings
        low = 0 if s.backed_size_oblivious or not s.specialize_zero_one else 2
        axioms.append((at, "range", sympy.Ge(sym, low)))


def _missing(env: RefEnv):
    # With the sentinel a hint-less result says so once; without it, it says "unknown" and
    # env.node() / every later hint lookup calls compute_hint again (optimization 6).
    return NO_HINT if env.settings.no_hint_sentinel else None


def binop(env: RefEnv, op: str, a: Node, b: Node) -> Node:
    ea, eb = env.expr_of(a), env.expr_of(b)
    fast = env.settings.add_from_args and op == "+"
    raw, is_sum = build_binop(op, ea, eb, fast and _still_sum(a, ea), fast and _still_sum(b, eb),
                              env.settings.add_from_args)
    ha, hb = env.hint_of(a), env.hint_of(b)
    hint = BINOPS[op](ha, hb) if ha is not None and hb is not None else _missing(env)
    return env.node(raw, hint, is_sum)


def _still_sum(node: Node, expr) -> bool:
    """Is `expr` (the node's current expression) a sum of distinct symbols? The node's flag says
    so for its raw expression; a replacement may have changed it since."""
    return node.is_sum if expr is node.raw else is_symbol_sum(expr)


def relational(env: RefEnv, cmp: str, a: Node, b: Node) -> Node:
    ea, eb = env.expr_of(a), env.expr_of(b)
    raw = build_relational(cmp, ea, eb, env.is_unbacked,
                           env.settings.unevaluated_unbacked_relationals)
    ha, hb = env.hint_of(a), env.hint_of(b)
    hint = COMPARE[cmp](ha, hb) if ha is not None and hb is not None else _missing(env)
    return env.node(raw, hint)
