"""The mutation operators: each finds the places in one function's AST where it applies and says
what to put there. A site is a node of the original tree and the text that replaces its source
segment (mutants.py splices it), so every line the operator does not touch stays byte for byte
what the torch file says.

Note [regression kinds]: the operators are the kinds of change real shape regressions are made
of (DESIGN.md "How it is judged from outside": a wrong fast path, a dropped guard, a bad range,
a stale cache, a wrong simplification): a comparison flipped or weakened at its boundary, a
condition negated, an off-by-one in a bound, one element of a list of guards or of a sum of terms
dropped, one operand of an and/or dropped, a return of another branch's value, Min/Max or
floor/ceil swapped, a cache invalidation or a check skipped, a constant term dropped."""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

__all__ = ["Operator", "Site", "sites"]


class Operator(Enum):
    COMPARISON = "comparison"
    NEGATE_CONDITION = "negate-condition"
    OFF_BY_ONE = "off-by-one"
    DROP_ELEMENT = "drop-element"
    DROP_OPERAND = "drop-operand"
    OTHER_BRANCH = "other-branch"
    SWAP_FUNCTION = "swap-function"
    SKIP_CALL = "skip-call"
    DROP_CONSTANT = "drop-constant"


@dataclass(frozen=True, slots=True)
class Site:
    operator: Operator
    node: ast.AST  # the node whose source segment is replaced
    text: str  # what replaces it (one line)
    description: str


#: a comparison and what it becomes: the boundary moves (< vs <=) or the test inverts (== vs !=)
FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
        ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
#: sympy's relational classes, flipped the same way
SYMPY_FLIP = {"Lt": "Le", "Le": "Lt", "Gt": "Ge", "Ge": "Gt", "Eq": "Ne", "Ne": "Eq"}
#: functions swapped for their twin (the twin must exist where the call looks it up)
SWAP = {"Min": "Max", "Max": "Min", "min": "max", "max": "min", "sym_min": "sym_max",
        "sym_max": "sym_min", "floor": "ceil", "ceil": "floor", "ceiling": "floor",
        "FloorDiv": "CeilDiv", "CeilDiv": "FloorDiv", "FloorToInt": "CeilToInt",
        "CeilToInt": "FloorToInt", "floor_to_int": "ceil_to_int", "ceil_to_int": "floor_to_int"}
#: calls whose statement may be skipped: cache invalidations and checks
SKIPPABLE = re.compile(r"invalidate|check|cache_clear|clear_cache|_update_version_counter", re.I)
#: calls whose arguments say nothing about shapes (logging); no site inside them
QUIET = re.compile(r"^(log|logger|warn|warning|info|debug|trace_structured|print|warn_once)$")
#: calls whose integer arguments are bounds (the other calls' are mostly dims and flags)
BOUND_CALLS = re.compile(r"^(Min|Max|min|max|sym_min|sym_max|ValueRanges|Integer|range|"
                         r"IntInfinity|_check.*|expect_true|guard_.*|statically_known_.*|"
                         r"Lt|Le|Gt|Ge|Eq|Ne)$")


def _name(func: ast.AST) -> str:
    """The called name: `f` of `f(...)`, `g` of `a.b.g(...)`."""
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _flip_ops(node: ast.Compare) -> Iterator[Site]:
    for i, op in enumerate(node.ops):
        new = FLIP.get(type(op))
        if new is not None:
            ops = [*node.ops[:i], new(), *node.ops[i + 1:]]
            after = ast.unparse(ast.Compare(node.left, ops, node.comparators))
            yield Site(Operator.COMPARISON, node, after, f"`{ast.unparse(node)}` -> `{after}`")


def _rename(node: ast.Call, new: str) -> str:
    f = node.func
    return new if isinstance(f, ast.Name) else f"{ast.unparse(f.value)}.{new}"


