"""The start-up hook of a mutant's patch folder (apply.py copies this file there as
_shapefuzz_mutant.py, next to mutant.json and a sitecustomize.py that calls install() and
chain()). Standard library only, and torch is not imported here: it runs first thing in every
interpreter started with the folder on PYTHONPATH (campaign workers, a finding's repro.py,
`python -c 'import sys'`).

Note [code swap]: the mutant's target module is patched the moment it finishes executing (an
import hook on that one module name), so nothing can have used the original yet. The mutated
function is compiled in the module's globals (with the file's name and line numbers, and inside
its class headers for name mangling and super()), and its code object replaces the __code__ of the
function torch already has. Every reference to that function object -- a method on its class,
`from module import name` aliases in other modules, the wrappers of its decorators (lru_cache,
register_decomposition, register_op_impl tables) -- then runs the mutant, as it would after an
edit of the file; re-running the decorators instead would register the function twice."""

from __future__ import annotations

import json
import os
import sys
import types

__all__ = ["APPLIED", "MISSING", "chain", "install", "resolve"]

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC_FILE = "mutant.json"
MISSING = object()
#: the ids of the mutants applied in this interpreter (the smoke script checks it)
APPLIED: list[str] = []


def _candidates(obj):
    """obj and what it wraps: a classmethod's function, a property's accessors, __wrapped__."""
    stack, seen = [obj], set()
    while stack:
        o = stack.pop()
        if o is None or id(o) in seen:
            continue
        seen.add(id(o))
        yield o
        stack.extend(getattr(o, a, None) for a in ("__func__", "fget", "fset", "fdel", "__wrapped__"))


def resolve(module, qualname: str, first_line: int):
    """The plain function object of `qualname` in `module` whose code starts at `first_line`
    (its first decorator's line), or None."""
    owner = module
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part, None)
        if not isinstance(owner, type):
            return None
    for o in _candidates(vars(owner).get(name)):
        if isinstance(o, types.FunctionType) and o.__code__.co_name == name \
                and o.__code__.co_firstlineno == first_line:
            return o
    return None


def _compiled(module, spec: dict, text: str):
    """The mutated function, compiled in the module's globals (nothing is bound there)."""
    import __future__

    flags = __future__.annotations.compiler_flag if spec["future_annotations"] else 0
    code = compile(text, module.__file__, "exec", flags=flags, dont_inherit=True)
    ns: dict = {}
    exec(code, vars(module), ns)
    first, *rest = spec["qualname"].split(".")
    obj = ns[first]
    for part in rest:
        obj = vars(obj)[part]
    return obj


def apply(module, spec: dict) -> None:
    """Note [code swap]."""
    target = resolve(module, spec["qualname"], spec["start_line"])
    if target is None:
        raise RuntimeError(f"mutant {spec['id']}: no function {spec['qualname']} at line "
                           f"{spec['start_line']} of {module.__file__}")
    new = _compiled(module, spec, spec["text"])
    if new.__code__.co_freevars != target.__code__.co_freevars and spec.get("text_with_class"):
        new = _compiled(module, spec, spec["text_with_class"])  # the mutation dropped super()
    if new.__code__.co_freevars != target.__code__.co_freevars:
        raise RuntimeError(f"mutant {spec['id']}: free variables {new.__code__.co_freevars} "
                           f"!= {target.__code__.co_freevars}")
    target.__code__ = new.__code__
    APPLIED.append(spec["id"])


class _Finder:
    """Patches the target module right after it executes (one shot)."""

    def __init__(self, spec: dict) -> None:
        self.spec = spec

    def find_spec(self, name, path=None, target=None):
        if name != self.spec["module"]:
            return None
        from importlib.machinery import PathFinder

        found = PathFinder.find_spec(name, path)
        if found is None or found.loader is None:
            return None
        sys.meta_path.remove(self)
        run, spec = found.loader.exec_module, self.spec

        def exec_module(module):
            run(module)
            apply(module, spec)

        found.loader.exec_module = exec_module
        return found


def install(directory: str = HERE) -> None:
    with open(os.path.join(directory, SPEC_FILE)) as fh:
        spec = json.load(fh)
    module = sys.modules.get(spec["module"])
    if module is not None:  # imported before site ran (a .pth file): patch it now
        apply(module, spec)
    else:
        sys.meta_path.insert(0, _Finder(spec))


def chain(directory: str = HERE) -> None:
    """Run the sitecustomize this folder's one shadows (the next on sys.path), if any."""
    import importlib.util
    from importlib.machinery import PathFinder

    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != directory]
    found = PathFinder.find_spec("sitecustomize", rest)
    if found is None or found.loader is None:
        return
    module = importlib.util.module_from_spec(found)
    sys.modules["_shapefuzz_chained_sitecustomize"] = module
    found.loader.exec_module(module)
