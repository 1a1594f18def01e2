"""Issue-form pieces for compile findings: torch.compile over the finding's call sequence
(shapefuzz/repro/calls.py puts them together; Note [repro templates] in
shapefuzz/repro/common.py). The script's `calls` ends with the call that shows the finding."""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

import sympy
import torch
import torch._dynamo
from torch._guards import detect_fake_mode
from torch.utils._sympy.symbol import SymT, symbol_is_type

if TYPE_CHECKING:
    from shapefuzz.repro.templates._slots import call, graphs, ran, undefined


def backend(gm, example_inputs):
    """torch.compile's eager backend, remembering each graph's ShapeEnv and when it runs."""
    g = len(graphs)
    graphs.append(detect_fake_mode(example_inputs).shape_env)

    def run(*args):
        ran.append((call, g))
        return gm.forward(*args)
    return run


def call_all(cf, calls):
    """The calls before the last one (each on fresh copies of its inputs): they fill the compile
    cache the last call is served from."""
    for call, args in enumerate(calls[:-1]):
        try:
            cf(*args)
        except Exception as e:
            print(f"(call {call} raised {type(e).__name__}: {str(e)[:200]})")
    call, args = len(calls) - 1, calls[-1]
    return call, args


def outcome(fn, args):
    """The outputs (of torch.empty ones, in `undefined`, only shape and dtype), or the exception."""
    try:
        return tuple(torch.zeros_like(v) if k in undefined else v for k, v in enumerate(fn(*args)))
    except Exception as e:
        return f"{type(e).__name__}: {e}"


def mark_dynamic(calls, dims):
    """mark-dynamic: torch._dynamo.mark_dynamic on the non-static dims of size >= 2, every call."""
    for args in calls:
        for i, d in dims:
            if args[i].shape[d] >= 2:
                torch._dynamo.mark_dynamic(args[i], d)


def mark_static(calls, dims):
    """mark-static: torch._dynamo.mark_static on the non-static dims, every call."""
    for args in calls:
        for i, d in dims:
            torch._dynamo.mark_static(args[i], d)


def mark_unbacked(calls, dims):
    """mark-unbacked: torch._dynamo.decorators.mark_unbacked on the non-static dims, every call."""
    for args in calls:
        for i, d in dims:
            torch._dynamo.decorators.mark_unbacked(args[i], d)


def mark_unbacked_strict(calls, dims):
    """mark-unbacked-strict: mark_unbacked(strict=True) on the non-static dims, every call."""
    for args in calls:
        for i, d in dims:
            torch._dynamo.decorators.mark_unbacked(args[i], d, strict=True)


def mark_program(calls, marks):
    """program: each dim as the program marks it, every call (size 0/1 dims are not marked
    dynamic)."""
    for args in calls:
        for t, kinds in zip(args, marks):
            for d, kind in enumerate(kinds):
                if kind == "static":
                    torch._dynamo.mark_static(t, d)
                elif kind == "dynamic" and t.shape[d] >= 2:
                    torch._dynamo.mark_dynamic(t, d)
                elif kind == "unbacked":
                    torch._dynamo.decorators.mark_unbacked(t, d)


def agree(want, got):
    """Both raised, or the same outputs: shapes, dtypes and values."""
    if isinstance(want, str) or isinstance(got, str):
        return isinstance(want, str) and isinstance(got, str)
    try:
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)
    except AssertionError as e:
        print("outputs differ:", e)
        return False
    return True


def compare(refs, cf, args):
    """The last call must agree with eager, with any of the program's guard_or_* branches sent
    to its general arm (Dynamo may take either arm)."""
    expected = [outcome(r, args) for r in refs]
    got = outcome(cf, args)
    print("expected (eager):", expected[0])
    print("got (compiled):", got)
    if isinstance(got, str) and "Runtime assertion failed" in got:
        print("OK: a runtime assert rejects the input")
        sys.exit(0)
    if not any(agree(want, got) for want in expected):
        print("BUG: the compiled function disagrees with eager")
        sys.exit(1)
    print("OK: compiled and eager agree")


def program_inputs(shape_env, n):
    """What a graph assumed of each program input, from its own ShapeEnv: (source, fake)."""
    out = []
    for tf in shape_env.tracked_fakes or ():
        m = re.fullmatch(r"L\['v(\d+)'\](?:\.size\(\)\[(\d+)\])?", tf.source.name)
        if m and int(m[1]) < n:
            out.append((int(m[1]), None if m[2] is None else int(m[2]), tf.fake))
    return out


def rejects(shape_env, args):
    """Why the graph's own facts reject these inputs (a static size that differs, two dims that
    shared a symbol and differ, a guard false, a 0/1 value where it assumed >= 2), or ""."""
    binding = {}
    for i, d, fake in program_inputs(shape_env, len(args)):
        sizes = [(fake, args[i].shape[d])] if d is not None else list(zip(getattr(fake, "shape", ()), args[i].shape))
        for s, n in sizes:
            e = s.node._expr if isinstance(s, torch.SymInt) else sympy.Integer(int(s))
            if (e.is_number and e != n) or binding.setdefault(e, n) != n:
                return f"input {i}: size {n}, where the graph assumed {e}"
    binding = {s: n for s, n in binding.items() if not s.is_number}
    for g in shape_env.guards:
        if g.expr.free_symbols <= set(binding) and g.expr.xreplace(binding) == sympy.false:
            return f"guard {g.expr} is false for {binding}"
    for s, n in binding.items():
        if symbol_is_type(s, SymT.SIZE) and shape_env.var_to_range[s].lower >= 2 and n in (0, 1):
            return f"{s} = {n}, where the graph assumed {s} >= 2"
    return ""


def unsound_reuse(cf, graphs, ran, call, args):
    """The last call: a graph that ran on it must accept its inputs by its own facts."""
    try:
        cf(*args)
    except Exception as e:
        print(f"the last call raised {type(e).__name__}: {e}")
        if "Runtime assertion failed" in str(e):
            sys.exit(0)  # a runtime assert refused the input: the graph did not claim it
    for g in dict.fromkeys(g for c, g in ran if c == call):
        why = rejects(graphs[g], args)
        print(f"{'BUG: ' if why else ''}the last call ran graph {g}: its facts "
              f"{'reject its inputs: ' + why if why else 'accept its inputs'}")
        if why:
            sys.exit(1)
    print("OK: every graph that ran accepts its inputs")
