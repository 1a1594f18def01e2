"""Small builders for hand-written programs, an output comparison, and a repro.py run under a
plant and without, shared by tests/cover."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import torch
from torch.fx.experimental.symbolic_shapes import (
    guard_or_false,
    guard_or_true,
    statically_known_false,
    statically_known_true,
)

from shapefuzz.program import InputSpec, Instr, Program, Ref, interp

R = Ref


def inp(data, shape=None, dtype=None, dims=None, name=None) -> InputSpec:
    """An input from flat data; dtype inferred (bool, int, else float), shape defaults to 1-D."""
    data = tuple(data)
    if dtype is None:
        if data and all(isinstance(v, bool) for v in data):
            dtype = "bool"
        elif data and all(isinstance(v, int) and not isinstance(v, bool) for v in data):
            dtype = "int"
        else:
            dtype = "float"
    shape = (len(data),) if shape is None else tuple(shape)
    assert math.prod(shape) == len(data)
    if dtype == "float":
        data = tuple(float(v) for v in data)
    return InputSpec(name or "x", dtype, shape, tuple(dims or ("dynamic",) * len(shape)), data)


def I(op: str, *args, n_out: int = 1) -> Instr:  # noqa: E743
    return Instr(op, tuple(args), n_out)


def prog(inputs, instrs, outputs=None) -> Program:
    inputs = tuple(inputs)
    inputs = tuple(InputSpec(f"x{k}", s.dtype, s.shape, s.dims, s.data) for k, s in enumerate(inputs))
    p = Program(inputs, tuple(instrs), ())
    if outputs is None:
        outputs = (p.n_values() - 1,)
    p = Program(inputs, tuple(instrs), tuple(outputs))
    p.types()  # every hand-written program must type-check
    return p


def run(p: Program, **kw) -> list:
    return interp.run(p, interp.make_inputs(p.inputs), **kw)


def outputs(p: Program, **kw) -> list:
    env = run(p, **kw)
    return [env[o] for o in p.outputs]


def exec_function(src: str, name: str = "f"):
    """Exec generated function source in a fresh namespace holding only what repro.py imports."""
    ns = {"torch": torch, "guard_or_false": guard_or_false, "guard_or_true": guard_or_true,
          "statically_known_true": statically_known_true, "statically_known_false": statically_known_false}
    exec(compile(src, "<function_source>", "exec"), ns)
    return ns[name]


def assert_same_outputs(program: Program, expected: list, actual, undefined=frozenset()) -> None:
    """Outputs of the interpreter vs. of generated source: same kinds, shapes, dtypes, values
    (values of undefined-data outputs, from torch.empty, are not compared)."""
    actual = list(actual)
    assert len(expected) == len(actual)
    for idx, e, a in zip(program.outputs, expected, actual):
        if isinstance(e, torch.Tensor):
            assert isinstance(a, torch.Tensor), (idx, e, a)
            assert e.shape == a.shape and e.dtype == a.dtype, (idx, e, a)
            if idx in undefined:
                continue
            if e.dtype.is_floating_point:
                assert torch.allclose(e, a, rtol=0, atol=0, equal_nan=True), (idx, e, a)
            else:
                assert torch.equal(e, a), (idx, e, a)
        else:
            assert type(e) is type(a) and e == a, (idx, e, a)


def cli_exit(*args: str) -> int:
    """`shapefuzz ARGS` in this process, as its exit code."""
    from shapefuzz.cli import main

    try:
        main(list(args))
    except SystemExit as e:
        return int(e.code or 0)
    return 0


def both_ways(script: Path, plant: str, path: Iterable[Path] = (), drop: Iterable[str] = (),
              timeout: float = 300) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """(planted, clean): `script` run in its folder with `plant` as a sitecustomize.py first on
    PYTHONPATH (then `path`), and again without; neither sees this process's PYTHONPATH or the
    `drop` variables."""
    site = script.parent / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(plant)
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and k not in set(drop)}

    def run(env: dict) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                              timeout=timeout, cwd=script.parent)

    planted = run({**base, "PYTHONPATH": os.pathsep.join(str(p) for p in (site, *path))})
    return planted, run(base)
