"""What every repro script shares: the docstring at its head, the finding's config as plain
torch switches, templates read as text, and the assembly of a script whose imports are exactly
the ones it uses.

Note [repro templates]: generated scripts are built from real `.py` files in
shapefuzz/repro/templates/, which ruff and the tests see (tests/cover/test_repro_package.py
imports each one). Two shapes:
- a *block* is a function whose body is pasted at the script's top level: its parameters are
  the names the script defined before it, its trailing `return` names what it leaves for the
  blocks after it (the return statement itself is not pasted);
- a *harness* is a whole module pasted below the script's data: its imports go to the script's
  import list, the names it expects from the data are declared under `if TYPE_CHECKING:` (from
  templates/_slots.py), and everything after that declaration is pasted as it is.
A statement that calls a placeholder, an upper-case name with no arguments (`TRACE()`,
`PROGRAM()`), stands where generated lines go: the public call that traces the program, or the
program's own lines, at the placeholder's indentation; a placeholder used as a name
(`SLOW_CONFIG`) stands where one generated expression goes (there: a value's repr).
So a writer's strings hold the program's lines and `NAME = value` bindings; what wraps them (a
function, a loop, a `with`, an `if`, the `if __name__ == "__main__"` of a harness) is template
code (tests/cover/test_repro_strings.py).
Templates are addressed by module and function name through `ast`, never by string index, and
everything taken from a case reaches a script only through codegen (registered op names,
numbers rendered as numbers) or `safe` (docstring text)."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from shapefuzz.oracles import get_oracle, help_table
from shapefuzz.oracles.base import Compares
from shapefuzz.systems.compile_settings import settings_of as compile_settings
from shapefuzz.systems.configs import config_of, is_config
from shapefuzz.systems.parser_lock import parse as locked

__all__ = ["Settings", "bindings", "block", "compares", "doc", "function", "fx_lines", "fx_switches", "harness",
           "imports_of", "inputs_line", "key_of", "kwargs_text", "module_code", "safe", "script",
           "settings_of"]



def safe(s: str, limit: int = 300) -> str:
    """Text for inside a docstring: no quote or backslash can close it, no control character."""
    return "".join(ch for ch in str(s) if ch.isprintable() and ch not in '"\\')[:limit]


def key_of(finding) -> str:
    """The finding's signature as the string files hold (a Signature renders to `.key`)."""
    key = getattr(finding, "key", None)
    return key if isinstance(key, str) else str(finding.signature)


EXITS = "Exits 1 while the bug is there, 0 once it is fixed."


def doc(case, torch_version: str = "", lines: tuple[str, ...] = (), signature: bool = False,
        exits: str = EXITS) -> str:
    """The docstring: summary, the oracle in one line, extra lines, system/config/torch and
    what the exit code means. `signature` adds shapefuzz's dedupe key (check.py)."""
    f = case.finding
    version = safe(torch_version or case.torch_version or "?", 60)
    out = [f'"""{safe(f.summary)}',
           f"oracle {f.oracle}: {_help(f.oracle)}."]
    if signature:
        out.append(f"signature: {safe(key_of(f))}")
    out += [safe(x, 2000) for x in lines]
    out.append(f"system {f.system}, config {safe(f.config, 80)}; found with torch {version}. "
               f'{safe(exits)}"""')
    return "\n".join(out) + "\n"


# ---- the finding's config as torch switches -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Settings:
    """A config as what torch exposes: ShapeEnv kwargs, torch.fx.experimental._config switches,
    export's strictness and dim kind, and whether sizes 0/1 break the trace's contract. Slow-path
    configs (slow:*, all-slow) are shapefuzz patches of torch: `slow` lists them."""

    env_kwargs: dict[str, Any]
    fx: dict[str, Any]
    strict: bool = False
    dim_kind: str = "dynamic"
    small_static: bool = False
    slow: tuple[str, ...] = ()
    decomposed: bool = False  # export: the script replays ep.run_decompositions()


