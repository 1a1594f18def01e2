"""The mutation benchmark's machinery (benchmarks/mutation/, issue 30): each operator's mutated
source on small hand-written functions, deterministic enumeration and sampling, a mutant applied
through its patch folder in a subprocess (and the unmodified interpreter left alone), a mutant
that does not compile triaged broken, and the resumable results file. No campaign runs here."""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import inspect
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from mutation import apply, hook  # noqa: E402
from mutation.mutants import Mutant, mutants_of_source, sample, torch_relpath  # noqa: E402
from mutation.operators import Operator  # noqa: E402
from mutation.store import JsonlStore  # noqa: E402
from mutation.triage import Triager, TriageSettings, Verdict  # noqa: E402

SOURCE = '''\
import math


def cmp(x):
    if x < 3:
        return 1
    return 0


def items(a, b):
    return [a, b]


def total(a, b, c):
    return a + b + c


def both(p, q):
    return p and q


def smaller(a, b):
    return min(a, b) + math.floor(a)


class Env:
    def check(self, x):
        torch._check(x >= 0)
        self._invalidate_cache()
        assert x
        return x

    def last(self, n):
        return n - 1

    def pick(self, p, a, b):
        return (a if p
                else b)
'''


def changes(m: Mutant) -> list[tuple[str, str]]:
    """(removed lines, added lines) of the mutant, each joined and stripped."""
    old, new = m.original.splitlines(), m.mutated.splitlines()
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new).get_opcodes():
        if tag != "equal":
            out.append((" ".join(s.strip() for s in old[i1:i2]), " ".join(s.strip() for s in new[j1:j2]).strip()))
    return out


def of(qualname: str, op: Operator) -> set[tuple[str, str]]:
    ms = mutants_of_source(SOURCE, "m", "m.py")
    return {c for m in ms if m.qualname == qualname and m.operator is op for c in changes(m)}


@pytest.mark.parametrize(("qualname", "op", "expected"), [
    ("cmp", Operator.COMPARISON, {("if x < 3:", "if x <= 3:")}),
    ("cmp", Operator.NEGATE_CONDITION, {("if x < 3:", "if (not x < 3):")}),
    ("cmp", Operator.OFF_BY_ONE, {("if x < 3:", "if x < 4:"), ("if x < 3:", "if x < 2:")}),
    ("cmp", Operator.OTHER_BRANCH, {("return 1", "return 0"), ("return 0", "return 1")}),
    ("items", Operator.DROP_ELEMENT, {("return [a, b]", "return [b]"), ("return [a, b]", "return [a]")}),
    ("total", Operator.DROP_ELEMENT, {("return a + b + c", "return b + c"), ("return a + b + c", "return a + c"),
                                      ("return a + b + c", "return a + b")}),
    ("both", Operator.DROP_OPERAND, {("return p and q", "return q"), ("return p and q", "return p")}),
    ("smaller", Operator.SWAP_FUNCTION, {("return min(a, b) + math.floor(a)", "return max(a, b) + math.floor(a)"),
                                         ("return min(a, b) + math.floor(a)", "return min(a, b) + math.ceil(a)")}),
    ("Env.check", Operator.SKIP_CALL, {("torch._check(x >= 0)", "pass"), ("self._invalidate_cache()", "pass"),
                                       ("assert x", "pass")}),
    ("Env.last", Operator.DROP_CONSTANT, {("return n - 1", "return n")}),
    # a two-line node: one line and a newline in parentheses (Note [kept lines])
    ("Env.pick", Operator.OTHER_BRANCH, {("return (a if p else b)", "return ((a ))"),
                                         ("return (a if p else b)", "return ((b ))")}),
    ("Env.pick", Operator.NEGATE_CONDITION, {("return (a if p", "return (a if (not p)")}),
])
def test_each_operator_makes_the_expected_change(qualname, op, expected):
    assert of(qualname, op) == expected


def test_a_mutant_keeps_every_line_number_and_compiles():
    ms = mutants_of_source(SOURCE, "m", "m.py")
    assert {m.operator for m in ms} == set(Operator)
    for m in ms:
        assert len(m.mutated.splitlines()) == len(m.original.splitlines()), m.description
        assert apply.compile_error(m) is None, m.description
        text = m.compile_text().splitlines()
        assert text[m.def_line - 1].lstrip().startswith("def "), m.description  # the torch line numbers
        assert not any(s.lstrip().startswith("@") for s in text), m.description  # decorators blanked


