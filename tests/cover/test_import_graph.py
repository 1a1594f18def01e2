"""No import cycle at any level, and a reason beside every import deferred into a function. Read
from the source with `ast` (tests/cover/test_layers.py's `module_imports`), never imported.

The graph: one node per module of the package (a package is its __init__.py; shapefuzz.strategies
is strategies/, pyproject.toml's package-dir), one edge per module an import statement makes
Python run, whether the statement is at module level, inside a function or an importlib call:

- `import a.b.c` and `from a.b.c import name` run a.b.c, and first each package above it
  (a/__init__.py, a/b/__init__.py); `from a.b import c` where c is a submodule runs a.b.c too;
- except a package above the importer itself (an ancestor's __init__.py, or the importer): Python
  has started running it before the importer (a submodule's packages are imported first), so an
  import that only walks through it to a submodule runs nothing new. This is how a package's
  __init__.py may import its own submodules, and those submodules import each other by their full
  names, without a cycle;
- but a statement that takes a name (not a submodule) off such a package, `from a import X` in
  a/b.py where X is defined in a/__init__.py, is an edge a/b.py -> a/__init__.py: when a/__init__.py
  imports a/b.py at module level, X exists only if it is defined above that import, so the two
  modules depend on each other's order of execution: a real cycle.

A cycle (a strongly connected component of two modules or more, or a module importing a name off
itself) fails the test with one chain of `file:line` per module of the cycle. Break it by moving
the code to the layer where it belongs (a helper both sides need into a lower module, a data type
into a module of its own), not by hiding an import in a function: the graph sees those too.

Deferred imports: every import of a shapefuzz module inside a function carries a trailing
`# lazy: why` comment on its first line: what it keeps out of an import that must stay light
(torch for `import shapefuzz.program`, z3 and sympy for the oracle registry, everything for
`shapefuzz --help` and the pytest plugin), or the rule that defers it (an upward import listed
in test_layers.UPWARD, an oracle's system). Without such a reason, import it at module level:
it breaks no cycle (there are none) and saves nothing. The repro templates are exempt: their
text is pasted into standalone scripts (Note [repro templates] in repro/common.py). For the same
reason an import inside a template's function is no edge: the package never calls those
functions (a writer reads their text), only a script that pastes them runs the import.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from test_layers import PACKAGE, Import, module_files, module_imports


@dataclass(frozen=True, slots=True)
class Edge:
    importer: str  # dotted module names
    imported: str
    line: int  # the first statement that makes it, preferring one at module level
    top: bool


def _above(module: str, is_package: bool) -> set[str]:
    """The packages Python has started running before `module` runs (and the package itself)."""
    parts = module.split(".")
    mine = {".".join(parts[:k]) for k in range(1, len(parts))}
    return mine | {module} if is_package else mine


def _targets(imp: Import, modules: dict[str, Path], above: set[str]) -> list[str]:
    """The modules one import record makes Python run (the module docstring's rules)."""
    if imp.source and imp.module not in modules:  # a name off imp.source's module
        takes_names, module = True, imp.source
    else:
        takes_names, module = False, imp.module
    parts = module.split(".")
    chain = [".".join(parts[:k]) for k in range(1, len(parts) + 1)]
    return [m for m in chain if m in modules
            and (m not in above or (takes_names and m == module))]


def edges(root: Path = PACKAGE) -> dict[tuple[str, str], Edge]:
    """(importer, imported) -> the statement that makes it, over every import of the package."""
    modules = module_files(root)
    out: dict[tuple[str, str], Edge] = {}
    for name, path in modules.items():
        above = _above(name, path.name == "__init__.py")
        script_text = path.relative_to(root.parent).as_posix().startswith(NO_REASON_NEEDED)
        for imp in module_imports(path, root):
            if script_text and not imp.top:
                continue  # a template function's import runs in the script it is pasted into
            for target in _targets(imp, modules, above):
                old = out.get((name, target))
                if old is None or (imp.top and not old.top):
                    out[(name, target)] = Edge(name, target, imp.line, imp.top)
    return out


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    """The modules `start` imports, directly or not (itself only through a cycle)."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for n in graph[todo.pop()] - seen:
            seen.add(n)
            todo.append(n)
    return seen


def _components(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components that hold a cycle: modules that reach each other
    (a few hundred modules: reachability from each one is cheap and plain)."""
    reach = {m: _reach(graph, m) for m in graph}
    comps = {frozenset(x for x in reach[m] if m in reach[x]) for m in graph if m in reach[m]}
    return sorted(map(set, comps), key=sorted)


def _shortest_cycle(graph: dict[str, set[str]], start: str, within: set[str]) -> tuple[str, ...]:
    """start -> ... -> start by the fewest imports, through the modules of `within`."""
    came: dict[str, str] = {}
    todo = deque([start])
    while todo:
        node = todo.popleft()
        if start in graph[node]:
            path = [node]
            while path[-1] != start:
                path.append(came[path[-1]])
            return (start, *path[::-1][1:], start) if node != start else (start, start)
        for n in sorted(graph[node] & within):
            if n not in came:
                came[n] = node
                todo.append(n)
    raise AssertionError(f"{start} is on no cycle")


def cycles(root: Path = PACKAGE) -> list[str]:
    """Every import cycle of the package as readable chains: the shortest cycle through each
    module of a strongly connected component (each cycle listed once)."""
    found = edges(root)
    modules = module_files(root)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for a, b in found:
        graph[a].add(b)
    chains = {_canonical(_shortest_cycle(graph, m, comp)) for comp in _components(graph) for m in comp}
    return [_readable(chain, found, modules, root) for chain in sorted(chains)]


def _canonical(chain: tuple[str, ...]) -> tuple[str, ...]:
    """The same cycle read from its smallest module (so each cycle is listed once)."""
    ring = chain[:-1]
    k = ring.index(min(ring))
    return ring[k:] + ring[:k] + (ring[k],)


def _readable(chain: tuple[str, ...], found: dict, modules: dict[str, Path], root: Path) -> str:
    steps = []
    for a, b in pairwise(chain):
        e = found[(a, b)]
        where = "" if e.top else " (in a function)"
        steps.append(f"{modules[a].relative_to(root.parent).as_posix()}:{e.line}{where}")
    return " -> ".join(steps + [modules[chain[-1]].relative_to(root.parent).as_posix()])


def test_no_import_cycle():
    found = cycles()
    assert not found, (
        "import cycles (each `file:line` imports the next file): move the code both sides need "
        "into a lower module, or a data type into a module of its own; a function-level import "
        "does not break a cycle (see this module's docstring)\n  " + "\n  ".join(found))


#: folders whose deferred imports need no reason: templates of standalone scripts
NO_REASON_NEEDED = ("shapefuzz/repro/templates/",)
LAZY = re.compile(r"#.*\blazy: *\S")


def deferred_without_reason(root: Path = PACKAGE) -> list[str]:
    """`file:line` of every import of the package inside a function without `# lazy: why`."""
    out = []
    for path in module_files(root).values():
        rel = path.relative_to(root.parent).as_posix()
        if rel.startswith(NO_REASON_NEEDED):
            continue
        lines = path.read_text().splitlines()
        deferred = {imp.line for imp in module_imports(path, root)
                    if not imp.top and imp.module.split(".")[0] == root.name}
        out += [f"{rel}:{n}: {lines[n - 1].strip()}" for n in sorted(deferred)
                if not LAZY.search(lines[n - 1])]
    return sorted(out)


def test_deferred_imports_say_why():
    found = deferred_without_reason()
    assert not found, (
        "imports inside a function without a `# lazy: why` comment on their line: import them at "
        "module level, or say what deferring them keeps out of start-up (see this module's "
        "docstring)\n  " + "\n  ".join(found))


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path / "shapefuzz"


def test_a_planted_cycle_is_found_at_every_level(tmp_path):
    pkg = _package(tmp_path, {
        "shapefuzz/__init__.py": "",
        "shapefuzz/a.py": "from shapefuzz.b import x\n",  # module level ...
        "shapefuzz/b.py": "x = 1\ndef f():\n    from shapefuzz import a\n",  # ... and back in a function
        "shapefuzz/p/__init__.py": "from shapefuzz.p.s import g\nLIMIT = 3\n",  # a re-export ...
        "shapefuzz/p/s.py": "from shapefuzz.p import LIMIT\ndef g(): pass\n",  # ... and a name off it
        "shapefuzz/c.py": "import importlib\nM = importlib.import_module('shapefuzz.d')\n",
        "shapefuzz/d.py": "def f():\n    import shapefuzz.c\n",
        "shapefuzz/e.py": "def f():\n    from shapefuzz import e\n",  # itself
    })
    assert cycles(pkg) == [
        "shapefuzz/a.py:1 -> shapefuzz/b.py:3 (in a function) -> shapefuzz/a.py",
        "shapefuzz/c.py:2 -> shapefuzz/d.py:2 (in a function) -> shapefuzz/c.py",
        "shapefuzz/e.py:2 (in a function) -> shapefuzz/e.py",
        "shapefuzz/p/__init__.py:1 -> shapefuzz/p/s.py:1 -> shapefuzz/p/__init__.py",
    ]


def test_an_acyclic_package_passes(tmp_path):
    pkg = _package(tmp_path, {
        "shapefuzz/__init__.py": "class BadInput(ValueError): pass\n",
        "shapefuzz/ir.py": "from shapefuzz import BadInput\n",  # a name off the root: it ran first
        "shapefuzz/p/__init__.py": "from shapefuzz.p import s, t\n",  # its own submodules
        "shapefuzz/p/s.py": "from shapefuzz.p.t import h\nfrom shapefuzz.ir import BadInput\n",
        "shapefuzz/p/t.py": "def h():\n    from . import u  # lazy: a reason\n",
        "shapefuzz/p/u.py": "",
        "strategies/__init__.py": "from shapefuzz.p import s\nfrom .gen import draw\n",
        "strategies/gen.py": "from shapefuzz.p.t import h\ndef draw(): pass\n",
        # a writer and its template: the template's function imports the writer in the script only
        "shapefuzz/repro/w.py": "from shapefuzz.repro.templates import t\n",
        "shapefuzz/repro/templates/t.py": "import sys\ndef main():\n    from shapefuzz.repro.w import run\n",
    })
    assert cycles(pkg) == []
    assert ("shapefuzz.repro.templates.t", "shapefuzz.repro.w") not in edges(pkg)
    assert ("shapefuzz.strategies", "shapefuzz.strategies.gen") in edges(pkg)
    assert ("shapefuzz.p.t", "shapefuzz.p.u") in edges(pkg)
    assert deferred_without_reason(pkg) == []


def test_a_deferred_import_without_a_reason_is_found(tmp_path):
    pkg = _package(tmp_path, {
        "shapefuzz/a.py": "import json\ndef f():\n    import json\n    from shapefuzz import b\n"
                          "    from shapefuzz import c  # lazy: c imports torch\n",
        "shapefuzz/b.py": "", "shapefuzz/c.py": "",
        "shapefuzz/repro/templates/t.py": "def f():\n    from shapefuzz import b\n",
    })
    assert deferred_without_reason(pkg) == ["shapefuzz/a.py:4: from shapefuzz import b"]
