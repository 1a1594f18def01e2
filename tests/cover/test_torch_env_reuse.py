"""Note [one analysis per run state] (shapefuzz/systems/torch_env.py): a config whose run ends in
the state an earlier config's run of the same program ended in reuses its z3 checks and guard
replays; the evidence is the one a fresh analysis gives, and a run that ends elsewhere gets its
own."""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, given, settings

import shapefuzz.strategies as S
import shapefuzz.systems.torch_env as te
from shapefuzz.program.questions import QInstr, QProgram
from shapefuzz.systems.configs import default_names
from shapefuzz.systems.evidence import of
from shapefuzz.systems.evidence.truth import QuestionReplays

CONFIGS = default_names("torch-env")


def _programs(n: int) -> list[QProgram]:
    out: list[QProgram] = []

    @settings(max_examples=n, database=None, derandomize=True, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), deadline=None)
    @given(S.qprograms())
    def collect(p):
        out.append(p)

    collect()
    return out


def _evidence(programs: list[QProgram]) -> list:
    system = te.TorchEnvSystem()
    return [(o.smt, of(o, QuestionReplays)) for p in programs for c in CONFIGS
            for o in [system.observe(p, c, ())]]


def test_reused_evidence_is_what_a_fresh_analysis_gives(monkeypatch):
    programs = _programs(40)
    reused = _evidence(programs)
    monkeypatch.setattr(te._SameRun, "evidence", lambda self, program, obs, compute: compute())
    assert reused == _evidence(programs)


def test_a_run_that_ends_elsewhere_is_analysed_again(monkeypatch):
    calls = []
    real = te._SameRun.evidence

    def counted(self, program, obs, compute):
        return real(self, program, obs, lambda: calls.append(obs.config) or compute())

    monkeypatch.setattr(te._SameRun, "evidence", counted)
    # backed(1) is the int 1 under 0/1 specialization and a symbol without it: two run states
    p = QProgram((QInstr("backed", (1,)), QInstr("ask", ("guard_or_false", ">=", te.Ref(0), 1))))
    system = te.TorchEnvSystem()
    for config in ("default", "agfs=1", "no-specialize-zero-one"):
        system.observe(p, config, ())
    assert calls == ["default", "no-specialize-zero-one"]
