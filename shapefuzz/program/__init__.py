"""The program IR: a small typed SSA program over tensors and SymInts, with its input data.

Note [SSA values]: values are numbered in definition order. Inputs are values 0..k-1; each
instruction then defines `n_out` new values (0 for torch._check, several for split/unbind).
An argument is a literal (int, float, bool, None, str), a `Ref` to an earlier value, or a tuple
of arguments. Op names and string arguments are validated against the op registry on load, so a
case file can never smuggle code into a generated repro.py (see codegen.py).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from shapefuzz.ir import SYMINT, ProgramError, VType  # below ops and programs (shapefuzz/ir.py)

__all__ = [
    "DIM_KINDS",
    "DTYPES",
    "SCHEMA_VERSION",
    "SYMINT",
    "InputSpec",
    "Instr",
    "Program",
    "ProgramError",
    "Ref",
    "VType",
]

SCHEMA_VERSION = 1
DIM_KINDS = ("static", "dynamic", "unbacked")
DTYPES = ("float", "int", "bool")
MAX_ABS_INT = 2**40  # larger literals are rejected on load: they only appear in hostile files


@dataclass(frozen=True, slots=True)
class Ref:
    index: int

    def __str__(self) -> str:
        return f"v{self.index}"


Arg = int | float | bool | None | str | Ref | tuple


@dataclass(frozen=True, slots=True)
class InputSpec:
    """One input tensor: shape, how each dim is traced, and its data (flat, row-major)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    dims: tuple[str, ...]
    data: tuple[Any, ...]

    @property
    def vtype(self) -> VType:
        return VType.tensor(self.dtype, len(self.shape))

    def numel(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True, slots=True)
class Instr:
    op: str
    args: tuple[Arg, ...]
    n_out: int = 1


