"""Mutants of the installed torch's shape code, generated from its own source.

Each target module is read with inspect.getsource (so the mutants follow whatever torch runs
this), parsed with `ast`, and every function at module level or in a (nested) class body gets
the operators of operators.py. A mutant replaces exactly one node's source segment with
`ast.unparse` of the new node; the rest of the function is the torch file's text, with its line
numbers kept (Note [kept lines]), so a traceback or a coverage line under the mutant points at
the same line of the torch file as without it.

Note [kept lines]: a replacement is one line; when the node it replaces spans k lines, k newlines
are added inside the parentheses around an expression (or after a statement), so every line after
it keeps its number.

Enumeration is deterministic (modules in TARGETS order, functions in source order, sites by
position); `sample` draws a stratified sample by (file, operator) from a seeded random.Random."""

from __future__ import annotations

import ast
import builtins
import hashlib
import importlib
import inspect
import os
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType

from mutation import hook
from mutation.operators import Operator, sites

__all__ = ["TARGETS", "Mutant", "Target", "enumerate_mutants", "mutants_of_source", "sample"]


@dataclass(frozen=True, slots=True)
class Target:
    module: str
    #: only the functions that read sizes (the shape rules of a file of mostly other things)
    shape_rules_only: bool = False


TARGETS = (Target("torch.fx.experimental.symbolic_shapes"), Target("torch.fx.experimental.sym_node"),
           Target("torch.utils._sympy.functions"), Target("torch.utils._sympy.value_ranges"),
           Target("torch._refs", shape_rules_only=True),
           Target("torch._subclasses.fake_impls", shape_rules_only=True))

#: what a shape rule's body mentions (Target.shape_rules_only)
SHAPE_WORDS = re.compile(r"shape|size|dim|numel|stride|guard_|sym_|_check|broadcast|statically_known")
#: functions that format or log and decide nothing: no mutants (they would all look equivalent)
SILENT = re.compile(r"__repr__|__str__|_sympystr|_print|print_|format|_log|log_|debug|__hash__|"
                    r"__getstate__|__setstate__|__reduce__|__deepcopy__|__copy__")


@dataclass(frozen=True, slots=True)
class Mutant:
    id: str
    module: str
    path: str  # the torch file, relative to torch/ (as torch coverage names it)
    qualname: str
    operator: Operator
    line: int  # first line of the mutated node in the torch file
    end_line: int
    stmt_line: int  # first line of the statement holding it: what line coverage sees
    start_line: int  # first line of the function's text (its first decorator)
    def_line: int
    classes: tuple[str, ...]  # the enclosing class headers, indented as in the file
    future_annotations: bool  # the file has `from __future__ import annotations`
    original: str  # the function's text, decorators included
    mutated: str
    description: str

    def to_json(self) -> dict:
        d = {f: getattr(self, f) for f in self.__slots__}
        d["operator"], d["classes"] = self.operator.value, list(self.classes)
        return d

    @classmethod
    def from_json(cls, d: dict) -> Mutant:
        return cls(**{**d, "operator": Operator(d["operator"]), "classes": tuple(d["classes"])})

    def compile_text(self, keep_class: bool = False) -> str:
        """Source that compiles the mutated function alone: blank lines up to its class headers
        (so its code keeps the torch file's line numbers, Note [kept lines]), the headers (for
        name mangling and the `__class__` cell of super()), and the function with its
        decorators blanked out (hook.py swaps the code object of the already decorated function,
        so the decorators must not run again: registrations, caches). `keep_class`: with a
        line that uses `__class__`, for a method whose original has the `__class__` cell of
        super() that the mutation removed (the code swap needs the same free variables)."""
        body = self.mutated.splitlines()
        n_deco = self.def_line - self.start_line
        body = [""] * n_deco + body[n_deco:]
        if keep_class:
            indent = re.match(r"\s*", body[n_deco]).group() + "    "
            body.append(f"{indent}if False: __class__  # keeps the closure of the original")
        head = "\n" * (self.start_line - 1 - len(self.classes)) + "".join(c + "\n" for c in self.classes)
        return head + "\n".join(body) + "\n"


# ---- enumeration ---------------------------------------------------------------------------
def _functions(body: list[ast.stmt], prefix: str = "", classes: tuple[str, ...] = ()) -> Iterator:
    """(qualname, node, class headers) of every function of a module or class body."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + stmt.name, stmt, classes
        elif isinstance(stmt, ast.ClassDef):
            header = " " * stmt.col_offset + f"class {stmt.name}:"
            yield from _functions(stmt.body, f"{prefix}{stmt.name}.", (*classes, header))


def _chars(line: str, col: int) -> int:
    """ast's column (UTF-8 bytes) as a str index."""
    return len(line.encode()[:col].decode(errors="ignore"))


def _same_precedence(node: ast.AST, text: str) -> bool:
    """Whether `text` binds like `node` (the same kind of expression, the same operator), so it
    needs no parentheses where `node` stood."""
    new = ast.parse(text, mode="eval").body
    if type(new) is not type(node):
        return False
    return type(getattr(new, "op", None)) is type(getattr(node, "op", None))


def _replacement(node: ast.AST, text: str, k: int) -> str:
    if isinstance(node, ast.stmt):
        return text + "\n" * k
    if k == 0 and (re.fullmatch(r"[\w.]+", text) or _same_precedence(node, text)):
        return text
    return "(" + text + "\n" * k + ")"


