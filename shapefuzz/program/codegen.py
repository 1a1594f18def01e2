"""Python source for a program: the body of every repro.py.

Only registered op names reach the output and every literal is rendered with repr() of an int,
float, bool or None (strings are op enumerations checked by out_types), so a hostile case file
cannot inject code (tests/cover/test_hostile.py).
"""

from __future__ import annotations

import math

from shapefuzz.ops import get_op
from shapefuzz.ops.branch import PATTERNS, Branch
from shapefuzz.program import InputSpec, Program, ProgramError, Ref
from shapefuzz.program.interp import TORCH_DTYPES

__all__ = ["function_lines", "function_source", "inputs_source", "program_to_python", "render_arg", "tensor_source"]

# flex_attention is a submodule `import torch` does not load; the flex_attention op names it
HEADER = "import torch\nimport torch.nn.attention.flex_attention\n" \
         "from torch.fx.experimental.symbolic_shapes import (\n" \
         "    guard_or_false, guard_or_true, statically_known_false, statically_known_true)\n"


def render_arg(a) -> object:
    if isinstance(a, Ref):
        return f"v{a.index}"
    if isinstance(a, tuple):
        return tuple(render_arg(x) for x in a)
    if a is None or isinstance(a, (bool, int)):
        return repr(a)
    if isinstance(a, float):
        return repr(a) if math.isfinite(a) else f"float({str(a)!r})"
    if isinstance(a, str):
        return a  # an enumeration value, validated against the op's table by Program.types()
    raise ProgramError(f"cannot render argument {a!r}")


def function_source(program: Program, name: str = "f", forced_general=frozenset()) -> str:
    """`def f(v0, v1, ...)` returning the outputs. Branches in `forced_general` are emitted as
    their general arm (the fallback a tracer took, Note [branch contract])."""
    return "\n".join(line for _, line in function_lines(program, name, forced_general)) + "\n"


def function_lines(program: Program, name: str = "f", forced_general=frozenset()) -> list[tuple[int | None, str]]:
    """function_source's lines, each with the position of the instruction it states (None for
    the `def` and `return` lines): a tracer that names a line of the source names an instruction."""
    program.types()  # validation: op names, arities and enumerations
    if not name.isidentifier():
        raise ProgramError(f"function name {name!r} is not an identifier")
    params = ", ".join(f"v{k}" for k in range(len(program.inputs)))
    lines: list[tuple[int | None, str]] = [(None, f"def {name}({params}):")]
    for pos, (ins, defs) in enumerate(program.definitions()):
        op = get_op(ins.op)
        args = render_arg(ins.args)
        lhs = ", ".join(f"v{d}" for d in defs) + ("," if len(defs) == 1 and ins.op in _MULTI else "")
        if not defs and ins.op in _MULTI:
            lhs = "()"  # `() = torch.unbind(x, 0)` fails unless there are no pieces, like interp
        if isinstance(op, Branch):
            if pos in forced_general:
                _mode, pat, *ops = args
                stmt = f"{lhs} = {PATTERNS[pat].general(ops, True)}  # fallback arm, as traced"
            else:
                stmt = op.statement(lhs, args)
        else:
            stmt = f"{lhs} = {op.source(args)}" if lhs else op.source(args)
        lines.extend((pos, "    " + s) for s in stmt.split("\n"))
    outs = ", ".join(f"v{o}" for o in program.outputs)
    lines.append((None, f"    return ({outs}{',' if len(program.outputs) == 1 else ''})"))
    return lines


_MULTI = {"split", "chunk", "unbind", "tolist"}


def inputs_source(specs: tuple[InputSpec, ...], var: str = "inputs") -> str:
    rows = [f"    {tensor_source(s)},  # {s.name}: " + ", ".join(s.dims) for s in specs]
    return f"{var} = [\n" + "\n".join(rows) + "\n]\n"


def tensor_source(s: InputSpec) -> str:
    """`torch.tensor([...], dtype=...).reshape(...)`: the input's data, numbers rendered as numbers."""
    data = "[" + ", ".join(_elem(x, s.dtype) for x in s.data) + "]"
    dt = {"float": "torch.float32", "int": "torch.int64", "bool": "torch.bool"}[s.dtype]
    assert set(TORCH_DTYPES) == {"float", "int", "bool"}
    return f"torch.tensor({data}, dtype={dt}).reshape({tuple(int(n) for n in s.shape)!r})"


def _elem(x, dtype: str) -> str:
    if dtype == "bool":
        return repr(bool(x))
    if dtype == "int" or float(x).is_integer():
        return repr(int(x))
    return repr(float(x))


def program_to_python(program: Program) -> str:
    """A standalone script that runs the program eagerly and prints its outputs."""
    return (HEADER + "\n\n" + function_source(program) + "\n\n" + inputs_source(program.inputs)
            + "\nif __name__ == '__main__':\n    print(f(*inputs))\n")