def settings_of(system: str, config: str) -> Settings:
    """The Settings of a finding's config, read from its registered Config (systems/configs.py).
    A name `system` does not register (a ref finding's "all-off" asked of torch-env) keeps the
    default front end and torch's default toggles unless it names a torch_toggles config."""
    from shapefuzz.systems.torch_toggles import CONFIGS as TOGGLES  # lazy: text needs no torch
    from shapefuzz.systems.torch_toggles import toggles  # lazy: script text needs no torch

    c = config_of(system, config) if is_config(system, config) else None
    if c is None and system == "compile":
        config = compile_settings(config).toggles  # raises naming the known compile configs
    name = c.toggles if c is not None else config if config in TOGGLES else "default"
    t = toggles(name)
    front = c or config_of("export", "default")
    return Settings(t.env_kwargs(), t.fx_overrides(), front.strict, front.dims,
                    t.backed_size_oblivious, t.slow_paths(), front.decomposed)


def fx_switches(case, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """torch.fx.experimental._config switches: the campaign's --torch-config (names and plain
    values only), then the config's own."""
    out = {k: v for k, v in case.torch_config
           if isinstance(k, str) and k.isidentifier() and isinstance(v, (bool, int, float))}
    return out | dict(extra or {})


def fx_lines(switches: dict[str, Any], alias: str = "torch.fx.experimental._config") -> list[str]:
    return [f"{alias}.{k} = {v!r}" for k, v in switches.items()]


def kwargs_text(kw: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kw.items() if k.isidentifier())


# ---- program text -------------------------------------------------------------------------------


def bindings(values: dict[str, Any]) -> str:
    """`NAME = value` lines of a repro form's values (Note [repro forms]: ReproForm.values checks
    they are names and plain values, whose repr reads back as the same value)."""
    return "".join(f"{name} = {value!r}\n" for name, value in values.items())


def inputs_line(specs, var: str = "inputs") -> str:
    """`var = [torch.tensor(...), ...]`, one input per line (codegen renders every number), with
    how each dim is traced."""
    from shapefuzz.program.codegen import tensor_source  # lazy: script text needs no torch

    rows = [(tensor_source(s), f"{s.name}: {', '.join(s.dims) or 'scalar'}") for s in specs]
    if not rows:
        return f"{var} = []\n"
    pad = " " * (len(var) + 4)
    body = [f"{pad if k else ''}{t}{',' if k < len(rows) - 1 else ']'}  # {c}" for k, (t, c) in enumerate(rows)]
    return f"{var} = [" + "\n".join(body) + "\n"


# ---- templates ------------------------------------------------------------------------------------


def parse(text: str) -> ast.Module:
    """ast.parse, one thread at a time (Note [one parser at a time], systems/parser_lock.py:
    background confirmations write repro.py while the campaign writes cases)."""
    return locked(text)


@cache
def _tree(path: str) -> tuple[list[str], ast.Module]:
    text = Path(path).read_text()
    return text.split("\n"), parse(text)


def _source(module: ModuleType) -> tuple[list[str], ast.Module]:
    return _tree(str(module.__file__))


def block(module: ModuleType, name: str, trace: str = "", fill: dict[str, str] | None = None) -> str:
    """The body of template function `name` (Note [repro templates]), dedented, without its
    docstring and its trailing return; each placeholder statement replaced by its lines:
    `trace` for `TRACE()`, `fill[NAME]` for `NAME()`."""
    lines, tree = _source(module)
    fn = _template_def(module, tree, name)
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if body and isinstance(body[-1], ast.Return):
        body = body[:-1]
    first, last = body[0].lineno, body[-1].end_lineno
    chunk = _filled(lines[first - 1: last], first, fn, {**({"TRACE": trace} if trace else {}), **(fill or {})},
                    {"TRACE", *(fill or {})})
    return textwrap.dedent("\n".join(chunk)) + "\n"


def _template_def(module: ModuleType, tree: ast.Module, name: str) -> ast.FunctionDef | ast.ClassDef:
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name), None)
    if fn is None:
        raise KeyError(f"template {module.__name__} has no block {name!r}")
    return fn