@dataclass(frozen=True, slots=True)
class Program:
    inputs: tuple[InputSpec, ...]
    instrs: tuple[Instr, ...]
    outputs: tuple[int, ...]

    kind = "tensors"  # a class constant (not a field): question programs say "questions"

    # ---- structure -------------------------------------------------------------------------
    def n_values(self) -> int:
        return len(self.inputs) + sum(i.n_out for i in self.instrs)

    def definitions(self) -> list[tuple[Instr, tuple[int, ...]]]:
        """Each instruction with the indices of the values it defines."""
        out, nxt = [], len(self.inputs)
        for ins in self.instrs:
            out.append((ins, tuple(range(nxt, nxt + ins.n_out))))
            nxt += ins.n_out
        return out

    def types(self) -> list[VType]:
        """Type-check the program and return the type of every value; raises ProgramError."""
        from shapefuzz.ops import get_op  # lazy: the ops import torch (+1 s)

        types: list[VType] = [i.vtype for i in self.inputs]
        for pos, (ins, _defs) in enumerate(self.definitions()):
            op = get_op(ins.op)
            try:
                arg_types = _arg_types(ins.args, types)
                outs = op.out_types(arg_types, ins.n_out)
            except ProgramError as e:
                raise ProgramError(f"instruction {pos} ({ins.op}): {e}") from None
            except (ValueError, TypeError, IndexError) as e:  # wrong arity, ill-typed lists
                raise ProgramError(f"instruction {pos} ({ins.op}): malformed arguments: {e}") from None
            if len(outs) != ins.n_out:
                raise ProgramError(f"instruction {pos} ({ins.op}): n_out={ins.n_out}, op defines {len(outs)}")
            types.extend(outs)
        for o in self.outputs:
            if not 0 <= o < len(types):
                raise ProgramError(f"output v{o} is not a defined value (0..{len(types) - 1})")
        return types

    def undefined_outputs(self) -> frozenset[int]:
        """Positions in `outputs` whose element data is unspecified (undefined_data): only their
        shapes may be compared with eager's."""
        bad = self.undefined_data()
        return frozenset(k for k, v in enumerate(self.outputs) if v in bad)

    def undefined_data(self) -> frozenset[int]:
        """Values whose element data is unspecified (torch.empty and what flows from it):
        only their shapes may be compared."""
        from shapefuzz.ops import get_op  # lazy: the ops import torch (+1 s)

        bad: set[int] = set()
        for ins, defs in self.definitions():
            op = get_op(ins.op)
            if (op.undefined_data or any(r.index in bad for r in _refs(ins.args))) \
                    and not op.data_independent_output:
                bad.update(defs)
        return frozenset(bad)

    def op_names(self) -> list[str]:
        return [i.op for i in self.instrs]

    def size(self) -> tuple[int, int]:
        """A shrink order: fewer instructions, then fewer input elements."""
        return (len(self.instrs), sum(i.numel() for i in self.inputs))

    # ---- text forms ------------------------------------------------------------------------
    def pretty(self) -> str:
        lines = []
        for k, spec in enumerate(self.inputs):
            dims = ",".join(f"{n}{d[0].upper()}" for n, d in zip(spec.shape, spec.dims))
            lines.append(f"v{k}: {spec.dtype}[{dims}] = {_short_data(spec.data)}  # input {spec.name}")
        for ins, defs in self.definitions():
            lhs = ", ".join(f"v{d}" for d in defs) or "_"
            lines.append(f"{lhs} = {ins.op}({', '.join(_fmt_arg(a) for a in ins.args)})")
        lines.append("return " + ", ".join(f"v{o}" for o in self.outputs))
        return "\n".join(lines)

    # ---- JSON ------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_VERSION,
            "inputs": [
                {"name": s.name, "dtype": s.dtype, "shape": list(s.shape), "dims": list(s.dims),
                 "data": list(s.data)}
                for s in self.inputs
            ],
            "instrs": [{"op": i.op, "args": [_arg_to_json(a) for a in i.args], "n_out": i.n_out}
                       for i in self.instrs],
            "outputs": list(self.outputs),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))

    @staticmethod
    def from_json(obj: Any) -> Program:
        """Build and validate a program from parsed JSON. Raises ProgramError, never evaluates."""
        if not isinstance(obj, dict):
            raise ProgramError("program must be a JSON object")
        schema = obj.get("schema")
        if schema != SCHEMA_VERSION:
            raise ProgramError(f"program schema {schema!r} is not supported (expected {SCHEMA_VERSION})")
        inputs = tuple(_input_from_json(k, x) for k, x in enumerate(_list(obj, "inputs")))
        instrs = tuple(_instr_from_json(k, x) for k, x in enumerate(_list(obj, "instrs")))
        outputs = tuple(_int(o, "output") for o in _list(obj, "outputs"))
        prog = Program(inputs, instrs, outputs)
        prog.types()
        return prog


# ---- helpers --------------------------------------------------------------------------------
def _refs(args: Any):
    for a in args:
        if isinstance(a, Ref):
            yield a
        elif isinstance(a, tuple):
            yield from _refs(a)


def _arg_types(args: tuple, types: list[VType]) -> tuple:
    def conv(a):
        if isinstance(a, Ref):
            if not 0 <= a.index < len(types):
                raise ProgramError(f"v{a.index} is used before it is defined")
            return types[a.index]
        if isinstance(a, tuple):
            return tuple(conv(x) for x in a)
        return a

    return tuple(conv(a) for a in args)


def _fmt_arg(a: Arg) -> str:
    if isinstance(a, tuple):
        return "[" + ", ".join(_fmt_arg(x) for x in a) + "]"
    return str(a) if isinstance(a, Ref) else repr(a)


def _short_data(data: tuple) -> str:
    body = ", ".join(_num(x) for x in data[:12])
    return f"[{body}{', ...' if len(data) > 12 else ''}]"


def _num(x: Any) -> str:
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return repr(x)


def _arg_to_json(a: Arg) -> Any:
    if isinstance(a, Ref):
        return {"v": a.index}
    if isinstance(a, tuple):
        return [_arg_to_json(x) for x in a]
    if isinstance(a, float) and not math.isfinite(a):
        return {"float": repr(a)}
    return a


