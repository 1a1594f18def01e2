"""Import direction between layers, read from the source with `ast` (nothing here imports the
modules it checks, so a module that would only misbehave when imported is still checked).

DESIGN.md: "A system never calls an oracle; an oracle never runs torch except through the replay
service it is given." Read as imports:

- no module under shapefuzz/systems/ imports shapefuzz.oracles, at module level or inside a
  function: a system records facts, claims and z3 verdicts (shapefuzz/systems/claims.py), an
  oracle reads them off the observation;
- no module under shapefuzz/oracles/ imports shapefuzz.systems at module level. Importing the
  oracles (the registry) must not pull in the systems and torch; an oracle may import a pure
  helper of a system inside the function that needs it (truth.py's `with_values`, which
  rewrites a question program's literals), never a system;
  The observation record (shapefuzz/systems/observation.py: Observation, SmtCheck,
  compare_runs) is the data both sides share, so an oracle may import it anywhere;
- the prover (shapefuzz/systems/prover/: sympy -> z3, `prove`) and the observation record import
  neither the systems nor the oracles, at any level;
- the subpackages form layers, the pipeline's order (LAYERS): ir (the types ops and programs
  share) < program and ops < strategies (which draw programs of the ops) < systems < oracles <
  cases < repro < report < campaign < the command line. A module imports nothing of a higher
  layer at module level, and inside a function only where UPWARD lists why.

tests/cover/test_import_graph.py reads the same imports as one graph: no cycle at any level,
and a reason beside every import deferred into a function.

Each exception names the file, the imported module and why; an exception whose file still
exists but no longer has that import fails the test, so the list cannot outlive the reason for it
(an exception for a file that is gone is inert: delete it when you see it).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "shapefuzz"

#: (file under shapefuzz/, imported module) -> why it may import the oracles
SYSTEMS_MAY_IMPORT_ORACLES: dict[tuple[str, str], str] = {}

#: (file under shapefuzz/, imported module) -> why it may import a system at module level
ORACLES_MAY_IMPORT_SYSTEMS_AT_TOP: dict[tuple[str, str], str] = {}

#: the observation record: the data systems return and oracles read (torch-free), and the typed
#: evidence systems record for oracles in it (Note [typed evidence]); any oracle module may import them
SHARED_RECORD = ("shapefuzz.systems.observation", "shapefuzz.systems.evidence")

#: the subpackages (and top-level modules) of shapefuzz/ from the lowest layer up; strategies is
#: shapefuzz.strategies (strategies/ beside shapefuzz/): it draws programs of the ops
LAYERS = (("ir",), ("program", "ops"), ("strategies",), ("systems",), ("oracles",), ("cases",),
          ("repro",), ("report",), ("campaign",), ("cli", "pytest_plugin", "__main__"))

#: (file, imported module) -> why the file may import a higher layer inside a function
UPWARD: dict[tuple[str, str], str] = {
    ("shapefuzz/cases/promote.py", "shapefuzz.repro"): "promoting a case writes its scripts "
    "afresh for the corpus (the repro package reads cases, so it sits above them)",
}


@dataclass(frozen=True, slots=True)
class Import:
    module: str  # absolute dotted name: `from a import b` gives "a.b" as well as "a"
    line: int
    top: bool  # executed when the module is imported (not inside a function)
    source: str = ""  # `from a import b`'s "a.b": "a", the module the name is taken from


def sources(root: Path = PACKAGE) -> dict[Path, str]:
    """The folders of the package -> their dotted names: pyproject.toml's package-dir maps
    shapefuzz.strategies to strategies/ beside shapefuzz/."""
    return {root: root.name, root.parent / "strategies": f"{root.name}.strategies"}


def module_files(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its __init__.py)."""
    out: dict[str, Path] = {}
    for folder, name in sources(root).items():
        for path in sorted(folder.rglob("*.py")) if folder.is_dir() else ():
            parts = list(path.relative_to(folder).with_suffix("").parts)
            out[".".join([name] + parts[: -1 if parts[-1] == "__init__" else None])] = path
    return out


def _resolve(path: Path, root: Path, level: int, module: str | None, name: str) -> str:
    """The absolute name of a relative import in `path` (a file of the package `name` at
    `root`)."""
    package = name.split(".") + list(path.relative_to(root).with_suffix("").parts)[:-1]
    base = package[: len(package) - (level - 1)]  # (an __init__'s package is its folder)
    return ".".join(base + ([module] if module else []))