def _filled(chunk: list[str], first: int, fn: ast.AST, fill: dict[str, str], names: set[str]) -> list[str]:
    """`chunk` (source lines from line `first`) with each statement of `fn` that calls a
    placeholder of `names` replaced by its lines from `fill`, at the statement's indentation,
    and each other use of such a name by its one-line expression."""
    chunk = list(chunk)
    statements = _placeholders(fn, names)
    called = {id(st.value.func) for st in statements}
    holes = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id in fill and id(n) not in called]
    for n in sorted(holes, key=lambda n: (-n.lineno, -n.col_offset)):
        if "\n" in fill[n.id].strip("\n"):
            raise ValueError(f"placeholder {n.id} stands for one expression: got several lines")
        line = chunk[n.lineno - first]
        chunk[n.lineno - first] = line[:n.col_offset] + fill[n.id].strip("\n") + line[n.end_col_offset:]
    for stmt in sorted(statements, key=lambda st: -st.lineno):
        name = stmt.value.func.id
        if name not in fill:
            raise ValueError(f"template block calls {name}(): pass the lines that stand there")
        pad = " " * stmt.col_offset
        chunk[stmt.lineno - first: stmt.end_lineno - first + 1] = [
            pad + x for x in fill[name].rstrip("\n").split("\n")]
    return chunk


def _placeholders(fn: ast.AST, names: set[str]) -> list[ast.Expr | ast.Assign]:
    return [s for s in ast.walk(fn) if isinstance(s, (ast.Expr, ast.Assign))
            and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name)
            and s.value.func.id in names and not s.value.args and not s.value.keywords]


def function(module: ModuleType, name: str, docstring: bool = True, fill: dict[str, str] | None = None) -> str:
    """Template function `name` as it is written (a helper the script defines); without its
    docstring when `docstring` is False (a script near its line limit); its placeholder
    statements replaced by `fill` (as in `block`)."""
    lines, tree = _source(module)
    fn = _template_def(module, tree, name)
    first = min([fn.lineno] + [d.lineno for d in fn.decorator_list])
    chunk = _filled(lines[first - 1: fn.end_lineno], first, fn, fill or {}, set(fill or {}))
    doc = fn.body[0] if fn.body and isinstance(fn.body[0], ast.Expr) \
        and isinstance(fn.body[0].value, ast.Constant) else None
    if doc is not None and not docstring:  # the docstring comes before any placeholder
        chunk = chunk[:doc.lineno - first] + chunk[doc.end_lineno - first + 1:]
    return "\n".join(chunk) + "\n"


def imports_of(module: ModuleType, future: bool = False) -> list[str]:
    """A template's top-level imports, as written (not the TYPE_CHECKING ones; its __future__
    import only with `future`: the templates have it for their declarations, and a script needs
    it only where it pastes annotated code)."""
    lines, tree = _source(module)
    text = "\n".join(lines)
    out = []
    for n in tree.body:
        if isinstance(n, ast.ImportFrom) and n.module == "__future__":
            out += [ast.get_source_segment(text, n)] if future else []
            continue
        if isinstance(n, ast.ImportFrom) and n.module == "typing":
            names = [a.name for a in n.names if a.name != "TYPE_CHECKING"]
            out += [f"from typing import {', '.join(names)}"] if names else []
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.append(ast.get_source_segment(text, n))
    return out


def module_code(module: ModuleType) -> tuple[list[str], str]:
    """(imports, code) of a standalone module pasted whole: everything after its imports and
    its `__all__`."""
    lines, tree = _source(module)
    head = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) or (
        isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets))]
    return imports_of(module), "\n".join(lines[head[-1].end_lineno:]).strip("\n") + "\n"