def _arg_from_json(a: Any, depth: int = 0) -> Arg:
    if depth > 4:
        raise ProgramError("argument nesting is too deep")
    if isinstance(a, dict):
        if set(a) == {"v"}:
            return Ref(_int(a["v"], "value reference"))
        if set(a) == {"float"} and a["float"] in ("nan", "inf", "-inf"):
            return float(a["float"])
        raise ProgramError(f"unknown argument object {sorted(a)!r}")
    if isinstance(a, list):
        if len(a) > 64:
            raise ProgramError("argument list longer than 64")
        return tuple(_arg_from_json(x, depth + 1) for x in a)
    if a is None or isinstance(a, (bool, str)):
        if isinstance(a, str) and len(a) > 40:
            raise ProgramError("string argument longer than 40 characters")
        return a
    if isinstance(a, int):
        return _int(a, "integer argument")
    if isinstance(a, float):
        return a
    raise ProgramError(f"unsupported argument {a!r}")


def _int(x: Any, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise ProgramError(f"{what} must be an integer, got {x!r}")
    if abs(x) > MAX_ABS_INT:
        raise ProgramError(f"{what} {x} is out of range (|x| <= 2**40)")
    return x


def _list(obj: dict, key: str) -> list:
    v = obj.get(key)
    if not isinstance(v, list):
        raise ProgramError(f"field {key!r} must be a list")
    return v


def _input_from_json(k: int, x: Any) -> InputSpec:
    if not isinstance(x, dict):
        raise ProgramError(f"input {k} must be an object")
    dtype = x.get("dtype")
    if dtype not in DTYPES:
        raise ProgramError(f"input {k}: dtype {dtype!r} is not one of {DTYPES}")
    shape = tuple(_int(n, f"input {k} size") for n in _list(x, "shape"))
    if any(n < 0 or n > 4096 for n in shape) or len(shape) > 6:
        raise ProgramError(f"input {k}: shape {shape} is out of bounds (rank <= 6, sizes 0..4096)")
    dims = tuple(_list(x, "dims"))
    if len(dims) != len(shape) or any(d not in DIM_KINDS for d in dims):
        raise ProgramError(f"input {k}: dims {dims!r} must name one of {DIM_KINDS} per dim")
    data = tuple(_list(x, "data"))
    if len(data) != math.prod(shape):
        raise ProgramError(f"input {k}: {len(data)} data elements for shape {shape}")
    for v in data:
        if isinstance(v, bool) != (dtype == "bool") or not isinstance(v, (int, float)):
            raise ProgramError(f"input {k}: element {v!r} does not fit dtype {dtype}")
        if dtype == "int":
            _int(v, f"input {k} element")
        if (isinstance(v, float) and not math.isfinite(v)) or abs(v) > MAX_ABS_INT:
            raise ProgramError(f"input {k}: element {v!r} must be a finite number (|x| <= 2**40)")
    name = x.get("name", f"x{k}")
    if not (isinstance(name, str) and name.isidentifier() and len(name) <= 20):
        raise ProgramError(f"input {k}: name {name!r} must be a short identifier")
    if dtype == "float":
        data = tuple(float(v) for v in data)
    return InputSpec(name, dtype, shape, dims, data)


def _instr_from_json(k: int, x: Any) -> Instr:
    from shapefuzz.ops import get_op  # lazy: the ops import torch (+1 s)

    if not isinstance(x, dict):
        raise ProgramError(f"instruction {k} must be an object")
    name = x.get("op")
    get_op(name)  # raises ProgramError for unknown names
    n_out = _int(x.get("n_out", 1), f"instruction {k} n_out")
    if not 0 <= n_out <= 64:
        raise ProgramError(f"instruction {k}: n_out {n_out} out of range 0..64")
    args = tuple(_arg_from_json(a) for a in _list(x, "args"))
    return Instr(name, args, n_out)