def splice(lines: list[str], start: int, node: ast.AST, text: str) -> str:
    """The function text `lines` (its first line is line `start` of the file, each with its
    newline) with `node`'s segment replaced by `text` (Note [kept lines])."""
    a, b = node.lineno - start, node.end_lineno - start
    head = lines[a][: _chars(lines[a], node.col_offset)]
    tail = lines[b][_chars(lines[b], node.end_col_offset):]
    new = head + _replacement(node, text, b - a) + tail
    return "".join(lines[:a]) + new + "".join(lines[b + 1:])


def _statement_line(parents: dict, node: ast.AST) -> int:
    """The first line of the innermost statement that holds `node`."""
    while not isinstance(node, ast.stmt):
        node = parents[node]
    return node.lineno


def _resolver(module: ModuleType | None):
    """Whether a dotted name exists in `module`'s globals or the builtins (None: any)."""
    def resolves(text: str) -> bool:
        if module is None:
            return True
        first, *rest = text.split(".")
        obj = vars(module).get(first, getattr(builtins, first, hook.MISSING))
        for part in rest:
            obj = getattr(obj, part, hook.MISSING)
        return obj is not hook.MISSING
    return resolves


def _mutants_of(fn: ast.FunctionDef, qualname: str, classes: tuple[str, ...], lines: list[str],
                meta: dict, module: ModuleType | None) -> Iterator[Mutant]:
    start = fn.decorator_list[0].lineno if fn.decorator_list else fn.lineno
    text = lines[start - 1: fn.end_lineno]
    original = "".join(text)
    seen: dict[tuple, int] = {}
    parents = {c: p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
    for s in sites(fn, _resolver(module)):
        key = (s.operator, s.node.lineno)
        index = seen[key] = seen.get(key, -1) + 1
        raw = f"{meta['path']}:{qualname}:{s.operator.value}:{s.node.lineno}:{index}"
        yield Mutant(hashlib.sha256(raw.encode()).hexdigest()[:12], meta["module"], meta["path"], qualname,
                     s.operator, s.node.lineno, s.node.end_lineno, _statement_line(parents, s.node), start, fn.lineno,
                     classes, meta["future"], original, splice(text, start, s.node, s.text), s.description)


def _wanted(fn: ast.FunctionDef, shape_rules_only: bool) -> bool:
    if SILENT.search(fn.name) or any("overload" in ast.unparse(d) for d in fn.decorator_list):
        return False
    if not shape_rules_only:
        return True
    words = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | \
            {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)}
    return any(SHAPE_WORDS.search(w) for w in words)


def mutants_of_source(source: str, module_name: str, path: str, shape_rules_only: bool = False,
                      module: ModuleType | None = None) -> list[Mutant]:
    """Every mutant of one module's source. With `module` (the imported module), only the
    functions that exist at run time with that first line (hook.resolve), and only swaps to
    names the module can look up."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    future = any(isinstance(s, ast.ImportFrom) and s.module == "__future__"
                 and any(a.name == "annotations" for a in s.names) for s in tree.body)
    meta = {"module": module_name, "path": path, "future": future}
    out: list[Mutant] = []
    for qualname, fn, classes in _functions(tree.body):
        if not _wanted(fn, shape_rules_only):
            continue
        first = fn.decorator_list[0].lineno if fn.decorator_list else fn.lineno
        if module is not None and hook.resolve(module, qualname, first) is None:
            continue  # shadowed by a later definition, or not a plain function at run time
        out.extend(_mutants_of(fn, qualname, classes, lines, meta, module))
    return out


def torch_relpath(module: ModuleType) -> str:
    import torch

    root = os.path.dirname(torch.__file__)
    return os.path.relpath(inspect.getsourcefile(module), root).replace(os.sep, "/")


def enumerate_mutants(targets: tuple[Target, ...] = TARGETS) -> list[Mutant]:
    """Every mutant of the installed torch's targets, in a fixed order (imports torch)."""
    out: list[Mutant] = []
    for t in targets:
        module = importlib.import_module(t.module)
        out.extend(mutants_of_source(inspect.getsource(module), t.module, torch_relpath(module),
                                     t.shape_rules_only, module))
    return out


def _allocate(n: int, sizes: dict) -> dict:
    """n split over strata: one each first (the largest strata when n is smaller than their
    number), the rest in proportion to size, largest remainders first."""
    order = sorted(sizes, key=lambda k: (-sizes[k], k))
    take = {k: int(k in order[:n]) for k in sizes}
    rest, room = n - sum(take.values()), {k: sizes[k] - take[k] for k in sizes}
    total = sum(room.values())
    if rest <= 0 or not total:
        return take
    quota = {k: rest * room[k] / total for k in sizes}
    for k in sizes:
        take[k] += int(quota[k])
    for k in sorted(sizes, key=lambda k: (-(quota[k] - int(quota[k])), k))[: n - sum(take.values())]:
        take[k] += 1
    return take


def sample(mutants: list[Mutant], n: int, seed: int) -> list[Mutant]:
    """`n` mutants stratified by (file, operator) (_allocate), each stratum's drawn from a
    random.Random(seed) shuffle; the result is in enumeration order."""
    if n >= len(mutants):
        return list(mutants)
    strata: dict[tuple[str, str], list[int]] = {}
    for i, m in enumerate(mutants):
        strata.setdefault((m.path, m.operator.value), []).append(i)
    keys = sorted(strata)
    take = _allocate(n, {k: len(strata[k]) for k in keys})
    rng = random.Random(seed)
    chosen: list[int] = []
    for k in keys:
        idx = list(strata[k])
        rng.shuffle(idx)
        chosen.extend(idx[: take[k]])
    return [mutants[i] for i in sorted(chosen)]
