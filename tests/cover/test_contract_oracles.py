"""The contract oracle (an exported program run outside its own contract must reject the input
or be right) and the silent-specialization oracle (a dim declared Dim.DYNAMIC must stay
symbolic, or export must raise), each on a planted torch behaviour and on clean runs."""

from __future__ import annotations

import contextlib
import subprocess
import sys

import torch.export._unlift as unlift
from _helpers import I, R, inp, prog

from shapefuzz.oracles import check_all
from shapefuzz.oracles.contract import clause, contract
from shapefuzz.oracles.specialization import silent_specialization, specialized
from shapefuzz.program import Instr
from shapefuzz.program.variants import variants
from shapefuzz.systems import get_system
from shapefuzz.systems.patching import patched

#: x.shape[0] through a plain `if` on max(n, 3): traced at 5, the guard n >= 3 holds and the
#: fast arm returns n; at n = 2 eager returns 3. ep.module() rejects n = 2 ("Guard failed")
X = inp([1.0] * 5, (5,), dims=("dynamic",))
MAX = prog([X], [I("size", R(0), 0), I("branch", "if", "max", R(1), 3)])


@contextlib.contextmanager
def unchecked_module():
    """Planted: ep.module() checks neither its guards nor its range constraints."""
    with patched(unlift, "_ok_to_generate_guards_fn", lambda: False), \
            patched(unlift, "_check_input_constraints_for_graph", lambda *a, **k: None):
        yield


def observe(p, config="default", n=8):
    eager = get_system("eager").observe(p, "default", [])
    return eager, get_system("export").observe(p, config, variants(p, n))


def test_contract_fires_when_the_exported_program_accepts_and_miscomputes():
    with unchecked_module():
        eager, obs = observe(MAX)
    assert obs.outcome.status == "ok", obs.outcome.short()
    fs = [f for f in check_all(MAX, eager, [obs]) if f.oracle == "contract"]
    assert len(fs) == 1, [f.key for f in check_all(MAX, eager, [obs])]
    f = fs[0]
    assert f.severity == "high" and f.symptom == "wrong-value"
    rec = obs.replays[f.replay_index]
    assert rec.inputs[0].shape[0] < 3 and not rec.accepted and rec.artifact.ok
    assert f.key.startswith("contract:wrong-value:export:default:") and clause(rec.outside) in f.key


def test_contract_quiet_when_the_exported_program_rejects_cleanly():
    eager, obs = observe(MAX)
    outside = [r for r in obs.replays if r.outside]
    assert outside, "the variants hold inputs outside the contract"
    assert all(not r.artifact.ok and r.artifact.error.startswith("AssertionError: Guard failed")
               for r in outside if r.inputs[0].shape[0] >= 2)
    assert contract(obs, frozenset()) == []
    assert check_all(MAX, eager, [obs]) == []


def test_contract_ignores_inputs_inside_the_contract_and_right_results_outside_it():
    p = prog([X], [I("flip", R(0), (0,))])
    eager, obs = observe(p)
    assert any(r.outside and r.artifact.ok for r in obs.replays)  # 0/1 sizes run, and are right
    assert check_all(p, eager, [obs]) == []


def test_decomposed_config_replays_the_decomposed_program():
    with unchecked_module():
        eager, obs = observe(MAX, "decomposed")
    assert [f.oracle for f in check_all(MAX, eager, [obs])] == ["contract"]
    assert obs.config == "decomposed"


#: the program pins x.shape[0] (torch._check(n == 5)): Dim.DYNAMIC must raise
PINNED = prog([X], [I("size", R(0), 0), Instr("check", ("==", R(1), 5), 0), I("flip", R(0), (0,))])


@contextlib.contextmanager
def no_constraint_violation():
    """Planted: export drops its constraint violations (the solver's and the dim-hint range
    check), so a specialized Dim.DYNAMIC dim comes out of a successful trace as a constant."""
    import torch._export.non_strict_utils as nsu
    import torch.export._trace as trace

    real = nsu.produce_guards_and_solve_constraints

    def lenient(*a, **k):
        with contextlib.suppress(Exception):
            return real(*a, **k)

    with patched(trace, "produce_guards_and_solve_constraints", lenient), \
            patched(nsu, "_constrain_user_specified_dimhint_range", lambda *a, **k: None):
        yield


def test_silent_specialization_fires_on_a_planted_specialization():
    with no_constraint_violation():
        eager, obs = observe(PINNED, n=2)
    assert obs.outcome.status == "ok", obs.outcome.short()
    assert [(d.input, d.dim, d.declared) for d in specialized(obs)] == [(0, 0, "Dim.DYNAMIC")]
    fs = [f for f in check_all(PINNED, eager, [obs]) if f.oracle == "specialization"]
    assert [f.key for f in fs] == ["specialization:silent-specialization:export:default"]


def test_silent_specialization_quiet_on_clean_runs_and_dim_auto():
    p = prog([X], [I("flip", R(0), (0,))])
    _, obs = observe(p, n=2)
    assert specialized(obs) == () and silent_specialization(obs) == []
    # Dim.DYNAMIC raises on the pinned dim (an expected `constraint`); Dim.AUTO specializes it
    # silently by design: neither is a finding
    for config, outcome in (("default", "constraint"), ("dim-auto", "ok")):
        e, o = observe(PINNED, config, n=2)
        assert o.outcome.status == outcome, (config, o.outcome.short())
        assert specialized(o) == () and check_all(PINNED, e, [o]) == []