def test_enumeration_is_deterministic_and_ids_unique():
    mod = importlib.import_module("torch.fx.experimental.sym_node")
    run = [mutants_of_source(inspect.getsource(mod), mod.__name__, torch_relpath(mod), module=mod) for _ in range(2)]
    assert [m.id for m in run[0]] == [m.id for m in run[1]] and run[0] == run[1]
    assert len({m.id for m in run[0]}) == len(run[0]) > 100
    starts = [m.start_line for m in run[0]]
    assert starts == sorted(starts)  # functions in source order
    for m in run[0]:  # each names a function that exists at run time, at its line
        assert hook.resolve(mod, m.qualname, m.start_line) is not None, m.qualname


def test_sample_is_deterministic_and_stratified():
    ms = mutants_of_source(SOURCE, "m", "m.py")
    strata = {m.operator for m in ms}
    a, b = sample(ms, len(strata), 1), sample(ms, len(strata), 1)
    assert a == b and len(a) == len(strata)
    assert {m.operator for m in a} == strata  # one per stratum when n allows
    assert any(sample(ms, 5, s) != sample(ms, 5, 1) for s in range(2, 12))
    assert sample(ms, 10**6, 0) == ms


# ---- applying a mutant ---------------------------------------------------------------------------
PROBE = """\
import sys
import time
assert "torch" not in sys.modules, "the patch folder imported torch at start-up"
from torch.fx.experimental.symbolic_shapes import is_concrete_int
from torch._functorch._aot_autograd import collect_metadata_analysis as alias
print(is_concrete_int(3), alias.is_concrete_int(3), "chained" if "CHAINED" in sys.modules else "")
"""


def concrete_int_mutant() -> Mutant:
    """is_concrete_int's `return True` for a Python int turned into `return False`."""
    mod = importlib.import_module("torch.fx.experimental.symbolic_shapes")
    fn = mod.is_concrete_int
    ms = [m for m in mutants_of_source(inspect.getsource(mod), mod.__name__, torch_relpath(mod), module=mod)
          if m.qualname == fn.__name__ and m.operator is Operator.OTHER_BRANCH]
    return next(m for m in ms if "`return True` -> `return False`" in m.description)


def run_probe(env: dict) -> str:
    p = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def test_a_patch_folder_changes_torch_and_only_under_it(tmp_path):
    m = concrete_int_mutant()
    patch = apply.write_patch(m, tmp_path / "patch")
    other = tmp_path / "other"  # a sitecustomize that ours shadows: it must still run
    other.mkdir()
    (other / "sitecustomize.py").write_text("import sys\nsys.modules['CHAINED'] = sys\n")
    base = {**os.environ, "PYTHONPATH": str(other)}
    assert run_probe(apply.mutant_env(patch, base)) == ["False", "False", "chained"]
    assert run_probe(apply.clean_env(apply.mutant_env(patch, base))) == ["True", "True", "chained"]


def test_a_mutant_that_does_not_compile_is_broken(tmp_path):
    m = dataclasses.replace(mutants_of_source(SOURCE, "m", "m.py")[0], mutated="def cmp(x:\n    return 1\n")
    t = Triager(TriageSettings(tmp_path, env=dict(os.environ)), {"m.py"})(m)
    assert t.verdict is Verdict.BROKEN and "does not compile" in t.reason
    assert not (tmp_path / "patches").exists()  # decided before any subprocess


def test_reach_reads_the_statement_and_the_node_lines(tmp_path):
    m = next(m for m in mutants_of_source(SOURCE, "m", "m.py") if m.operator is Operator.DROP_CONSTANT)
    triager = Triager(TriageSettings(tmp_path), {"m.py"})
    for lines, reaching in (({m.stmt_line: [3, 1]}, [1, 3]), ({m.line: [2], m.stmt_line: [2]}, [2]),
                            ({m.stmt_line + 1: [4], 1: [5]}, [])):
        triager._lines = {"m.py": lines}
        assert triager.reaching(m) == reaching


def test_detected_needs_exit_1_with_and_0_without_and_a_confirmation_in_budget():
    from mutation.bench import Checked, Mode, ModeResult

    def result(*checked):
        return ModeResult(Mode.AB, 1, 1.0, 3, 1, checked)

    assert result(Checked("s", "ab", 1, 0)).detected
    assert not result(Checked("s", "ab", 1, 1)).detected  # fails without the mutant too: pre-existing
    assert not result(Checked("s", "ab", None, 0)).detected  # timed out under the mutant
    late = result(Checked("s", "ab", 1, 0, late=True))
    assert not late.detected and late.detected_late and late.oracles == []


