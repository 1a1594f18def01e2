"""The interpreter: runs a Program with torch. The same function is what eager executes and what
every tracing system traces (Note [one interpreter]).

Note [one interpreter]: eager (the reference of every oracle), make_fx and export all execute
`program_fn(program)`; torch.compile traces codegen's source of the same program (Dynamo needs
source), which tests/cover/test_codegen.py holds equal to this interpreter op by op. So eager and a traced
artifact never differ by how shapefuzz wrote the program down: a difference between them is the
shape system's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from shapefuzz.ops import get_op
from shapefuzz.ops.branch import Branch
from shapefuzz.program import InputSpec, Program, Ref

__all__ = ["TORCH_DTYPES", "RecordedEnv", "make_inputs", "make_tensor", "mark_at", "program_fn", "recording", "run"]

# Note [root cause]: the environments of the runs made while `recording()` is active (the
# values of every instruction, inputs first), so a tracing system can say which instruction's
# symbolic shape first differs from eager's; an exception raised by an instruction carries
# `shapefuzz_at = (position, op name)`
_RECORDS: list[RecordedEnv] | None = None


def mark_at(e: BaseException, pos: int, op: str) -> None:
    """Mark `e` as raised by instruction `pos` (Note [root cause]); the innermost mark stands."""
    if not hasattr(e, "shapefuzz_at"):
        try:
            e.shapefuzz_at = (pos, op)
        except AttributeError:  # an exception type without a __dict__
            pass


class RecordedEnv(list):
    """A recorded run's environment, and in `then` each value's symbolic size as torch held it
    when the value was made (Note [root cause at the time])."""

    __slots__ = ("then",)

    def __init__(self, values: list) -> None:
        super().__init__(values)
        self.then = [_now(v) for v in values]

    def extend(self, outs) -> None:  # what run() adds: the values and their sizes now
        super().extend(outs)
        self.then.extend(_now(v) for v in outs)


# Note [root cause at the time]: a SymInt's `node.expr` reads the ShapeEnv's replacements as they
# are when it is read. A check made later in the trace (torch's own, inside an op: infer_size's
# `s0 == u0`) may replace a symbol an earlier value's size holds, and where that replacement is
# wrong the earlier value would read wrong under the final replacements although it was right
# when made: the first wrong instruction would be the first user of the symbol, not the one after
# the check. So a recorded run keeps each value's expression as it stood then.
def _now(v: Any) -> Any:
    if isinstance(v, torch.SymInt):
        return v.node.expr
    if isinstance(v, torch.Tensor):
        return tuple(s.node.expr if isinstance(s, torch.SymInt) else int(s) for s in v.shape)
    return v


class recording:
    """Collects the environment of every `run` made while active (nested use not supported)."""

    def __enter__(self) -> list[RecordedEnv]:
        global _RECORDS
        _RECORDS = []
        return _RECORDS

    def __exit__(self, *exc) -> None:
        global _RECORDS
        _RECORDS = None

TORCH_DTYPES = {"float": torch.float32, "int": torch.int64, "bool": torch.bool}


def make_tensor(spec: InputSpec) -> torch.Tensor:
    # clone(): reshape returns a view, and fakeifying a view also fakeifies (and symbolizes)
    # its base, which costs time and adds a stray symbol to every ShapeEnv.
    return torch.tensor(list(spec.data), dtype=TORCH_DTYPES[spec.dtype]).reshape(spec.shape).clone()


def make_inputs(specs: tuple[InputSpec, ...]) -> list[torch.Tensor]:
    return [make_tensor(s) for s in specs]


def _resolve(a: Any, env: list) -> Any:
    if isinstance(a, Ref):
        return env[a.index]
    if isinstance(a, tuple):
        return tuple(_resolve(x, env) for x in a)
    return a


def run(
    program: Program,
    inputs: list,
    forced_general: frozenset[int] = frozenset(),
    on_branch: Callable[[int, bool], None] | None = None,
) -> list:
    """Every value of the program (inputs first). `forced_general` holds instruction indices of
    branches to send to their general arm (Note [branch contract]); `on_branch(pos, fast)` hears
    which arm each branch took."""
    env = list(inputs)
    # is_dynamo_compiling, not is_compiling: non-strict export sets the latter while it traces
    if _RECORDS is not None and not torch.compiler.is_dynamo_compiling():  # strict export: not traced
        env = RecordedEnv(inputs)
        _RECORDS.append(env)
    for pos, ins in enumerate(program.instrs):
        try:
            outs = _step(get_op(ins.op), ins, pos, _resolve(ins.args, env), forced_general, on_branch)
        except Exception as e:
            mark_at(e, pos, ins.op)
            raise
        if len(outs) != ins.n_out:
            raise ValueError(f"{ins.op} produced {len(outs)} values, program binds {ins.n_out}")
        env.extend(outs)
    return env


def _step(op, ins, pos: int, args, forced_general, on_branch):
    if isinstance(op, Branch):
        fast = False if pos in forced_general else op.decide(args)
        if on_branch is not None:
            on_branch(pos, fast)
        return op.arm(args, fast)
    return op.eager(args, ins.n_out)


def program_fn(program: Program, forced_general=frozenset(), on_branch=None) -> Callable:
    """A plain function of the input tensors returning the program's outputs, for tracing."""

    def f(*inputs):
        env = run(program, list(inputs), forced_general, on_branch)
        return tuple(env[i] for i in program.outputs)

    return f
