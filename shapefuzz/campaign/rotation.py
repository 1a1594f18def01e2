"""Which of a campaign's configs one program runs under.

Note [config rotation]: `--config all` gives export 22 configs, make_fx 16 and compile 24 (with
Inductor); running every program under each made `--system export --config all` 0.03 programs/s
(one program in 40 s) and compile's four default configs 0.15 programs/s. So a traced system
runs each program under its comparison config (the one every other config is compared with,
oracles/differential.py BASELINES; "default" where none is named) and ROTATE of the others,
chosen by the program's hash: consecutive ones in the list from a place the hash picks, so
across programs every config gets the same share. Per program the cost is (1 + ROTATE)
configs instead of all; each non-comparison config still sees about ROTATE/(n-1) of many more
programs, and the comparison config sees every one, so the config differential (a config
against its comparison config on the same program) keeps its pairs. The choice depends on the
program alone: a replayed round, a resumed campaign and a repro see the same configs. A shrink
or a blame run asks for its finding's own targets (oracles.targets_for_finding), unrotated.
Cheap systems (torch-env, ref: milliseconds a job) run every config; `--configs-per-program
all` runs every config of every system on every program, as before."""

from __future__ import annotations

import zlib

from shapefuzz.oracles.differential import BASELINES

__all__ = ["ROTATE", "ROTATED_SYSTEMS", "rotated"]

#: configs a program runs besides each traced system's comparison config (CLI default)
ROTATE = 2
#: systems whose jobs cost a trace or a compile each (the others run every config)
ROTATED_SYSTEMS = ("make_fx", "export", "compile")


def rotated(program_json: str, targets: tuple[tuple[str, str], ...], k: int | None) -> tuple[tuple[str, str], ...]:
    """The (system, config) pairs of `targets` this program runs; all of them when `k` is None."""
    if k is None:
        return targets
    configs: dict[str, list[str]] = {}
    for s, c in targets:
        configs.setdefault(s, []).append(c)
    start = zlib.crc32(program_json.encode())
    keep: set[tuple[str, str]] = set()
    for s, cs in configs.items():
        if s not in ROTATED_SYSTEMS or len(cs) <= k + 1:
            keep.update((s, c) for c in cs)
            continue
        first = BASELINES.get(s, "default")
        first = first if first in cs else cs[0]
        rest = [c for c in cs if c != first]
        keep.add((s, first))
        keep.update((s, rest[(start + j) % len(rest)]) for j in range(k))
    return tuple(t for t in targets if t in keep)
