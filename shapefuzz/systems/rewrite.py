"""The compiled rewrites behind two slow paths (torch_toggles.py).

Note [compiled rewrites]: the hint read of _smart_symbol_sort and the Add construction of
_optimized_add are nested functions, reachable only by rewriting their enclosing function's
source. Each rewrite is compiled once per process into a private copy of the module's globals;
the copy's `_shapefuzz_counts` slot names the Counter of the context currently active.
(Note [torch names] in needs.py: each rewrite declares the source text it must find, so a torch
whose source moved reports the slow path unavailable before `rewrite` would raise.)
"""

from __future__ import annotations

import contextlib
import inspect
import textwrap
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import torch

__all__ = ["counting", "counts_of", "rewrite"]

def counts_of(compiled: Callable[[], tuple[Callable, dict]]) -> Counter:
    return compiled()[1]["_shapefuzz_counts"][-1]


@contextlib.contextmanager
def counting(g: dict, counts: Counter) -> Iterator[None]:
    g["_shapefuzz_counts"].append(counts)
    try:
        yield
    finally:
        g["_shapefuzz_counts"].pop()


def rewrite(fn: Callable, module_globals: dict, old: str, new: str,
             extra: dict[str, Any]) -> tuple[Callable, dict]:
    """Recompile `fn` (a function or lru_cache'd method, decorators included) with `old`
    replaced by `new`. Raises if `old` is not found exactly once: the torch source changed and
    the slow path must be re-derived."""
    src = textwrap.dedent(inspect.getsource(inspect.unwrap(fn)))
    if src.count(old) != 1:
        raise RuntimeError(f"cannot build the slow path of {fn.__qualname__}: expected {old!r} once "
                           f"in its source (torch {torch.__version__}), found {src.count(old)}; "
                           "update shapefuzz/systems/torch_toggles.py for this torch version")
    g = dict(module_globals)
    g.update(extra)
    g["_shapefuzz_counts"] = [Counter()]  # a sink for calls outside any context
    code = compile(src.replace(old, new), f"<shapefuzz slow path of {fn.__qualname__}>", "exec")
    exec(code, g)
    return g[fn.__name__], g
