"""Note [unread toggles] (shapefuzz/systems/ref/reuse.py): a ref config that differs from an
earlier one of the same program only in settings that run never read gets that observation
under its own name, and it equals what the config computes itself; a toggle the program reads
is always run."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from shapefuzz.program import InputSpec, Instr, Program, Ref
from shapefuzz.program.kinds import KINDS
from shapefuzz.strategies import programs_of_kind
from shapefuzz.strategies.settings import GenSettings
from shapefuzz.systems import CONFIGS
from shapefuzz.systems.ref import RefSystem

REF = RefSystem()


def untimed(o):
    return replace(o, elapsed_s=0.0, smt=tuple(replace(c, elapsed_ms=0.0) for c in o.smt))


def _all_configs(program) -> tuple[list, list, int]:
    scratch, shared = {}, []
    for c in CONFIGS["ref"]:
        shared.append(REF.observe_reusing(program, c, (), scratch))
    memo = scratch["reuse"]
    fresh = [REF.observe(program, c) for c in CONFIGS["ref"]]
    return shared, fresh, len(memo._done)


def test_shared_observations_equal_fresh_ones_over_generated_programs():
    runs: list[int] = []
    strat = st.one_of(*(programs_of_kind(k, GenSettings()) for k in KINDS))

    @seed(14)
    @settings(max_examples=60, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strat)
    def check(program):
        shared, fresh, ran = _all_configs(program)
        for c, a, b in zip(CONFIGS["ref"], shared, fresh):
            assert a.config == b.config == c
            assert untimed(a) == untimed(b), (c, program.dumps())
        runs.append(ran)

    check()
    n = len(CONFIGS["ref"])
    assert len(runs) == 60 and all(1 <= r <= n for r in runs)
    assert sum(runs) < 0.8 * n * len(runs), runs  # sharing happens: not every config ran


def test_a_toggle_the_program_reads_is_run_and_one_it_never_reads_is_shared():
    """u0 + u1 reads add_from_args (optimization 8's fast path); nothing reads skip-static (no
    check(u >= 0) on an unbounded u) or duck sizing (no dynamic input). None of the three
    configs is one z3 runs on (ref/claims.py Z3_CONFIGS), so only the settings decide."""
    x = InputSpec("x0", "int", (2,), ("static",), (3, 4))
    p = Program((x,), (Instr("item", (Ref(0), "sum")), Instr("item", (Ref(0), "max")),
                       Instr("binop", ("+", Ref(1), Ref(2)))), (3,))
    scratch: dict = {}
    first = REF.observe_reusing(p, "no-duck-shape", (), scratch)
    memo = scratch["reuse"]
    [(_, read, _, _)] = memo._done
    assert "add_from_args" in read and not {"skip_static_eval_unbounded", "duck_shape"} & read, read
    shared = REF.observe_reusing(p, "off:skip-static", (), scratch)
    assert len(memo._done) == 1 and shared.config == "off:skip-static"
    assert untimed(replace(shared, config="no-duck-shape")) == untimed(first)
    REF.observe_reusing(p, "off:add-from-args", (), scratch)
    assert len(memo._done) == 2  # run: it reads what it toggles
    REF.observe_reusing(p, "default", (), scratch)  # a z3 config: never another one's observation
    assert len(memo._done) == 3
