"""The repro writers hold no code in strings beyond the program's own lines and `NAME = value`
bindings (Note [repro templates] in shapefuzz/repro/common.py): a function, a loop, a `with`, an
`if`, an import or a harness's `if __name__ == "__main__"` that a script needs is template code
(shapefuzz/repro/templates/), which ruff and the tests read as Python. Read with ast, never
imported."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WRITERS = sorted((ROOT / "shapefuzz" / "repro").glob("*.py"))

#: the script assembler's own strings: the import lines it keeps (read off the templates) and
#: the two-line check of torch's private names (Note [private names in scripts]), which must
#: stay two lines long wherever it goes, so it is not a template block
ASSEMBLER = {("common.py", name) for name in ("_guard", "_import_lines", "_grouped", "imports_of", "script")}

#: statements a program's own line never is: what wraps lines, defines names or imports them
_WRAPPING = (ast.For, ast.While, ast.If, ast.With, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
             ast.Import, ast.ImportFrom, ast.Try, ast.Return, ast.Global, ast.Nonlocal)
#: the same, for a fragment that does not parse alone (an `if x:` whose body is added after it)
_HEAD = re.compile(r"(^|\n)\s*((for|while|if|elif|with|def|class|return|global|import|except)\s+\S|"
                   r"(else|try|finally|except)\s*:|from\s+\S+\s+import\b)")


def _text(node: ast.AST) -> str | None:
    """A string literal's text, an f-string's fields written as a plain name."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "_" for v in node.values)
    return None


def _is_code(text: str) -> bool:
    try:
        tree = ast.parse(text.strip("\n"))
    except SyntaxError:
        return bool(_HEAD.search(text))
    return any(isinstance(n, _WRAPPING) for n in ast.walk(tree))


def _docstrings(tree: ast.Module) -> set[int]:
    return {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def code_strings(source: str, module: str = "<test>") -> list[str]:
    """`module:line: text` of each string literal of `source` that holds wrapping code."""
    tree = ast.parse(source)
    skip = _docstrings(tree) | {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and (module, n.name) in ASSEMBLER]:
        skip |= {id(n) for n in ast.walk(fn)}
    return [f"{module}:{n.lineno}: {text[:80]!r}" for n in ast.walk(tree)
            if id(n) not in skip and (text := _text(n)) is not None and _is_code(text)]


def test_the_writers_hold_no_wrapping_code_in_strings():
    found = [hit for p in WRITERS for hit in code_strings(p.read_text(), p.name)]
    assert not found, "code that wraps a script's lines belongs in a template:\n" + "\n".join(found)


def test_the_check_finds_what_it_looks_for():
    planted = '''
def issue(case):
    """A docstring may say: if x: return y."""
    name = "program"
    return [f"def {name}():\\n    global se\\n", "if __name__ == '__main__':", "import sys",
            f"with applied({name!r}):", "v1 = v0 + 2", f"c = v{name} >= 3", "claim(0, c, guard_or_false(c), False, True)"]
'''
    found = code_strings(planted)
    assert len(found) == 4, found  # def, if, import, with; the program's lines are not wrapping code
    assert not code_strings('x = "v2 = torch.sym_max(v0, v1)"\ny = "earlier(0, lambda: guard_or_false(c))"\nz = "if"\n')
    assert code_strings('x = "if c:  # a comment"\n')  # a head whose body comes after it