class ScriptedProbe:
    """probe.Probe's fork, answering from a script of {program: digest} per call."""

    def __init__(self, *runs):
        self.runs, self.calls = list(runs), []

    def fork(self, spec, programs, coverage=False, until=None):
        self.calls.append(list(programs))
        run = self.runs.pop(0)
        if "digests" not in run:
            return run
        out = {}
        for k in programs:  # the child's early stop at the first changed program
            out[str(k)] = run["digests"].get(k, "ref")
            if until is not None and until.get(str(k)) != out[str(k)]:
                break
        return {"digests": out}


REF = {"digests": {str(k): "ref" for k in range(5)}, "noisy": [1]}


def test_probe_counts_a_change_seen_twice_and_skips_noisy_programs():
    from mutation.probe import judge

    probe = ScriptedProbe({"digests": {2: "x"}}, {"digests": {2: "x"}})
    assert judge(probe, REF, {}, [0, 1, 2, 3])["verdict"] == "counted"
    assert probe.calls == [[0, 2, 3], [2]]  # noisy program 1 never runs; the run stops at 2


def test_probe_goes_on_after_a_change_that_does_not_repeat():
    from mutation.probe import judge

    probe = ScriptedProbe({"digests": {2: "x"}}, {"digests": {}}, {"digests": {}})
    answer = judge(probe, REF, {}, [0, 2, 3, 4])
    assert answer["verdict"] == "equivalent-looking" and probe.calls == [[0, 2, 3, 4], [2], [3, 4]]


def test_probe_reports_a_broken_mutant():
    from mutation.probe import judge

    assert judge(ScriptedProbe({"broken": "smoke: boom"}), REF, {}, [0])["verdict"] == "broken"


def test_observable_leaves_expression_text_out_and_keeps_answers():
    from mutation.probe import digest, observed

    from shapefuzz.systems.observation import Decision, Observation, Outcome

    def obs(answer="True", guard="Eq(s0, 2)", status="unsat"):
        from shapefuzz.systems.observation import SmtCheck
        return Observation("make_fx", "default", Outcome("ok"), decisions=(Decision("Eq(s0, 2)", answer, "guard"),),
                           guards=(guard,), smt=(SmtCheck("static-soundness", 0, guard, status),), elapsed_s=1.0)

    same = digest([observed(obs())])
    assert digest([observed(obs(guard="Eq(2, s0)"))]) == same  # the same guard, written otherwise
    assert digest([observed(obs(answer="False"))]) != same  # another decision
    assert digest([observed(obs(status="sat"))]) != same  # z3 now refutes it
    assert digest([observed(obs(status="timeout"))]) == digest([observed(obs(status="unknown"))])


# ---- resuming ------------------------------------------------------------------------------------
def test_the_results_file_resumes(tmp_path):
    path = tmp_path / "r.jsonl"
    store = JsonlStore(path, {"torch_version": "9"})
    store.add({"id": "a", "verdict": "counted"})
    with open(path, "a") as fh:
        fh.write('{"id": "torn')  # a kill mid-write
    again = JsonlStore(path, {"torch_version": "9"})
    assert "a" in again and again.get("a")["verdict"] == "counted" and "torn" not in again
    again.add({"id": "b"})
    assert set(JsonlStore(path, {"torch_version": "9"}).rows) == {"a", "b"}
    assert not JsonlStore(path, {"torch_version": "10"}).rows  # another torch's rows are not ours


def test_rows_of_other_scored_code_are_not_resumed_and_older_rows_are(tmp_path):
    """The scored code's commit is part of a result row's key; rows written before the field
    existed still resume (they were this code's)."""
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "old", "torch_version": "9"}\n')
    JsonlStore(path, {"torch_version": "9", "shapefuzz_commit": "abc"}, since=("shapefuzz_commit",)).add({"id": "a"})
    mine = JsonlStore(path, {"torch_version": "9", "shapefuzz_commit": "abc"}, since=("shapefuzz_commit",))
    other = JsonlStore(path, {"torch_version": "9", "shapefuzz_commit": "def"}, since=("shapefuzz_commit",))
    assert set(mine.rows) == {"old", "a"} and set(other.rows) == {"old"}
    assert set(JsonlStore(path, {"torch_version": "9", "shapefuzz_commit": "abc"}).rows) == {"a"}  # strict


