"""Hypothesis strategies for shapefuzz programs (importable as ``shapefuzz.strategies``).

    from shapefuzz.strategies import programs
    @given(programs(max_ops=6, families=("split", "cat")))
    def test_...(program): ...
"""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import target
from hypothesis.errors import InvalidArgument

from shapefuzz.ops import all_ops
from shapefuzz.ops.choices import sampled_from
from shapefuzz.program import Program

from .context import GenContext, SkipOp, StopGeneration
from .inputs import data_for, input_spec, input_specs
from .questions import qprograms
from .settings import GenSettings

__all__ = ["GenSettings", "data_for", "input_spec", "input_specs", "op_pool", "programs", "programs_from",
           "programs_of_kind", "qprograms"]


def programs(*, families: tuple[str, ...] = (), max_ops: int = 8, max_rank: int = 3,
             max_size: int = 6, max_inputs: int = 3,
             dim_kinds: tuple[str, ...] = ("static", "dynamic", "unbacked")) -> st.SearchStrategy[Program]:
    """Programs over the given op families (all by default), with at most `max_ops` generated
    operations (helpers such as size() may add a few instructions)."""
    try:
        settings = GenSettings(tuple(families), max_ops, max_rank, max_size, max_inputs, tuple(dim_kinds))
    except (TypeError, ValueError) as e:  # e.g. families=None, unhashable family names
        raise InvalidArgument(f"programs(): {e}") from None
    return programs_from(settings)


def op_pool(settings: GenSettings) -> tuple:
    """The ops generation draws from, each repeated by its weight. Opt-in families (slow ones,
    Op.opt_in) are drawn only when asked for by name."""
    return tuple(op for op in all_ops().values() for _ in range(op.weight)
                 if op.family in settings.families or not (settings.families or op.opt_in))


def programs_from(settings: GenSettings) -> st.SearchStrategy[Program]:
    ops = op_pool(settings)
    if not ops:
        raise InvalidArgument(f"no op in families {settings.families}")
    return _programs(settings, ops)


def programs_of_kind(kind: str, settings: GenSettings) -> st.SearchStrategy:
    """The programs of one kind (shapefuzz.program.kinds.KINDS, Note [program kinds]) under
    `settings`: tensor programs over its ops, question programs of up to twice its max_ops."""
    return _OF_KIND[kind](settings)


def _questions(settings: GenSettings) -> st.SearchStrategy:
    return qprograms(max_ops=2 * settings.max_ops)


@st.composite
def _programs(draw, settings: GenSettings, ops) -> Program:
    inputs = draw(input_specs(settings))
    ctx = GenContext(settings, inputs)
    for _ in range(settings.max_ops):
        # A continue-flag per step (not a drawn count) lets the shrinker delete steps.
        if ctx.instrs and not draw(st.integers(0, 5)):
            break
        op = draw(sampled_from(ops))
        try:
            op.generate(ctx, draw)
        except SkipOp:
            continue
        except StopGeneration:
            break
    outputs = ctx.outputs() or (len(inputs) - 1,)
    _steer(ctx)
    return Program(inputs, tuple(ctx.instrs), outputs)


def _steer(ctx: GenContext) -> None:
    try:
        target(float(len(ctx.instrs)), label="instructions")
        target(float(len(ctx.data_dependent)), label="data-dependent values")
    except InvalidArgument:
        pass  # outside a @given test (e.g. .example())


#: program kind -> its strategy (the kinds' names of shapefuzz.program.kinds.KINDS)
_OF_KIND = {"tensors": programs_from, "questions": _questions}
