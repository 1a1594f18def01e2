"""Observations of one program shared between ref configs that differ only in toggles the
program never reads.

Note [unread toggles]: a ref observation is a pure function of the program and the settings it
reads (a fresh RefEnv per observation; the process-wide caches, expr_str's and sympy's, hold
pure functions of their keys). So while a config runs, its settings record which fields were
read, and a later config of the same program whose settings agree with it on every one of those
fields takes the same path through every rule and would compute the same observation: it gets
that one, under its own name, instead of running. A toggle a program never consults (add-from-
args without a sum of symbols, skip-static without check(u >= 0) on an unbounded u ...) has no
alternative path there to compare; a toggle it does consult is always run. One thing besides the
settings decides what a tensor observation holds: z3 runs on Z3_CONFIGS only (ref/claims.py), so a
config outside them takes a z3 config's observation less its z3 checks (the reads of the z3
part, its replays, are counted too, which can only prevent a match), never the other way round. The metamorphic re-runs of question
programs (program/kinds.py, `_with_echoes`) call `observe` and are never shared.
tests/cover/test_ref_reuse.py compares shared observations with fresh ones over many programs."""

from __future__ import annotations

from dataclasses import replace

from shapefuzz.systems.ref.settings import RefSettings

__all__ = ["Reads", "ReuseMemo"]

class Reads:
    """A RefSettings seen through a recorder: every field read is added to `read`."""

    __slots__ = ("_settings", "read")

    def __init__(self, settings: RefSettings):
        self._settings = settings
        self.read: set[str] = set()

    def __getattr__(self, name: str):
        value = getattr(self._settings, name)  # raises for a name RefSettings has not
        self.read.add(name)
        return value


class ReuseMemo:
    """The observations of one program so far, with the settings fields each one read."""

    def __init__(self):
        self._done: list[tuple[RefSettings, frozenset, bool, object]] = []

    def find(self, settings: RefSettings, z3: bool):
        """An earlier observation `settings` would have computed itself, or None. `z3`: this
        config's tensor observation carries z3 checks (Note [unread toggles]); one without them
        is an observation with them, less the checks."""
        for done, read, done_z3, obs in self._done:
            if (done_z3 or not z3) and all(getattr(done, f) == getattr(settings, f) for f in read):
                return replace(obs, smt=()) if done_z3 and not z3 else obs
        return None

    def add(self, settings: RefSettings, reads: Reads, z3: bool, obs) -> None:
        self._done.append((settings, frozenset(reads.read), z3, obs))


def renamed(obs, config: str):
    """`obs` as the observation of `config` (the only field that names a config)."""
    return replace(obs, config=config)