class _Collector(ast.NodeVisitor):
    """Every site of one function body; `resolves(expr_text)` says whether a swapped name
    exists where the function looks it up (a swap to a missing name is a crash, not a
    regression)."""

    def __init__(self, fn: ast.FunctionDef, resolves: Callable[[str], bool]) -> None:
        self.fn, self.resolves = fn, resolves
        self.found: list[Site] = []
        self.parents: dict[ast.AST, ast.AST] = {}
        for parent in ast.walk(fn):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
        self.returns = _returns(fn)

    def add(self, op: Operator, node: ast.AST, text: str, description: str) -> None:
        self.found.append(Site(op, node, text, description))

    def run(self) -> list[Site]:
        for stmt in self.fn.body:
            self.visit(stmt)
        return self.found

    # -- where no site goes
    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        pass  # positions inside f-strings are unreliable before 3.12

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for stmt in node.body:  # a nested function: its body, not its decorators or defaults
            self.visit(stmt)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)

    # -- the operators
    def visit_Compare(self, node: ast.Compare) -> None:
        for site in _flip_ops(node):
            self.found.append(site)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _name(node.func)
        if QUIET.match(name):
            return
        if name in SYMPY_FLIP and isinstance(node.func, (ast.Name, ast.Attribute)):
            new = _rename(node, SYMPY_FLIP[name])
            if self.resolves(new):
                self.add(Operator.COMPARISON, node.func, new, f"`{ast.unparse(node.func)}(...)` -> `{new}(...)`")
        if name in SWAP:
            new = _rename(node, SWAP[name])
            if self.resolves(new):
                self.add(Operator.SWAP_FUNCTION, node.func, new, f"`{ast.unparse(node.func)}(...)` -> `{new}(...)`")
        self.generic_visit(node)

    def _negate(self, test: ast.expr) -> None:
        inner = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else None
        text = ast.unparse(inner) if inner is not None else ast.unparse(ast.UnaryOp(ast.Not(), test))
        self.add(Operator.NEGATE_CONDITION, test, text, f"condition `{_short(test)}` negated")

    def visit_If(self, node: ast.If) -> None:
        self._negate(node.test)
        self.generic_visit(node)

    visit_While = visit_If

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._negate(node.test)
        for branch, which in ((node.body, "if"), (node.orelse, "else")):
            self.add(Operator.OTHER_BRANCH, node, ast.unparse(branch),
                     f"`{_short(node)}` -> its {which} value `{_short(branch)}`")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if type(node.value) is not int or not self._in_bound(node):
            return
        for delta in (1, -1):
            new = node.value + delta
            self.add(Operator.OFF_BY_ONE, node, repr(new), f"bound {node.value} -> {new}")

    def _in_bound(self, node: ast.AST) -> bool:
        parent = self.parents.get(node)
        if isinstance(parent, ast.UnaryOp):  # -1 is USub(1)
            node, parent = parent, self.parents.get(parent)
        if isinstance(parent, ast.keyword):
            parent = self.parents.get(parent)
        if isinstance(parent, (ast.Compare, ast.BinOp, ast.Slice)):
            return True
        return isinstance(parent, ast.Call) and node is not parent.func and bool(BOUND_CALLS.match(_name(parent.func)))

    def _elements(self, node: ast.List | ast.Tuple | ast.Set) -> None:
        if isinstance(getattr(node, "ctx", ast.Load()), ast.Load) and len(node.elts) >= 2:
            for i, e in enumerate(node.elts):
                elts = node.elts[:i] + node.elts[i + 1:]
                rest = ast.Set(elts) if isinstance(node, ast.Set) else type(node)(elts, ast.Load())
                self.add(Operator.DROP_ELEMENT, node, ast.unparse(rest), f"element `{_short(e)}` dropped")
        self.generic_visit(node)

    visit_List = visit_Tuple = visit_Set = _elements

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        for i, v in enumerate(node.values):
            rest = [x for j, x in enumerate(node.values) if j != i]
            text = ast.unparse(rest[0] if len(rest) == 1 else ast.BoolOp(node.op, rest))
            word = "and" if isinstance(node.op, ast.And) else "or"
            self.add(Operator.DROP_OPERAND, node, text, f"operand `{_short(v)}` of `{word}` dropped")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self._drop_constant(node)
        parent = self.parents.get(node)
        top = not (isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add) and parent.left is node)
        if isinstance(node.op, ast.Add) and top:
            self._drop_term(node)
        self.generic_visit(node)

    def _drop_term(self, node: ast.BinOp) -> None:
        terms = _terms(node)
        if any(isinstance(t, ast.JoinedStr) or (isinstance(t, ast.Constant) and isinstance(t.value, str))
               for t in terms):
            return  # a message being built, not a sum
        for i, t in enumerate(terms):
            if _numeric(t):
                continue  # a constant term is drop-constant's
            rest = terms[:i] + terms[i + 1:]
            expr = rest[0]
            for r in rest[1:]:
                expr = ast.BinOp(expr, ast.Add(), r)
            self.add(Operator.DROP_ELEMENT, node, ast.unparse(expr), f"term `{_short(t)}` of a sum dropped")

    def _drop_constant(self, node: ast.BinOp) -> None:
        if not isinstance(node.op, (ast.Add, ast.Sub)):
            return
        if _numeric(node.right):
            self.add(Operator.DROP_CONSTANT, node, ast.unparse(node.left),
                     f"constant term `{ast.unparse(node.right)}` of `{_short(node)}` dropped")
        elif _numeric(node.left) and isinstance(node.op, ast.Add):
            self.add(Operator.DROP_CONSTANT, node, ast.unparse(node.right),
                     f"constant term `{ast.unparse(node.left)}` of `{_short(node)}` dropped")

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Call) and SKIPPABLE.search(_name(node.value.func)):
            self.add(Operator.SKIP_CALL, node, "pass", f"call `{_short(node.value)}` skipped")
        self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> None:
        self.add(Operator.SKIP_CALL, node, "pass", f"`assert {_short(node.test)}` skipped")
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        mine = ast.unparse(node.value) if node.value is not None else "None"
        others = [r for r in self.returns if r != mine][:3]  # the other branches' values
        if mine in ("True", "False") and ("True" if mine == "False" else "False") not in others:
            others.append("True" if mine == "False" else "False")
        for other in others:
            self.add(Operator.OTHER_BRANCH, node, f"return {other}",
                     f"`return {_short(node.value)}` -> `return {_shorten(other)}`")
        self.generic_visit(node)


def _returns(fn: ast.FunctionDef) -> list[str]:
    """The distinct values the function's own returns give (not those of nested functions)."""
    out: list[str] = []

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, ast.Return):
                text = ast.unparse(child.value) if child.value is not None else "None"
                if text not in out:
                    out.append(text)
            walk(child)

    walk(fn)
    return out


def _terms(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _terms(node.left) + [node.right]
    return [node]


def _numeric(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _shorten(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _short(node: ast.AST | None) -> str:
    return _shorten(ast.unparse(node)) if node is not None else "None"


def sites(fn: ast.FunctionDef, resolves: Callable[[str], bool] | None = None) -> list[Site]:
    """Every mutation site of `fn`'s body, in source order (line, column), operators in
    declaration order at the same place. `resolves(text)`: whether the dotted name `text`
    exists where `fn` would look it up (default: a builtin, or any attribute access)."""
    found = _Collector(fn, resolves or _builtin_or_attribute).run()
    order = {op: k for k, op in enumerate(Operator)}
    return sorted(found, key=lambda s: (s.node.lineno, s.node.col_offset, order[s.operator]))


def _builtin_or_attribute(text: str) -> bool:
    return "." in text or hasattr(builtins, text)