def test_contract_repro_exits_1_standalone(tmp_path):
    """The issue form of a contract finding runs ep.module() outside its contract: with the
    planted patch pasted in front it exits 1; as shipped torch rejects the input, exit 0."""
    from shapefuzz.cases.corpus import Case
    from shapefuzz.repro import repro_source

    with unchecked_module():
        eager, obs = observe(MAX)
    f = next(f for f in check_all(MAX, eager, [obs]) if f.oracle == "contract")
    case = Case(f, MAX, obs.replays[f.replay_index].inputs, fallback_branches=obs.fallback_branches)
    src = repro_source(case)
    assert "outside its contract" in src
    clean = tmp_path / "repro.py"
    clean.write_text(src)
    r = subprocess.run([sys.executable, str(clean)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    planted = tmp_path / "planted.py"
    planted.write_text("import torch.export._unlift as U\nU._ok_to_generate_guards_fn = lambda: False\n"
                       "U._check_input_constraints_for_graph = lambda *a, **k: None\n" + src)
    r = subprocess.run([sys.executable, str(planted)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "BUG" in r.stdout, r.stdout + r.stderr


def _record(outside: str, accepted: bool, eager_value: int, got_value: int):
    from shapefuzz.systems.observation import ReplayRecord, RunResult, Value

    def run(v):
        return RunResult(True, "", (Value("int", (), "int", (v,)),))
    return ReplayRecord((inp([1.0], (1,)),), accepted, run(eager_value), run(got_value), outside)


def test_contract_reads_only_runs_outside_the_contract_that_returned():
    from shapefuzz.systems.observation import Observation, Outcome

    def obs(*recs):
        return Observation("compile", "backed-size-oblivious", Outcome("ok"), replays=recs)

    wrong = _record("size-oblivious: a new size 0/1", False, 3, 1)
    [f] = contract(obs(wrong), frozenset())
    assert f.key == "contract:wrong-value:compile:backed-size-oblivious:size-oblivious:int"
    assert contract(obs(_record("size-oblivious: x", False, 3, 3)), frozenset()) == []  # right
    assert contract(obs(_record("", True, 3, 1)), frozenset()) == []  # the replay oracle's
    assert contract(obs(_record("guard: g", True, 3, 1)), frozenset()) == []  # accepted: replay's
    assert clause("zero-one: s0 = 1, but ...") == "zero-one" and clause("odd text") == "other"


def test_silent_specialization_is_written_by_its_oracles_form():
    """Note [repro forms]: the specialization oracle's own form (traced by the public call, then
    its template's check of the exported program over DECLARED), which is check.py too."""
    from shapefuzz.cases.corpus import Case
    from shapefuzz.repro import check_source, line_limit, repro_source
    from shapefuzz.repro.forms import choose

    with no_constraint_violation():
        eager, obs = observe(PINNED, n=2)
    f = next(f for f in check_all(PINNED, eager, [obs]) if f.oracle == "specialization")
    case = Case(f, PINNED, None)
    src = repro_source(case)
    assert choose(case).form.name == "specialization" and choose(case).writer.name == "traced"
    assert "\nDECLARED = [[0]]\n" in src and "ep = export(" in src and "BUG: input {i} dim {d}" in src
    assert check_source(case) == src and len(src.splitlines()) <= line_limit(case)


#: the plant of no_constraint_violation, as lines a script runs before its own
_LENIENT = ("import contextlib\nimport torch._export.non_strict_utils as nsu\nimport torch.export._trace as trace\n"
            "real = nsu.produce_guards_and_solve_constraints\n"
            "def lenient(*a, **k):\n    with contextlib.suppress(Exception):\n        return real(*a, **k)\n"
            "trace.produce_guards_and_solve_constraints = lenient\n"
            "nsu._constrain_user_specified_dimhint_range = lambda *a, **k: None\n")


def test_silent_specialization_repro_exits_1_with_the_plant_and_0_without(tmp_path):
    """As shipped, export raises the constraint violation the contract asks for: the form exits 0
    (it once exited 1 on that traceback); with the plant the dim comes out constant: exit 1."""
    from shapefuzz.cases.corpus import Case
    from shapefuzz.repro import repro_source

    with no_constraint_violation():
        eager, obs = observe(PINNED, n=2)
    f = next(f for f in check_all(PINNED, eager, [obs]) if f.oracle == "specialization")
    src = repro_source(Case(f, PINNED, None))
    for name, prefix, want in (("clean.py", "", 0), ("planted.py", _LENIENT, 1)):
        (tmp_path / name).write_text(prefix + src)
        r = subprocess.run([sys.executable, str(tmp_path / name)], capture_output=True, text=True, timeout=300)
        assert r.returncode == want, (name, r.stdout + r.stderr[-2000:])
        assert ("BUG" in r.stdout) == bool(want) and ("OK: export raised a constraint violation" in r.stdout) == (not want)