def harness(module: ModuleType, future: bool = False) -> tuple[list[str], str]:
    """(imports, code) of a harness template (Note [repro templates]); `future` as imports_of."""
    lines, tree = _source(module)
    start = next((n.end_lineno for n in tree.body
                  if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"), None)
    if start is None:
        raise KeyError(f"template {module.__name__} has no `if TYPE_CHECKING:` declaration")
    return imports_of(module, future), "\n".join(lines[start:]).strip("\n") + "\n"


# ---- assembly ------------------------------------------------------------------------------------


def script(head: str, imports: list[str], parts: list[str], banner: bool = True) -> str:
    """head + the imports the code uses (in the order given, one line per module) + the parts;
    `banner`: the code starts by printing the torch version (an issue asks for it). A script
    that uses torch's private names checks them first (Note [private names in scripts])."""
    code = "".join(p if p.endswith("\n") else p + "\n" for p in parts)
    if banner:
        code = 'print("torch", torch.__version__)\n' + code
    lines = _import_lines(imports, _used(code))
    names = private_names(lines, code)
    if not names:
        return head + "\n".join(lines) + "\n\n" + code
    first, rest = _before_guard(_import_lines([*imports, "import sys"], _used(code) | {"sys"}))
    return head + "\n".join([*first, _guard(names), *rest]) + "\n\n" + code


def _import_lines(imports: list[str], used: set[str]) -> list[str]:
    """The import lines of `imports` that `used` needs, one per module, grouped (_grouped)."""
    keep: dict[str, list[str]] = {}  # one line per module: `import x` lines keyed by their text
    future = [i for i in imports if i.startswith("from __future__")]
    for imp in imports:
        node = parse(imp).body[0]
        if imp in future:
            continue
        if isinstance(node, ast.ImportFrom):
            names = keep.setdefault(f"from {node.module}", [])
            names += [n for n in (a.name + (f" as {a.asname}" if a.asname else "")
                                  for a in node.names if (a.asname or a.name) in used) if n not in names]
        elif all(_import_used(a, used) for a in node.names):
            keep.setdefault(imp, [])
    lines = [k if k.startswith("import ") else f"{k} import {', '.join(v)}" for k, v in keep.items()
             if k.startswith("import ") or v]
    return list(dict.fromkeys(future)) + _grouped(lines)


# Note [private names in scripts]: repro.py and check.py run on whatever torch the reader has,
# where a private name they use (a torch.fx.experimental._config flag, a ShapeEnv method, a
# module under torch._dynamo, a slow-path patch's target) may have moved. Failing there with a
# traceback of their own would read as the bug (repro.py exits 1 while the bug is there), so a
# script that uses such names resolves each first, after `import torch` and before the imports
# that could fail, and exits 2 with one line naming the first that is gone (two lines of script:
# the check must not push a repro past its line limit). The names are read
# off the script's own code (imports, attribute chains, `se.` methods of its ShapeEnv), plus the
# attributes a slow-path config's patches need (Note [torch names] in systems/needs.py).

#: underscore names torch documents as public API: never moved, not worth a check line
_PUBLIC = frozenset({"torch._check", "torch._check_is_size", "torch._dynamo.reset",
                     "torch._dynamo.mark_dynamic", "torch._dynamo.mark_static"})
#: variables the templates bind to a ShapeEnv (their `_` methods are torch's private names)
_SHAPE_ENV = {"se": "torch.fx.experimental.symbolic_shapes.ShapeEnv",
              "shape_env": "torch.fx.experimental.symbolic_shapes.ShapeEnv"}


def _private(name: str) -> bool:
    parts = name.split(".")
    return parts[0] == "torch" and name not in _PUBLIC and (
        any(p.startswith("_") and not p.startswith("__") for p in parts)
        or name.startswith("torch.fx.experimental.symbolic_shapes."))


def private_names(import_lines: list[str], code: str) -> list[str]:
    """torch's private names a script's imports and code use, dotted from torch, in a fixed
    order (imports, then the code's chains as ast.walk meets them), none a prefix of another
    (Note [private names in scripts])."""
    aliases: dict[str, str] = {"torch": "torch", **_SHAPE_ENV}
    found: list[str] = []
    for line in import_lines:
        node = parse(line).body[0]
        for a in node.names:
            full = f"{node.module}.{a.name}" if isinstance(node, ast.ImportFrom) else a.name
            found.append(full)
            if a.asname or isinstance(node, ast.ImportFrom):  # `import torch.x` binds torch itself
                aliases[a.asname or a.name] = full
    tree = parse(code)
    for n in ast.walk(tree):
        chain = _dotted(n) if isinstance(n, ast.Attribute) else ""
        root, _, rest = chain.partition(".")
        if root in _SHAPE_ENV and not (rest.startswith("_") and "." not in rest):
            continue  # an instance attribute (se.guards): not the class's
        if root in aliases and rest:
            found.append(f"{aliases[root]}.{rest}")
    found += _slow_path_names(tree) + _switch_names(tree)
    names = list(dict.fromkeys(x for x in found if _private(x)))
    return [x for x in names if not any(y.startswith(x + ".") for y in names)]


#: a check.py's data tables of config switches it sets by name (setattr, config.patch)
_SWITCH_TABLES = {"FX_CONFIG": "torch.fx.experimental._config", "DYNAMO_CONFIG": "torch._dynamo.config"}


def _switch_names(tree: ast.Module) -> list[str]:
    """The config entries a check.py sets from its data tables (_SWITCH_TABLES)."""
    return [f"{_SWITCH_TABLES[t.id]}.{k.value}" for n in tree.body if isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Dict) for t in n.targets
            if isinstance(t, ast.Name) and t.id in _SWITCH_TABLES
            for k in n.value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def _slow_path_names(tree: ast.Module) -> list[str]:
    """The attributes a slow-path config's patches need, for each `applied("<config>")` the
    script calls (the questions family applies slow paths through shapefuzz)."""
    from shapefuzz.systems.torch_toggles import needs  # lazy: script text needs no torch

    configs = [n.args[0].value for n in ast.walk(tree) if isinstance(n, ast.Call)
               and isinstance(n.func, ast.Name) and n.func.id == "applied" and n.args
               and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)]
    return [need.name for c in configs for need in needs(c)]


def _before_guard(lines: list[str]) -> tuple[list[str], list[str]]:
    """(the import lines that run before the check: everything but torch's submodules, their
    names and shapefuzz's slow-path patches; the rest), each in its order."""
    late = [x for x in lines if x.split()[1].startswith(("torch.", "shapefuzz"))
            or x.startswith("from torch ")]
    return [x for x in lines if x not in late], late


def _guard(names: list[str]) -> str:
    """Note [private names in scripts]: two lines (a repro.py stays within its line limit), exit
    2 with one line saying which name this torch lacks (resolve_name's own message names it)."""
    listed = ", ".join(repr(n) for n in names) + ("," if len(names) == 1 else "")
    return (f"try: import pkgutil; [pkgutil.resolve_name(name) for name in ({listed})]  # torch's "
            "private names used below: another torch version may have moved one\n"
            'except (ImportError, AttributeError) as e: sys.exit(print(f"repro.py: this torch '
            '({torch.__version__}) lacks a name it uses ({e}); the repro cannot run here") or 2)')


def _used(code: str) -> set[str]:
    tree = parse(code)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        _dotted(n) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}


