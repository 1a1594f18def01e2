"""The op registry and the small helpers every op family shares.

Note [one op = one class]: an op family is one small class holding, side by side, its static
typing rule (`out_types`), its eager semantics (`eager`), the torch source it stands for
(`source`, used by repro.py) and its generation rule (`generate`). Adding an op touches one
place. `eager` and `source` must mean the same thing: tests/cover/test_codegen.py runs the
generated source and the interpreter on the same programs and compares.

Note [symbolic shape rules]: `symbolic(args, n_out, s)` is the op's shape rule for the reference
ShapeEnv (`ref`), written next to its eager rule. `args` are the eager arguments with every
tensor replaced by a SymTensor (`.shape`: a tuple of SymInts, `.dtype`, `.rank`) and every SymInt
value by a reference SymInt (literals stay as they are); it returns one SymTensor or SymInt per
output. `s` is shapefuzz.systems.ref.shapes.Shapes: SymInts do + - * // % and comparisons, and a
comparison is asked the way torch's meta function asks it: `bool(c)` / `s.expect(c)` (guard, or a
data-dependent error when unbacked), `s.guard_or_false(c)`, `s.guard_or_true(c)`,
`s.statically_known_true(c)`, `s.check(c, msg)` (torch._check: a deferred runtime assert);
`s.unbacked(lo, hi, size_like)` makes a data-dependent size, `s.int_of(x)` specializes,
`s.fail(msg)` raises the op's error. Mirror the questions torch's meta function asks (they decide
where a trace guards or raises a data-dependent error), but keep the rule short. An op without
the method makes `ref` skip the program (outcome ok, "NoShapeRule"), never a finding.
"""

from __future__ import annotations

from typing import Any, ClassVar

from shapefuzz.ir import SYMINT, ProgramError, VType

__all__ = [
    "INT_LIKE",
    "Op",
    "all_ops",
    "expect_choice",
    "expect_dim",
    "expect_int",
    "expect_tensor",
    "families",
    "get_op",
    "register",
]

_REGISTRY: dict[str, Op] = {}


class Op:
    name: ClassVar[str]
    family: ClassVar[str]
    #: torch.empty: element values are unspecified, only the shape may be compared.
    undefined_data: ClassVar[bool] = False
    #: the output does not depend on input element data (size, numel): it stays comparable.
    data_independent_output: ClassVar[bool] = False
    #: relative frequency in generation: the ops that ask shape questions come up more often.
    weight: ClassVar[int] = 2
    #: generated only when its family is asked for by name (a slow op, e.g. flex_attention,
    #: whose trace costs seconds, would dominate a default campaign)
    opt_in: ClassVar[bool] = False

    def out_types(self, args: tuple, n_out: int) -> tuple[VType, ...]:
        raise NotImplementedError

    def eager(self, args: tuple, n_out: int) -> tuple:
        raise NotImplementedError

    def source(self, args: tuple) -> str:
        raise NotImplementedError

    def symbolic(self, args: tuple, n_out: int, s: Any) -> tuple:
        """The symbolic shape rule (Note [symbolic shape rules])."""
        raise NotImplementedError

    def generate(self, ctx: Any, draw: Any) -> None:
        raise NotImplementedError


def register(cls: type[Op]) -> type[Op]:
    if cls.name in _REGISTRY:
        raise RuntimeError(f"op {cls.name!r} registered twice")
    _REGISTRY[cls.name] = cls()
    return cls


def get_op(name: Any) -> Op:
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ProgramError(f"unknown op {name!r}; known ops: {', '.join(sorted(_REGISTRY))}") from None


def op_where(name: str) -> str:
    """`family.op`, how a signature names a program op ("?.op" for an op of a plugin no longer
    loaded, "" for none)."""
    if not name:
        return ""
    try:
        return f"{get_op(name).family}.{name}"
    except ProgramError:
        return f"?.{name}"


def all_ops() -> dict[str, Op]:
    """Every registered op, sorted by name so that generation is deterministic."""
    return dict(sorted(_REGISTRY.items()))


def families() -> list[str]:
    return sorted({op.family for op in _REGISTRY.values()})


INT_LIKE = "SymInt or int literal"


def expect_tensor(a: Any, what: str, dtypes: tuple[str, ...] = (), min_rank: int = 0) -> VType:
    if not (isinstance(a, VType) and a.sort == "tensor"):
        raise ProgramError(f"{what} must be a tensor, got {a!r}")
    if dtypes and a.dtype not in dtypes:
        raise ProgramError(f"{what} must have dtype in {dtypes}, got {a.dtype}")
    if a.rank < min_rank:
        raise ProgramError(f"{what} must have rank >= {min_rank}, got {a.rank}")
    return a


def expect_int(a: Any, what: str) -> None:
    if a == SYMINT:
        return
    if isinstance(a, bool) or not isinstance(a, int):
        raise ProgramError(f"{what} must be a {INT_LIKE}, got {a!r}")


def expect_dim(d: Any, rank: int, what: str = "dim") -> int:
    if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d < rank:
        raise ProgramError(f"{what} must be an int literal in [0, {rank}), got {d!r}")
    return d


def expect_choice(s: Any, table: dict | tuple, what: str) -> None:
    if not isinstance(s, str) or s not in table:
        raise ProgramError(f"{what} must be one of {sorted(table)}, got {s!r}")
