"""One parser at a time in this process (Note [one parser at a time]).

Note [one parser at a time]: CPython 3.11 converts between its C syntax tree and Python `ast`
objects with a recursion counter kept in interpreter-wide state, not per thread (gh-106905). Two
threads converting at once, `ast.parse` (compile with PyCF_ONLY_AST) or compile() of an `ast`
object, corrupt it, and one of them raises "SystemError: AST constructor recursion depth
mismatch". A campaign parses in several threads: background confirmations write repro.py from
templates (repro/common.py), while the main thread's Hypothesis reads the source of local modules
for constants (hypothesis.internal.constants_ast) and of lambdas for their descriptions,
traceback formatting parses the failing line for its carets, and torch and sympy parse on their
own (torch._dynamo.guards, torch.export's unlift, sympy's parse_expr(evaluate=False), which also
compiles an `ast` object). A default campaign on torch 2.14.1 died at 44 s of it. Our own parses
can take a lock; the others are not ours to edit. So the campaign installs, once and before its
threads start, a wrapper of builtins.compile that takes LOCK around every call that builds or
reads `ast` objects (ast.parse, ast.literal_eval of a string and inspect's class finder call
compile() through builtins too); compile() of source text to code never builds them and passes
straight through. The wrapper gives compile() the __future__ flags of its caller's frame, as
CPython does when `dont_inherit` is false (the frame it would see otherwise is the wrapper's).
LOCK is reentrant: ast.parse under `parse` calls the wrapper in the same thread.
"""

from __future__ import annotations
import __future__

import ast
import builtins
import sys
import threading

__all__ = ["LOCK", "install", "installed", "parse"]

#: held by whoever builds or reads Python `ast` objects in this process
LOCK = threading.RLock()

#: the __future__ flags compile() inherits from its caller (CPython's PyCF_MASK)
_FUTURE = 0
for _name in __future__.all_feature_names:
    if _name not in ("nested_scopes", "generators"):  # always on: no flag of their own to pass
        _FUTURE |= getattr(__future__, _name).compiler_flag
del _name

_ORIGINAL = builtins.compile


def parse(text: str) -> ast.Module:
    """ast.parse under LOCK, installed or not."""
    with LOCK:
        return ast.parse(text)


def _compile(source, filename, mode, flags=0, dont_inherit=False, optimize=-1, **kw):
    if not dont_inherit:
        flags |= sys._getframe(1).f_code.co_flags & _FUTURE
    if isinstance(source, ast.AST) or flags & ast.PyCF_ONLY_AST:
        with LOCK:
            return _ORIGINAL(source, filename, mode, flags, True, optimize, **kw)
    return _ORIGINAL(source, filename, mode, flags, True, optimize, **kw)


def install() -> None:
    """Route every compile() of this process through the wrapper; a second call does nothing."""
    if builtins.compile is not _compile:
        builtins.compile = _compile


def installed() -> bool:
    return builtins.compile is _compile