def _dotted(n: ast.AST) -> str:
    parts = []
    while isinstance(n, ast.Attribute):
        parts.append(n.attr)
        n = n.value
    return ".".join([n.id, *reversed(parts)]) if isinstance(n, ast.Name) else ""


def _import_used(alias: ast.alias, used: set[str]) -> bool:
    """`import a.b.c` is used when some attribute chain starts with a.b.c (a submodule import
    loads it); `import a` when `a` is named; `import a as b` when b is."""
    if alias.asname:
        return alias.asname in used
    if "." not in alias.name:
        return alias.name in used
    return any(u == alias.name or u.startswith(alias.name + ".") for u in used)


def _grouped(imports: list[str]) -> list[str]:
    """Standard library, then torch (and sympy, z3), then shapefuzz (ref findings, slow-path
    patches): in each group `import` lines, then `from` lines."""
    def group(line: str) -> int:
        top = line.split()[1].split(".")[0]
        return 2 if top == "shapefuzz" else 1 if top in ("torch", "sympy", "z3") else 0

    out = []
    for g in (0, 1, 2):
        rest = [i for i in imports if group(i) == g]
        out += sorted(i for i in rest if i.startswith("import ")) if g else [i for i in rest if i.startswith("import ")]
        out += [i for i in rest if i.startswith("from ")]
    return out


def compares(finding) -> Compares:
    """What the finding's repro compares, from its oracle's registry entry (oracles/base.COMPARES;
    a plugin's oracle replayed without its plugin: the system against eager)."""
    try:
        return get_oracle(finding.oracle).compares_of(finding.oracle)
    except ValueError:
        return Compares.EAGER


def _help(oracle: str) -> str:
    """The oracle's one-line rule, from the registry (Note [oracle registry])."""
    return help_table().get(oracle, "see the shapefuzz documentation")
