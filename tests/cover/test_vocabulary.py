"""One word per meaning (issue 32, item 6): `kind` is a program's kind (Note [program kinds] in
shapefuzz/program/kinds.py) and nothing else. An outcome has a `status`, a finding a `symptom`,
a value a `sort`, an axiom an `origin`; a dim's kind is a `dim_kind`. Read with ast, never
imported, as test_hygiene.py reads the package.

The rule, for every module of shapefuzz/, strategies/ and benchmarks/:
- a class declares `kind` (a field or a class attribute) only when it is a program class;
- a function takes a parameter `kind` only when it is one of PROGRAM_KIND_FUNCTIONS or has the
  signature of an oracle's `replay_input` hook, (finding, obs, kind), whose third argument is the
  program kind (Oracle.replay_input in shapefuzz/oracles/base.py);
- `.kind` and getattr / hasattr of "kind" read a program: the receiver is `program` or ends in
  `.program` (or is a program class's own `self`);
- a call passes `kind=` only to one of PROGRAM_KIND_FUNCTIONS.
File keys are strings, not names, and stay as they are (Note [file keys] in
shapefuzz/systems/observation.py). Templates are exempt: their text is what generated scripts
say (Note [repro templates]), and the committed corpus holds those scripts."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(p for d in ("shapefuzz", "strategies", "benchmarks") for p in (ROOT / d).rglob("*.py")
                 if "templates" not in p.parts)
#: the classes whose `kind` is their program kind (shapefuzz/program/kinds.py's KINDS)
PROGRAM_CLASSES = {"Program", "QProgram"}
#: the functions whose parameter `kind` is a program kind's name
PROGRAM_KIND_FUNCTIONS = {"accepts", "programs_of_kind"}
#: Oracle.replay_input's parameters
REPLAY_INPUT = ["finding", "obs", "kind"]


def _receiver_is_a_program(node: ast.expr, program_class: bool) -> bool:
    text = ast.unparse(node)
    return text == "program" or text.endswith(".program") or (program_class and text == "self")


def _class_violations(cls: ast.ClassDef) -> list[tuple[int, str]]:
    if cls.name in PROGRAM_CLASSES:
        return []
    out = []
    for stmt in cls.body:
        targets = ([stmt.target] if isinstance(stmt, ast.AnnAssign)
                   else stmt.targets if isinstance(stmt, ast.Assign) else [])
        if any(isinstance(t, ast.Name) and t.id == "kind" for t in targets):
            out.append((stmt.lineno, f"class {cls.name} declares `kind`"))
    return out


def _parameter_violations(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list:
    a = fn.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    if "kind" not in names:
        return []
    name = getattr(fn, "name", "<lambda>")
    if name in PROGRAM_KIND_FUNCTIONS or names == REPLAY_INPUT:
        return []
    return [(fn.lineno, f"{name}() takes a parameter `kind`")]


def _use_violations(node: ast.AST, program_class: bool) -> list[tuple[int, str]]:
    if (isinstance(node, ast.Attribute) and node.attr == "kind"
            and not _receiver_is_a_program(node.value, program_class)):
        return [(node.lineno, f"{ast.unparse(node)} is not a program's kind")]
    if isinstance(node, ast.Call):
        fn = ast.unparse(node.func)
        if fn in ("getattr", "hasattr", "setattr") and len(node.args) >= 2:
            attr = node.args[1]
            if (isinstance(attr, ast.Constant) and attr.value == "kind"
                    and not _receiver_is_a_program(node.args[0], program_class)):
                return [(node.lineno, f"{ast.unparse(node)} is not a program's kind")]
        callee = fn.rsplit(".", 1)[-1]
        if any(k.arg == "kind" for k in node.keywords) and callee not in PROGRAM_KIND_FUNCTIONS:
            return [(node.lineno, f"{fn}(kind=...) passes a `kind` that is not a program kind")]
    return []


def violations(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for every use of the name `kind` outside its program-kind sense."""
    out = []
    program_lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            out += _class_violations(node)
            if node.name in PROGRAM_CLASSES:
                program_lines |= set(range(node.lineno, node.end_lineno + 1))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            out += _parameter_violations(node)
        out += _use_violations(node, getattr(node, "lineno", 0) in program_lines)
    return sorted(out)


def test_kind_means_a_program_kind():
    found = [f"{p.relative_to(ROOT)}:{line}: {what}" for p in SOURCES
             for line, what in violations(ast.parse(p.read_text()))]
    assert not found, ("`kind` is a program's kind (Note [program kinds]); an outcome has a status, a "
                       "finding a symptom, a value a sort, an axiom an origin, a dim a dim_kind:\n"
                       + "\n".join(found))


PLANTED = {
    "a finding's field": "class Finding:\n    oracle: str\n    kind: str\n",
    "a class attribute": "class Value:\n    kind = 'int'\n",
    "a parameter": "def _f(obs, kind: str):\n    return kind\n",
    "a lambda's parameter": "f = lambda kind: kind\n",
    "an outcome's kind": "def f(obs):\n    return obs.outcome.kind\n",
    "a getattr": "def f(v):\n    return getattr(v, 'kind', '')\n",
    "a keyword": "def f(o):\n    return replace(o, kind='error')\n",
}
ALLOWED = {
    "a program class's constant": "class QProgram:\n    kind = 'questions'\n",
    "a program's kind": ("def f(bug, program):\n"
                         "    return bug.program.kind, getattr(program, 'kind', '')\n"),
    "a program-kind function": "def accepts(system, kind):\n    return kind\n",
    "a replay_input hook": "def _no_input(finding, obs, kind):\n    return ()\n",
    "a file key": "def f(f):\n    return {'kind': f.symptom}\n",
    "a local": "def f(program):\n    kind = kind_of(program)\n    return kind\n",
}


def test_the_rule_fires_on_each_planted_use():
    missed = [name for name, src in PLANTED.items() if not violations(ast.parse(src))]
    assert not missed, f"not caught: {missed}"
    flagged = {name: violations(ast.parse(src)) for name, src in ALLOWED.items()}
    assert not any(flagged.values()), flagged