def test_a_rerun_triages_only_what_is_new(tmp_path):
    import mutation_bench

    ms = mutants_of_source(SOURCE, "m", "m.py")[:3]
    seen = []

    class Fake:
        def check_smoke(self):
            pass

        def __call__(self, m):
            seen.append(m.id)
            from mutation.triage import Triage

            return Triage(m.id, Verdict.COUNTED, "fake", 0.0)

    mutation_bench._triage_all(ms[:2], Fake(), JsonlStore(tmp_path / "t.jsonl"))
    mutation_bench._triage_all(ms, Fake(), JsonlStore(tmp_path / "t.jsonl"))
    assert seen == [ms[0].id, ms[1].id, ms[2].id]


# ---- torch's own tests as the anchor -------------------------------------------------------------
TORCH_TEST = """\
from torch.fx.experimental.symbolic_shapes import is_concrete_int


def test_an_int_is_concrete():
    assert is_concrete_int(3)


def test_already_failing():
    assert False
"""


def test_torch_tests_kill_a_mutant_only_by_a_test_that_passes_unmodified(tmp_path):
    """A mutant is killed by a test that passes on the unmodified interpreter and fails under
    it; a test failing already says nothing. Failures are read from pytest's JUnit XML."""
    from mutation.torch_tests import TorchTests

    test_file = tmp_path / "test_probe.py"
    test_file.write_text(TORCH_TEST)
    tests = TorchTests((test_file,), tmp_path / "work", timeout_s=300)
    env = dict(os.environ)
    base = tests.baseline(env)
    assert (base.ran, base.error) == (2, "") and base.failed == {"test_probe::test_already_failing"}
    row = tests.judge(concrete_int_mutant(), env, base)
    assert row["killed"] and row["newly_failed"] == ["test_probe::test_an_int_is_concrete"]
    mod = importlib.import_module("torch.fx.experimental.symbolic_shapes")  # a function no test calls
    unused = next(m for m in mutants_of_source(inspect.getsource(mod), mod.__name__, torch_relpath(mod), module=mod)
                  if m.qualname == "is_concrete_bool" and m.operator is Operator.OTHER_BRANCH)
    quiet = tests.judge(unused, env, base)
    assert (quiet["killed"], quiet["newly_failed"], quiet["ran"], quiet["error"]) == (False, [], 2, "")


def test_the_table_puts_an_earlier_run_beside_this_one():
    from mutation.report import render

    ms = mutants_of_source(SOURCE, "m", "m.py")[:2]
    triage = {m.id: {"verdict": "counted"} for m in ms}

    def row(default: bool, ab: bool) -> dict:
        return {"modes": {"default": {"detected": default, "programs": 100},
                          "ab": {"detected": ab, "programs": 40 if not ab else 90}}}

    meta = {"torch_version": "9", "command": "x", "enumerated": 2, "sampled": 2, "seed": 0, "budget": 90, "workers": 1}
    before = {ms[0].id: row(True, False), ms[1].id: row(False, False)}
    after = {ms[0].id: row(True, True), ms[1].id: row(False, True)}
    text = render(meta, ms, triage, after, before, "before.jsonl")
    assert "- ab: 0/2 (0%) -> 2/2 (100%)" in text and f"gained {ms[0].id}, {ms[1].id}" in text
    assert "- default: 1/2 (50%) -> 1/2 (50%); gained none; lost none" in text
    assert "median programs per whole-budget campaign 40 -> 90 (pairs: 2)" in text
    after[ms[1].id]["modes"]["ab"]["stopped_early"] = True  # its program count is not a budget's
    text = render(meta, ms, triage, after, before, "before.jsonl")
    assert "median programs per whole-budget campaign 40 -> 90 (pairs: 1)" in text
    assert "before -> after" not in render(meta, ms, triage, after)


def _case(out: Path, name: str, signature: str, age_s: float = 5.0, **finding) -> Path:
    """A finished campaign's case folder as corpus.save_case leaves it (case.json last)."""
    d = out / "findings" / name
    d.mkdir(parents=True)
    (d / "repro.py").write_text("raise SystemExit(1)\n")
    case = d / "case.json"
    case.write_text(json.dumps({"kind": "shapefuzz-case", "finding": {"signature": signature, **finding}}))
    t = time.time() - age_s
    os.utime(case, (t, t))
    return d


