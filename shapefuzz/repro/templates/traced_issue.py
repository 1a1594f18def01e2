"""Issue-form pieces for make_fx / export findings (shapefuzz/repro/traced.py puts them
together; Note [repro templates] in shapefuzz/repro/common.py). `TRACE()` stands for the public
call that traces the program (make_fx, or torch.export.export and `ep.module()`), written in by
the generator; it binds `gm`, the artifact a user would call."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import sympy
import torch
import torch.fx.experimental._config
import torch.nn.attention.flex_attention
import torch.utils._pytree as pytree
from torch._dynamo.source import LocalSource
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.export import Dim, export
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import (
    DimDynamic,
    ShapeEnv,
    StatelessSymbolicContext,
    guard_or_false,
    guard_or_true,
    resolve_unbacked_bindings,
    statically_known_false,
    statically_known_true,
)
from torch.fx.passes.runtime_assert import insert_deferred_runtime_asserts

if TYPE_CHECKING:
    from shapefuzz.repro.templates._slots import TRACE

#: every name a generated script may import from this template's imports
IMPORTED = (Dim, DimDynamic, ShapeEnv, export, make_fx, guard_or_false, guard_or_true,
            statically_known_false, statically_known_true, torch.fx.experimental._config, torch.nn.attention.flex_attention)


def fakes_of(inputs, shape_env, dynamic_sizes):
    """Fake inputs whose dims are traced as the finding marks them."""
    mode = FakeTensorMode(shape_env=shape_env)
    fakes = [mode.from_tensor(t, symbolic_context=StatelessSymbolicContext(d))
             for t, d in zip(inputs, dynamic_sizes)]
    shape_env.pending_fresh_unbacked_symbols.clear()  # unbacked input dims are bound by the inputs
    return fakes


def module(f):
    """export traces a module: the program is its forward (one line: a repro's line limit)."""
    M = type("M", (torch.nn.Module,), {"forward": staticmethod(f)})
    return M


def shape_env_settings(env_kwargs):
    """export makes its own ShapeEnv: every ShapeEnv gets the config's settings."""
    init = ShapeEnv.__init__
    ShapeEnv.__init__ = lambda self, *a, **kw: init(self, *a, **{**kw, **env_kwargs})


def raises(f, inputs):
    """The trace raises where eager succeeds."""
    print("expected (eager):", [getattr(v, "shape", v) for v in f(*inputs)])
    try:
        TRACE()
    except Exception as e:
        print(f"BUG: got {type(e).__name__}: {e}")
        sys.exit(1)
    print("OK: the program traces, as eager runs it")


def trace():
    """The trace itself, for the checks below."""
    gm = TRACE()
    return gm


def export_shape_env(gm):
    """The ShapeEnv export traced with, from the graph's fake inputs."""
    shape_env = gm.graph.find_nodes(op="placeholder")[0].meta["val"].fake_mode.shape_env
    return shape_env


def guards_hold(shape_env, fakes, args):
    """make_fx checks no guards: its own guards must accept the very inputs it was traced with."""
    if not shape_env.evaluate_guards_for_args(fakes, args, ignore_static=False):
        print("BUG: the trace's own guards reject the inputs it was traced with")
        sys.exit(1)


def guards_hold_unbacked(shape_env, fakes, args, unbacked):
    """make_fx checks no guards: its own guards must accept the very inputs it was traced with;
    a guard on an unbacked input dim (`unbacked`: those dims) is a runtime assert there, which
    may refuse them."""
    sources = [LocalSource(f"t{i}") for i in range(len(fakes))]
    guards = shape_env.produce_guards(fakes, sources, ignore_static=False)
    bad = [g for g in guards if not shape_env.evaluate_guards_expression(g, args)]
    if bad and not any(u in g for g in bad for u in unbacked):
        print("BUG: the trace's own guards reject the inputs it was traced with:", bad)
        sys.exit(1)


def ranges_hold(ep, args):
    """export's range constraints must hold for the very inputs it was traced with."""
    for ph, t in zip([n for n in ep.graph.find_nodes(op="placeholder") if n.name in ep.graph_signature.user_inputs], args):
        for s, n in zip(ph.meta["val"].shape, t.shape):
            vr = ep.range_constraints.get(getattr(getattr(s, "node", None), "expr", None))
            if vr is not None and n not in vr:
                print(f"BUG: the range constraint {vr} rejects size {n} of the inputs it was traced with")
                sys.exit(1)


def guards_accept(gm, shape_env, fakes, args):
    """make_fx checks neither guards nor deferred asserts: insert the asserts into the graph and
    evaluate the guards on the new input by hand."""
    insert_deferred_runtime_asserts(gm, shape_env, "repro")
    gm.recompile()
    if not shape_env.evaluate_guards_for_args(fakes, args, ignore_static=False):
        print("OK: the guards reject the new input")
        sys.exit(0)


def run_traced(f_ref, gm, args):
    """Eager (the reference) and the traced artifact on `args`."""
    expected = f_ref(*args)
    print("expected (eager):", expected)
    try:
        got = gm(*args)
    except Exception as e:  # an assert or guard that rejects the input: outside the contract
        rejected = str(e).startswith(("Runtime assertion failed", "Guard failed"))
        print(f"{'OK: the trace rejects the input' if rejected else 'BUG: got'} {type(e).__name__}: {e}")
        sys.exit(0 if rejected else 1)
    print("got (traced):", got)
    return expected, got


def shapes_only(expected, got, undefined):
    """Outputs of torch.empty (`undefined`): only their shapes and dtypes count."""
    expected, got = ([torch.zeros_like(v) if k in undefined else v for k, v in enumerate(out)]
                     for out in (expected, got))
    return expected, got


def assert_same(expected, got):
    """The outputs must be eager's: shapes, dtypes and values."""
    try:
        torch.testing.assert_close(tuple(got), tuple(expected), rtol=1e-5, atol=1e-5, equal_nan=True)
    except AssertionError as e:
        print("BUG: traced and eager outputs differ:", e)
        sys.exit(1)
    print("OK: traced and eager agree")


def accepts_invalid(f_ref, gm, args):
    """Eager raises on `args`: the traced artifact must raise too."""
    try:
        f_ref(*args)
        print("OK: eager runs the program")
        sys.exit(0)
    except Exception as e:
        print(f"expected (eager): {type(e).__name__}: {e}")
    try:
        print("BUG: got (traced): it returns normally:", gm(*args))
    except Exception as e:
        print(f"OK: the traced artifact raises too: {type(e).__name__}: {e}")
        sys.exit(0)
    sys.exit(1)


def traced_shapes(gm, shape_env, args) -> list[tuple[list, list]]:
    """Per output: its symbolic shape with every symbol bound to its value in this run (input
    sizes, then what each node binds), and the shape it really has."""
    binding = {}
    for ph, t in zip(gm.graph.find_nodes(op="placeholder"), args):
        binding |= {s.node.expr: n for s, n in zip(ph.meta["val"].shape, t.shape)
                    if isinstance(s, torch.SymInt) and isinstance(s.node.expr, sympy.Symbol)}

    class Bind(torch.fx.Interpreter):
        def run_node(self, n):
            r = super().run_node(n)
            for s, path in (resolve_unbacked_bindings(shape_env, n.meta.get("unbacked_bindings")) or {}).items():
                binding[s] = int(pytree.key_get(r, path))
            return r
    out = []
    for node, r in zip(gm.graph.output_node().args[0], Bind(gm).run(*args)):
        meta = node.meta["val"] if isinstance(node, torch.fx.Node) else node
        sizes = list(meta.shape) if isinstance(meta, torch.Tensor) else [meta]
        claim = [sympy.sympify(sympy.sympify(s.node.expr if isinstance(s, torch.SymInt) else s).xreplace(binding))
                 for s in sizes]
        out.append((claim, list(r.shape) if isinstance(r, torch.Tensor) else [int(r)]))
    return out


def symbolic(gm, shape_env, args):
    """Each output's symbolic shape, evaluated, must be the shape the graph returns."""
    for k, (claim, real) in enumerate(traced_shapes(gm, shape_env, args)):
        print(f"output {k}: expected (the graph returns) {real}, got (its symbolic shape) {claim}")
        if all(c.is_Integer for c in claim) and [int(c) for c in claim] != real:
            print(f"BUG: output {k}'s symbolic shape is not the shape the graph returns")
            sys.exit(1)
    print("OK: every symbolic output shape is right")
