"""`v ** k` in question programs (Note [powers]): a literal natural exponent only; torch-env and
the reference answer alike and every oracle stays quiet on unmodified torch; a planted
regression of the value ranges of a power (an even power's range loses its 0) is found by the
truth and static-soundness oracles; the generator makes powers."""

from __future__ import annotations

import pytest
import torch.utils._sympy.value_ranges as vr
from hypothesis import HealthCheck, given, settings

from shapefuzz.oracles import check_all
from shapefuzz.program import ProgramError, Ref
from shapefuzz.program.questions import QInstr, QProgram
from shapefuzz.strategies import programs_of_kind
from shapefuzz.strategies.settings import GenSettings
from shapefuzz.systems.ref import RefSystem
from shapefuzz.systems.torch_env import TorchEnvSystem

R = Ref


def P(*instrs) -> QProgram:
    p = QProgram(tuple(QInstr(op, tuple(args)) for op, *args in instrs))
    p.validate()
    return p


#: u0 = 0 and s (hint 3): squares, a cube, a zeroth power; a check that decides the cube's sign
PROGRAM = P(("unbacked", 0), ("binop", "-", R(0), 1), ("binop", "**", R(1), 2), ("binop", "**", R(0), 3),
            ("ask", "statically_known_true", ">=", R(2), 0), ("ask", "guard_or_false", "!=", R(2), 0),
            ("ask", "statically_known_true", ">=", R(3), 0), ("check", ">=", R(0), 0),
            ("ask", "statically_known_true", ">=", R(3), 0), ("backed", 3), ("binop", "**", R(4), 2),
            ("ask", "bool", ">", R(5), 4), ("binop", "**", R(4), 0), ("ask", "statically_known_true", "==", R(6), 1))
WANT = [("True", "static"), ("False", "fallback"), ("False", "fallback"), ("True", "static"),
        ("True", "guard"), ("True", "static")]
CONFIGS = ("default", "backed-size-oblivious", "no-specialize-zero-one")


@pytest.mark.parametrize("exponent", [-1, 4, R(0), True])
def test_only_a_literal_natural_exponent_is_a_program(exponent):
    with pytest.raises(ProgramError, match="exponent"):
        P(("unbacked", 2), ("binop", "**", R(0), exponent))


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("system", [TorchEnvSystem(), RefSystem()], ids=["torch-env", "ref"])
def test_both_systems_answer_powers_alike_and_no_oracle_fires(system, config):
    o = system.observe(PROGRAM, config, ())
    assert o.outcome.status == "ok", o.outcome.short()
    assert [(d.answer, d.how) for d in o.decisions] == WANT
    assert check_all(PROGRAM, None, (o,)) == []


@pytest.fixture
def even_power_without_zero(monkeypatch):
    """A planted regression in torch's value ranges: an even power whose base range holds 0 is
    given a range from 1 (the convex_min_zero_map arm of pow_by_natural off by one)."""
    orig = vr.SymPyValueRangeAnalysis.pow_by_natural.__func__

    def planted(cls, a, b):
        r = orig(cls, a, b)
        return vr.ValueRanges(1, r.upper) if r.lower == 0 else r

    monkeypatch.setattr(vr.SymPyValueRangeAnalysis, "pow_by_natural", classmethod(planted))


def test_a_power_whose_range_loses_zero_is_found(even_power_without_zero):
    p = P(("unbacked", 0), ("binop", "**", R(0), 2), ("ask", "statically_known_true", ">=", R(1), 1))
    o = TorchEnvSystem().observe(p, "default", ())
    assert [(d.answer, d.how) for d in o.decisions] == [("True", "static")]  # u0 = 0: 0 >= 1 is False
    found = check_all(p, None, (o,))
    assert {(f.oracle, f.symptom) for f in found} == {("truth", "wrong-static"),
                                                   ("static-soundness", "unsound-static")}, found


def test_the_generator_makes_powers():
    seen = []

    @settings(max_examples=600, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(programs_of_kind("questions", GenSettings()))
    def gen(p):
        seen.extend(i.args[2] for i in p.instrs if i.op == "binop" and i.args[0] == "**")

    gen()
    assert {2, 3} <= set(seen), seen