def test_watch_checks_new_findings_only_and_stops_at_the_first_detection(tmp_path):
    from mutation.watch import Watch

    _case(tmp_path, "a-known", "eager-agreement:trace-error:make_fx:default:K")
    _case(tmp_path, "b-pre", "ab:regression:make_fx:default:x", pre_existing=True)
    _case(tmp_path, "c-slow", "ab:slowdown:export:default")
    _case(tmp_path, "d-fails-both", "truth:wrong-claim:torch-env:default:A")
    _case(tmp_path, "e-young", "ab:weaker-guards:export:default", age_s=0.0)
    exits = {"d-fails-both": (1, 1), "e-young": (1, 0), "f-detects": (1, 0)}
    calls = []

    def check(case):
        calls.append(case.name)
        return exits[case.name]

    w = Watch(tmp_path, check, is_known=lambda sig: sig.endswith(":K"))
    assert w.poll() is None  # the young folder may still be written: left for the next poll
    assert calls == ["d-fails-both"]
    (tmp_path / "findings" / "f-unreadable").mkdir()
    (tmp_path / "findings" / "f-unreadable" / "case.json").write_text("{not json")
    os.utime(tmp_path / "findings" / "e-young" / "case.json", (time.time() - 5, time.time() - 5))
    hit = w.poll()
    assert hit is not None and hit.signature == "ab:weaker-guards:export:default" and hit.oracle == "ab"
    assert calls == ["d-fails-both", "e-young"]  # known, pre-existing and timing ones never run
    assert w.checked(tmp_path / "findings" / "d-fails-both").clean_exit == 1
    assert w.checked(tmp_path / "findings" / "a-known") is None
    assert tmp_path / "findings" / "f-unreadable" not in {p.parent for p in w.seen}


def test_a_campaign_is_stopped_at_its_first_detection_and_its_workers_with_it(tmp_path, monkeypatch):
    from mutation import bench

    out = tmp_path / "camp" / "default"
    pidfile = tmp_path / "child.pid"
    # a "campaign" that saves one finding, starts a worker, and would run for 10 minutes
    script = (f"import json, os, subprocess, sys, time; from pathlib import Path\n"
              f"w = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
              f"Path({str(pidfile)!r}).write_text(str(w.pid))\n"
              f"d = Path({str(out)!r}) / 'findings' / 'x'; d.mkdir(parents=True)\n"
              f"(d / 'repro.py').write_text('')\n"
              f"(d / 'case.json').write_text(json.dumps({{'finding': {{'signature': 'ab:regression:e:d'}}}}))\n"
              f"time.sleep(600)\n")
    monkeypatch.setattr(bench, "_command", lambda mode, out, s: [sys.executable, "-c", script])
    monkeypatch.setattr(bench, "_both_ways", lambda case, env, s: (1, 0))
    monkeypatch.setattr(bench, "POLL_S", 0.2)
    s = bench.BenchSettings(budget_s=60, seed=0, workers=1, env=dict(os.environ))
    t0 = time.monotonic()
    r = bench.run_mode(bench.Mode.DEFAULT, tmp_path / "patch", out, s)
    assert r.stopped_early and r.detected and r.checked[0].signature == "ab:regression:e:d"
    assert time.monotonic() - t0 < 30
    worker = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(worker)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[1].startswith("Z"))


@pytest.mark.parametrize("crashes_without_mutant", [False, True])
def test_a_crashed_campaign_is_a_survivor_only_when_the_setup_works(tmp_path, monkeypatch, crashes_without_mutant):
    """Note [crashed campaign]: a "campaign" that writes no report under the mutant is a
    survivor with its error, unless the same campaign without the mutant gives no report
    either: then the set-up is broken and the bench stops, writing no row."""
    from mutation import bench

    out = tmp_path / "camp" / "ab"
    crash = [sys.executable, "-c", "raise SystemExit('AttributeError: VType has no attribute sort')"]

    def command(mode, where, s):
        if where == out or crashes_without_mutant:
            return crash
        assert mode is bench.Mode.DEFAULT  # A/B without a mutant would refuse to run
        return [sys.executable, "-c", f"from pathlib import Path; p = Path({str(where)!r}); "
                                      f"p.mkdir(parents=True); (p / 'report.json').write_text('{{}}')"]

    monkeypatch.setattr(bench, "_command", command)
    s = bench.BenchSettings(budget_s=60, seed=0, workers=1, env=dict(os.environ))
    if crashes_without_mutant:
        with pytest.raises(bench.BrokenSetup, match="neither does it without the mutant"):
            bench.run_mode(bench.Mode.AB, tmp_path / "patch", out, s)
    else:
        r = bench.run_mode(bench.Mode.AB, tmp_path / "patch", out, s)
        assert not r.detected and r.error.startswith("no report.json") and "VType" in r.error
