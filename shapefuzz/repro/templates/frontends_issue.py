"""Issue-form pieces for front-end differential findings: the program traced by the two
front-ends the finding compares, each outcome classified as shapefuzz classifies it (Note
[repro templates] in shapefuzz/repro/common.py). A side is a function of no arguments that
traces the program with the script's `f` and `inputs`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import torch
import torch._dynamo
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.export import Dim, export
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import (
    ConstraintViolationError,
    GuardOnDataDependentSymNode,
    ShapeEnv,
    StatelessSymbolicContext,
)

if TYPE_CHECKING:
    from shapefuzz.repro.templates._slots import M, dynamic_shapes, dynamic_sizes, f, inputs, marked

#: every name a generated script may import from this template's imports
IMPORTED = (Dim,)


def outcome(trace):
    """ok, dde (a data-dependent error), constraint (a constraint violation) or error; and the
    message. A runtime assert that refuses the input means the trace itself succeeded."""
    try:
        trace()
        return "ok", ""
    except Exception as e:
        msg, x, seen = f"{type(e).__name__}: {str(e).strip()[:300]}", e, set()
        while x is not None and id(x) not in seen:  # a DDE wrapped by Dynamo is a DDE
            seen.add(id(x))
            if isinstance(x, (GuardOnDataDependentSymNode, ConstraintViolationError)):
                return ("dde" if isinstance(x, GuardOnDataDependentSymNode) else "constraint"), msg
            x = x.__cause__ or x.__context__
        if "Constraints violated" in msg or "conflicts between user-specified ranges" in msg:
            return "constraint", msg
        return ("ok" if "Runtime assertion failed" in msg else "error"), msg


def make_fx_no_duck_shape():
    mode = FakeTensorMode(shape_env=ShapeEnv(duck_shape=False))
    fakes = [mode.from_tensor(t, symbolic_context=StatelessSymbolicContext(d)) for t, d in zip(inputs, dynamic_sizes)]
    make_fx(f, tracing_mode="symbolic")(*fakes)


def make_fx_default():
    mode = FakeTensorMode(shape_env=ShapeEnv())
    fakes = [mode.from_tensor(t, symbolic_context=StatelessSymbolicContext(d)) for t, d in zip(inputs, dynamic_sizes)]
    make_fx(f, tracing_mode="symbolic")(*fakes)


def export_default():
    export(M(), tuple(inputs), dynamic_shapes=dynamic_shapes)


def export_strict():
    export(M(), tuple(inputs), dynamic_shapes=dynamic_shapes, strict=True)


def compile_mark_dynamic():
    torch._dynamo.reset()
    args = [t.clone() for t in inputs]
    for i, d in marked:
        torch._dynamo.mark_dynamic(args[i], d)
    torch.compile(f, backend="eager", fullgraph=True)(*args)


def compare_sides(sides):
    """The two front-ends must reach the same outcome."""
    got = []
    for name, trace in sides:
        got.append(outcome(trace))
        print(f"{name}: {got[-1][0]} {got[-1][1]}")
    if got[0][0] != got[1][0]:
        print("BUG: the two front-ends disagree on the outcome")
        sys.exit(1)
    print("OK: the same outcome")
