"""Op families. Importing this package registers every op (see Note [one op = one class])."""

from shapefuzz.ops import branch, datadep, factory, layout, multi, pointwise, scalar  # noqa: F401
from shapefuzz.ops.base import Op, all_ops, families, get_op

__all__ = ["Op", "all_ops", "families", "get_op"]
