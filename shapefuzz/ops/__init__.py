"""Op families. Importing this package registers every op (see Note [one op = one class])."""

from shapefuzz.ops import (  # noqa: F401
    branch,
    control,
    datadep,
    dims,
    factory,
    indexing,
    layout,
    linalg,
    multi,
    pointwise,
    scalar,
    values,
)
from shapefuzz.ops.base import Op, all_ops, families, get_op, op_where

__all__ = ["Op", "all_ops", "families", "get_op", "op_where"]
