"""Generation's one choice helper.

Note [cached strategies]: Hypothesis validates a strategy object the first time it is drawn from
(emptiness, labels: a walk over the strategy), and `st.sampled_from(...)` builds a new object on
every call, so a generator that writes `draw(st.sampled_from(cands))` pays that walk on every
choice: a third of a program's generation time (benchmarks/ref_campaign.py). `sampled_from`
returns one strategy per distinct choice list instead. The choices are identical (the same
strategy, drawn the same way), so a seed generates the same programs as with st.sampled_from.
"""

from __future__ import annotations

from functools import lru_cache

import hypothesis.strategies as st

__all__ = ["sampled_from"]


def sampled_from(values) -> st.SearchStrategy:
    """st.sampled_from(values), built once per distinct sequence of values."""
    values = tuple(values)
    try:
        # keyed with each value's type: 1, 1.0 and True are equal as dict keys, not as choices
        return _sampled(tuple((type(v), v) for v in values))
    except TypeError:  # an unhashable value
        return st.sampled_from(values)


@lru_cache(maxsize=4096)  # distinct candidate lists are few (op pools, constants, small refs)
def _sampled(key: tuple) -> st.SearchStrategy:
    return st.sampled_from(tuple(v for _, v in key))
