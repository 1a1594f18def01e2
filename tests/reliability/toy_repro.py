"""TEST-ONLY: the toy oracle's repro form template (toy_oracle.py; Note [repro templates]): the
program run eagerly, its output ranks against the ones make_fx traced."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from shapefuzz.repro.templates._slots import f, inputs

    # the form's values, bound by the script above the harness (declared here for the linter)
    MIN_RANK: int = 2
    TRACED_RANKS: list[int] = []

if __name__ == "__main__":
    ranks = [t.dim() for t in f(*inputs) if isinstance(t, torch.Tensor)]
    print("output ranks:", ranks, "(make_fx traced", TRACED_RANKS, ")")
    if any(r >= MIN_RANK for r in ranks):
        sys.exit(print(f"BUG: expected every output of rank < {MIN_RANK}, got ranks {ranks}") or 1)
    print("OK: every output has rank <", MIN_RANK)
