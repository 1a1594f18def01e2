"""The generation context: builds a program instruction by instruction while running it eagerly,
so every choice (a narrow length, a split size, a branch operand) can be made valid for the
concrete data, and expressed through SymInt values so that tracing keeps it symbolic.

Note [bounded sizes]: an instruction whose result would hold more than max_numel elements is
dropped before it is recorded, so no program allocates a large tensor.
"""

from __future__ import annotations

from typing import Any

import hypothesis.strategies as st

from shapefuzz.ops import get_op
from shapefuzz.ops.choices import sampled_from
from shapefuzz.ops.scalar import LARGE_CONSTANTS
from shapefuzz.program import SYMINT, InputSpec, Instr, Ref, VType, _arg_types, _refs
from shapefuzz.program.interp import _resolve, make_tensor

from .settings import GenSettings

__all__ = ["GenContext", "SkipOp", "StopGeneration"]

DATA_DEPENDENT_OPS = {"item", "nonzero", "masked_select"}


class StopGeneration(Exception):
    """The last instruction failed in eager: the program ends there (an invalid program)."""


class SkipOp(Exception):
    """The instruction is not recorded (too large)."""


class GenContext:
    def __init__(self, settings: GenSettings, inputs: tuple[InputSpec, ...]):
        self.settings = settings
        self.inputs = inputs
        self.values: list[Any] = [make_tensor(s) for s in inputs]
        self.types: list[VType] = [s.vtype for s in inputs]
        self.data_dependent: set[int] = {k for k, s in enumerate(inputs) if "unbacked" in s.dims}
        self.instrs: list[Instr] = []
        self.undefined: set[int] = set()  # torch.empty outputs: never fed to another op
        self.used: set[int] = set()
        self.failed = False
        self.asked: list[tuple] = []  # the branches emitted so far (Note [re-asked branches])

    # ---- reading ---------------------------------------------------------------------------
    def type(self, r: Ref) -> VType:
        return self.types[r.index]

    def val(self, a: Any) -> Any:
        return self.values[a.index] if isinstance(a, Ref) else a

    def refs_of(self, dtype: str | None = None, dtypes: tuple[str, ...] = (), pred=None,
                min_rank: int = 0, max_rank: int | None = None) -> list[Ref]:
        out = []
        for k, t in enumerate(self.types):
            if t.sort != "tensor" or (dtype and t.dtype != dtype) or (dtypes and t.dtype not in dtypes):
                continue
            if t.rank < min_rank or (max_rank is not None and t.rank > max_rank):
                continue
            v = self.values[k]
            if k in self.undefined or v.dim() != t.rank or (pred is not None and not pred(v)):
                continue
            out.append(Ref(k))
        return out

    def sym_refs(self, pred=None) -> list[Ref]:
        return [Ref(k) for k, t in enumerate(self.types)
                if t == SYMINT and (pred is None or pred(self.values[k]))]

    # ---- choosing --------------------------------------------------------------------------
    def _choose(self, draw, cands: list[Ref]) -> Ref:
        # Half the time the newest candidate (deep chains); shrinking moves toward the oldest.
        if len(cands) > 1 and draw(st.booleans()):
            return cands[-1]
        return draw(sampled_from(cands))

    def pick_tensor(self, draw, dtypes: tuple[str, ...] = (), min_rank: int = 0,
                    max_rank: int | None = None, pred=None) -> Ref | None:
        cands = self.refs_of(dtypes=dtypes, min_rank=min_rank, max_rank=max_rank, pred=pred)
        return self._choose(draw, cands) if cands else None

    def pick_sym(self, draw, prefer_unbacked: bool = False, pred=None) -> Ref | None:
        cands = self.sym_refs(pred)
        if prefer_unbacked:
            dd = [r for r in cands if r.index in self.data_dependent]
            cands = dd if dd and draw(st.booleans()) else cands
        if not cands or not draw(st.integers(0, 4)):
            made = self._fresh_sym(draw)
            if made is not None and (pred is None or pred(self.val(made))):
                return made
        return self._choose(draw, cands) if cands else None

    def _fresh_sym(self, draw) -> Ref | None:
        ints = self.refs_of(dtypes=("int", "bool"))
        if ints and draw(st.booleans()):
            return self.emit("item", (draw(sampled_from(ints)), "sum"))[0]
        x = self.pick_tensor(draw, min_rank=1)
        if x is None:
            return None
        return self.emit("size", (x, draw(st.integers(0, self.type(x).rank - 1))))[0]

    def pick_int(self, draw, lo: int | None, hi: int | None, prefer_sym: bool = False) -> Any:
        """An int-like argument (a SymInt value or a literal) whose value lies in [lo, hi]."""
        lo_, hi_ = (-3 if lo is None else lo), (8 if hi is None else hi)
        if hi_ < lo_:
            return lo_

        def ok(v):
            return lo_ <= v <= hi_

        how = draw(sampled_from(["literal", "sym", "derived"] if not prefer_sym else
                                   ["sym", "derived", "literal"]))
        if how != "literal":
            cands = self.sym_refs(ok)
            if how == "derived" or not cands:
                d = self._derived(draw)
                if d is not None and ok(self.val(d)):
                    return d
            if cands:
                return self._choose(draw, cands)
        return draw(st.integers(lo_, hi_))

    def _derived(self, draw) -> Ref | None:
        """Derived extents of seed 001: u // 2, 2 * (u // 2), (u + 1) // 2, u - 1, s - u ...,
        and c1 * u % c2 with large constants (`256 * u0 % 447`, Note [large constants])."""
        a = self.pick_sym(draw)
        if a is None:
            return None
        form = draw(sampled_from(["half", "even", "ceil_half", "minus1", "diff", "min", "scaled_mod"]))
        if form == "half":
            return self.emit("binop", ("//", a, 2))[0]
        if form == "even":
            return self.emit("binop", ("*", 2, self.emit("binop", ("//", a, 2))[0]))[0]
        if form == "ceil_half":
            return self.emit("binop", ("//", self.emit("binop", ("+", a, 1))[0], 2))[0]
        if form == "minus1":
            return self.emit("binop", ("-", a, 1))[0]
        if form == "scaled_mod":
            scaled = self.emit("binop", ("*", draw(sampled_from(LARGE_CONSTANTS)), a))[0]
            return self.emit("binop", ("%", scaled, draw(sampled_from(LARGE_CONSTANTS))))[0]
        b = self.pick_sym(draw)
        if b is None:
            return None
        return self.emit("binop", ("-" if form == "diff" else "min", a, b))[0]

    # ---- emitting --------------------------------------------------------------------------
    def emit(self, name: str, args: tuple, n_out: int | None = 1) -> tuple[Ref, ...]:
        op = get_op(name)
        concrete = _resolve(args, self.values)
        try:
            outs = op.eager(concrete, n_out)
        except Exception:
            n = 1 if n_out is None else n_out
            self._record(Instr(name, args, n), op, (None,) * n)
            self.failed = True
            raise StopGeneration from None
        for o in outs:
            if hasattr(o, "numel") and o.numel() > self.settings.max_numel:
                raise SkipOp
        return self._record(Instr(name, args, len(outs)), op, outs)

    def _record(self, ins: Instr, op, outs) -> tuple[Ref, ...]:
        types = op.out_types(_arg_types(ins.args, self.types), ins.n_out)
        refs = tuple(Ref(len(self.values) + k) for k in range(ins.n_out))
        arg_refs = [r.index for r in _refs(ins.args)]
        self.used.update(arg_refs)
        if name_is_dd(ins.op) or any(i in self.data_dependent for i in arg_refs):
            self.data_dependent.update(r.index for r in refs)
        if op.undefined_data:
            self.undefined.update(r.index for r in refs)
        self.values.extend(outs)
        self.types.extend(types)
        self.instrs.append(ins)
        return refs

    def outputs(self) -> tuple[int, ...]:
        """Leaves: values no later instruction reads (checked, with their shapes, by oracles)."""
        first = len(self.inputs)
        leaves = [k for k in range(first, len(self.values)) if k not in self.used]
        return tuple(leaves[-6:])


def name_is_dd(op: str) -> bool:
    return op in DATA_DEPENDENT_OPS