def _dynamic(node: ast.Call) -> str | None:
    """importlib.import_module("x") / __import__("x") with a literal name."""
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    if name in ("import_module", "__import__") and node.args:
        a = node.args[0]
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            return a.value
    return None


class _Imports(ast.NodeVisitor):
    def __init__(self, path: Path, root: Path, name: str) -> None:
        self.path, self.root, self.name = path, root, name
        self.depth = 0  # enclosing functions
        self.found: list[Import] = []

    def _add(self, module: str, node: ast.AST, source: str = "") -> None:
        self.found.append(Import(module, node.lineno, self.depth == 0, source))

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self._add(a.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = (_resolve(self.path, self.root, node.level, node.module, self.name)
                if node.level else node.module)
        self._add(base, node)
        for a in node.names:
            self._add(f"{base}.{a.name}", node, base)

    def visit_Call(self, node: ast.Call) -> None:
        name = _dynamic(node)
        if name is not None:
            self._add(name, node)
        self.generic_visit(node)


def imports_of(path: Path, root: Path = PACKAGE, name: str = "") -> list[Import]:
    """Every import statement of `path`, a file of the package `name` (root's folder name by
    default) at `root`."""
    v = _Imports(path, root, name or root.name)
    v.visit(ast.parse(path.read_text(), str(path)))
    return v.found


def module_imports(path: Path, root: Path = PACKAGE) -> list[Import]:
    """imports_of for a file of module_files(root): one of shapefuzz/ or strategies/."""
    folder, name = next((f, n) for f, n in sources(root).items() if f in path.parents)
    return imports_of(path, folder, name)


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _files(root: Path, under: str) -> list[Path]:
    p = root / under
    if p.is_file():
        return [p]
    return sorted(p.rglob("*.py")) if p.is_dir() else []


def _crossings(root: Path, under: str, target: str, top_only: bool,
               exempt: tuple[str, ...] = ()) -> dict[tuple[str, str], int]:
    """(file, first imported module of `target`) -> line, per import statement of the files
    under `under` (a file or a folder of shapefuzz/) that reaches into `target` (other than
    into `exempt`)."""
    out: dict[tuple[str, str], int] = {}
    seen_lines: set[tuple[str, int]] = set()
    for path in _files(root, under):
        rel = path.relative_to(root).as_posix()
        for imp in imports_of(path, root):
            if not _within(imp.module, target) or (top_only and not imp.top) \
                    or any(_within(imp.module, e) for e in exempt):
                continue
            if (rel, imp.line) in seen_lines:
                continue  # `from shapefuzz.oracles import a, b`: one statement, one crossing
            seen_lines.add((rel, imp.line))
            out.setdefault((rel, imp.module), imp.line)
    return out


def layer_violations(root: Path = PACKAGE) -> list[str]:
    """Every import against the rules of this module's docstring, as readable lines."""
    problems: list[str] = []

    def judge(under: str, target: str, top_only: bool, allowed: dict, rule: str,
              exempt: tuple[str, ...] = ()) -> None:
        found = _crossings(root, under, target, top_only, exempt)
        for (rel, module), line in sorted(found.items()):
            if (rel, module) not in allowed:
                problems.append(f"shapefuzz/{rel}:{line} imports {module}: {rule}")
        for (rel, module) in sorted(set(allowed) - set(found)):
            if (root / rel).exists():  # (a file that moved away takes its import with it)
                problems.append(f"the exception for shapefuzz/{rel} importing {module} no longer "
                                "matches an import: delete it from tests/cover/test_layers.py")

    judge("systems", "shapefuzz.oracles", False, SYSTEMS_MAY_IMPORT_ORACLES,
          "a system never calls an oracle (record the facts on the Observation instead)")
    judge("oracles", "shapefuzz.systems", True, ORACLES_MAY_IMPORT_SYSTEMS_AT_TOP,
          "an oracle module may not import a system at module level (import a pure helper "
          "inside the function that needs it, or move it below both layers)", SHARED_RECORD)
    for lower in ("systems/prover", "systems/observation.py", "systems/evidence"):
        judge(lower, "shapefuzz.oracles", False, {}, "the prover and the observation record sit "
              "below systems and oracles")
        found = _crossings(root, lower, "shapefuzz.systems", False)
        problems += [f"shapefuzz/{rel}:{line} imports {module}: the prover and the observation "
                     "record sit below the systems" for (rel, module), line in sorted(found.items())
                     if not _within(module, "shapefuzz.systems.prover")
                     and not any(_within(module, r) for r in SHARED_RECORD)]
    problems += _upward(root)
    first: dict[str, str] = {}  # one line per import statement, the most specific rule first
    for line in problems:
        first.setdefault(line.split(" ", 1)[0], line)
    return list(first.values())


def _layer(name: str) -> int | None:
    return next((k for k, names in enumerate(LAYERS) if name in names), None)


def _upward(root: Path) -> list[str]:
    """Imports of a higher layer (LAYERS): never at module level, in a function only by UPWARD."""
    out, used, lines = [], set(), set()
    for name, path in module_files(root).items():
        rel = path.relative_to(root.parent).as_posix()  # shapefuzz/... or strategies/...
        mine = _layer(name.split(".")[1]) if "." in name else None
        for imp in module_imports(path, root) if mine is not None else ():
            parts = imp.module.split(".")
            theirs = _layer(parts[1]) if parts[0] == root.name and len(parts) > 1 else None
            if theirs is None or theirs <= mine or (rel, imp.line) in lines:
                continue
            lines.add((rel, imp.line))
            key = (rel, ".".join(parts[:2]))
            if not imp.top and key in UPWARD:
                used.add(key)
                continue
            where = "at module level" if imp.top else "without a reason in UPWARD"
            out.append(f"{rel}:{imp.line} imports {imp.module} {where}: "
                       f"{parts[1]} is a higher layer than {name.split('.')[1]}")
    out += [f"the UPWARD exception {k} no longer matches an import: delete it"
            for k in sorted(set(UPWARD) - used) if (root.parent / k[0]).exists()]
    return sorted(set(out))


def test_layers_import_downward_only():
    assert layer_violations() == []


def test_the_scan_sees_every_form_of_import(tmp_path):
    pkg = tmp_path / "shapefuzz"
    (pkg / "systems" / "sub").mkdir(parents=True)
    (pkg / "oracles").mkdir()
    (pkg / "systems" / "a.py").write_text("from shapefuzz.oracles.soundness import x\n")
    (pkg / "systems" / "b.py").write_text("def f():\n    from shapefuzz import oracles\n")
    (pkg / "systems" / "sub" / "c.py").write_text("def f():\n    from ...oracles import agreement\n")
    (pkg / "systems" / "d.py").write_text(
        "import importlib\nclass K:\n    m = importlib.import_module('shapefuzz.oracles.smt')\n")
    (pkg / "systems" / "ok.py").write_text("from shapefuzz.systems.observation import compare_runs\n")
    (pkg / "oracles" / "e.py").write_text(
        "from shapefuzz.systems.qreplay import with_values\n"
        "def g():\n    from shapefuzz.systems.qreplay import with_values\n")
    (pkg / "oracles" / "f.py").write_text("def g():\n    import shapefuzz.systems.traced\n")
    (pkg / "oracles" / "ok.py").write_text("from shapefuzz.systems.observation import Observation\n")
    (pkg / "cases").mkdir()
    (pkg / "cases" / "promote.py").write_text("import json\n")  # UPWARD's file, without the import
    (pkg / "cases" / "g.py").write_text("from shapefuzz.campaign.run import run_fuzz\n")
    (pkg / "cases" / "h.py").write_text("def f():\n    from shapefuzz.report import write_report\n")
    found = layer_violations(pkg)
    where = sorted(line.split(" ", 1)[0] for line in found if "no longer matches" not in line)
    assert where == ["shapefuzz/cases/g.py:1", "shapefuzz/cases/h.py:2", "shapefuzz/oracles/e.py:1",
                     "shapefuzz/systems/a.py:1", "shapefuzz/systems/b.py:2",
                     "shapefuzz/systems/d.py:3", "shapefuzz/systems/sub/c.py:2"], found
    # an exception whose file no longer makes the import is stale
    assert any("cases/promote.py" in line and "no longer matches" in line for line in found)
