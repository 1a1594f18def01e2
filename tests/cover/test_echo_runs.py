"""Note [echo runs] (program/kinds.py): the metamorphic echoes run a program through the system's
`answers` (no evidence), so they must carry what `observe` would have carried, and the
metamorphic oracle must still fire through that path on a planted torch bug."""

from __future__ import annotations

import itertools

import pytest
import sympy
from hypothesis import HealthCheck, Phase, given, settings
from torch.fx.experimental.symbolic_shapes import ShapeEnv

from shapefuzz.oracles import metamorphic
from shapefuzz.program import Ref
from shapefuzz.program.metamorphic import echo_of, redundant
from shapefuzz.program.questions import QInstr, QProgram
from shapefuzz.strategies import qprograms
from shapefuzz.systems import get_system
from shapefuzz.systems.jobs import Job, run_job


@pytest.mark.parametrize("system", ["torch-env", "ref"])
@settings(max_examples=40, database=None, derandomize=True, phases=[Phase.generate], deadline=None,
          suppress_health_check=list(HealthCheck))
@given(program=qprograms())
def test_answers_carry_what_observe_carries(system, program):
    s = get_system(system)
    for p in (program, redundant(program)):
        assert echo_of("e", s.answers(p, "default")) == echo_of("e", s.observe(p, "default", []))


# v0 = backed(6); ask(statically_known_true, v0 >= 2): static True in any env (0/1 specialization)
P = QProgram((QInstr("backed", (6,)), QInstr("ask", ("statically_known_true", ">=", Ref(0), 2))))


def _metamorphic(program: QProgram) -> list:
    return metamorphic(program, run_job(Job(program.dumps(), "torch-env", "default", "[]")))


def test_quiet_on_unmodified_torch():
    assert _metamorphic(P) == []


def test_fires_when_a_later_env_answers_otherwise(monkeypatch):
    """The plant: state that leaks from one ShapeEnv into the next (what a global cache gone
    stale does): every env after the first decides a true static question false."""
    made = itertools.count()
    init, static = ShapeEnv.__init__, ShapeEnv._maybe_evaluate_static

    def counted_init(self, *a, **k):
        init(self, *a, **k)
        self._planted_nth = next(made)

    def leaky_static(self, *a, **k):
        r = static(self, *a, **k)
        return sympy.false if r == sympy.true and getattr(self, "_planted_nth", 0) > 0 else r

    monkeypatch.setattr(ShapeEnv, "__init__", counted_init)
    monkeypatch.setattr(ShapeEnv, "_maybe_evaluate_static", leaky_static)
    found = _metamorphic(P)
    assert "fresh" in [f.symptom for f in found], found
