"""A/B campaigns through the CLI (shapefuzz/campaign/ab_pool.py, oracles/ab.py, repro/ab.py): the
candidate is this interpreter with planted patches of torch's ShapeEnv loaded by a
sitecustomize.py on PYTHONPATH, the baseline the same interpreter with PYTHONPATH unset: the
issue's command, `PYTHONPATH=PATCHDIR shapefuzz fuzz --baseline-env PYTHONPATH= --budget 90`.

- the baseline being the candidate (same build, no environment difference) or an interpreter
  that cannot import torch: exit 2 with one line;
- five semantic plants in two groups, each group loaded together (three campaigns):
  each is found, classified and blamed on the candidate, and a finding of its class has a
  repro.py that exits 1 with that plant alone and 0 without any patch (both sides the same torch);
- a slowdown plant: a low finding, the candidate's time in the report's speed table, a timed
  repro that exits 1 with the patch and 0 without;
- a baseline slowed by a 50 ms version of that plant, otherwise the candidate, across
  make_fx, export and torch-env: no A/B finding and no improvement (the determinism check), and
  the speed-up in the speed table.

CI time: one campaign per plant took 9 minutes; the semantic plants share three campaigns, and the
two timing campaigns (their checks compare 300 ms and 50 ms sleeps with milliseconds, which load
does not blur) run side by side, each with --config default (one slowdown bucket, not one per
config).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

HEAD = "import sympy, time\nfrom torch.fx.experimental.symbolic_shapes import ShapeEnv\n"
UNBACKED = "any(str(s).startswith('u') for s in getattr(e, 'free_symbols', ()))"
SLOW = """_orig = ShapeEnv.__init__
def _slow(self, *a, **k):
    time.sleep({})
    _orig(self, *a, **k)
ShapeEnv.__init__ = _slow
"""
PATCHES = {
    # a fast path that claims too much: an undecided equality over unbacked symbols is False
    # (the lru_cache's cache_clear kept: torch clears it when it learns a fact)
    "claims-too-much": HEAD + f"""_orig = ShapeEnv._maybe_evaluate_static
def _fast(self, e, *a, **k):
    r = _orig(self, e, *a, **k)
    return sympy.false if r is None and isinstance(e, sympy.Eq) and {UNBACKED} else r
_fast.cache_clear = _orig.cache_clear
ShapeEnv._maybe_evaluate_static = _fast
""",
    # lost precision: guard_or_false / guard_or_true give up at once on unbacked symbols
    "gives-up": HEAD + f"""_orig = ShapeEnv._evaluate_expr
def _lossy(self, e, hint=None, fx_node=None, size_oblivious=False, fallback_value=None, **k):
    if fallback_value is not None and {UNBACKED}:
        return sympy.true if fallback_value else sympy.false
    return _orig(self, e, hint, fx_node, size_oblivious, fallback_value, **k)
ShapeEnv._evaluate_expr = _lossy
""",
    # a dropped guard: an ordering decided on backed sizes is neither recorded as a guard nor
    # used to refine the symbols' ranges. (Dropping the guard alone loses nothing on a guard over
    # one symbol: the refined range says the same, and produce_guards checks ranges.)
    "drops-guards": HEAD + """_orig, _refine = ShapeEnv._evaluate_expr, ShapeEnv._refine_ranges
def _ordering(e):
    return isinstance(e, sympy.Rel) and not isinstance(e, (sympy.Eq, sympy.Ne))
def _drop(self, *a, **k):
    n, self._planted_eval = len(self.guards), True
    try:
        r = _orig(self, *a, **k)
    finally:
        self._planted_eval = False
    if len(self.guards) > n and _ordering(self.guards[-1].expr):
        del self.guards[n:]
    return r
def _no_refine(self, e):
    return None if getattr(self, "_planted_eval", False) and _ordering(e) else _refine(self, e)
ShapeEnv._evaluate_expr, ShapeEnv._refine_ranges = _drop, _no_refine
""",
    # a cache that is never invalidated: the version counter the _lru_cache'd queries
    # (_maybe_evaluate_static, simplify, replace ...) compare against never moves, so an answer
    # given before a fact was learned (a range, a replacement) is returned after it too
    "never-invalidated": HEAD + """ShapeEnv._update_version_counter = lambda self: None
""",
    # a simplification that loses a term: the constant of every sum simplify returns is dropped
    # (u0 + 1 becomes u0), so static evaluation decides, and guards say, something else
    "loses-a-term": HEAD + """_orig = ShapeEnv.simplify
def _is_shifted(e):
    return isinstance(e, sympy.Add) and len(e.args) >= 2 and e.args[0].is_Integer
def _lossy(self, expr, *a, **k):
    r = _orig(self, expr, *a, **k)
    return r.replace(_is_shifted, lambda e: sympy.Add(*e.args[1:])) if isinstance(r, sympy.Basic) else r
_lossy.cache_clear = _orig.cache_clear
ShapeEnv.simplify = _lossy
""",
    # a slowdown: every ShapeEnv pays 300 ms to be created (a torch-env job's timed trace creates
    # one, over the slowdown oracle's 0.2 s; make_fx and export one per trace and replay)
    "slow": HEAD + SLOW.format(0.3),
    # the same, 50 ms: a baseline slower everywhere that still runs a few dozen programs in 90 s
    "a-bit-slow": HEAD + SLOW.format(0.05),
}


#: the class each semantic plant's differences get (Note [A/B oracle]) and its severities
SEMANTIC = {"claims-too-much": "regression", "gives-up": "lost-precision", "drops-guards": "weaker-guards",
            "never-invalidated": "lost-precision", "loses-a-term": "regression"}
#: the plants loaded together in one PATCHDIR, and the campaigns each group runs. Two groups: a
#: group shares a class only once (two regressions or two lost precisions from plants loaded
#: together hid one of them: the term-losing simplify broke the programs the over-claiming fast
#: path would have been met on). The second group's campaign, torch-env seed 1, met both its
#: plants within 90 s at load 4-5 (first at 29-44 s), alone and together.
GROUPS = {"A": (("claims-too-much", "gives-up", "drops-guards"), ("questions", "tensors")),
          "B": (("never-invalidated", "loses-a-term"), ("questions",))}
GROUP_OF = {p: g for g, (plants, _) in GROUPS.items() for p in plants}
SEVERITY = {"regression": {"critical"}, "lost-precision": {"medium"}, "weaker-guards": {"high", "critical"}}
#: the issue's command. The semantic campaigns' seeds and targets are part of the case: the
#: plants show on few programs (on question programs seed 1's first weaker-guards program is
#: about the 220th, the generator rarely orders two backed sizes; a lost precision about the
#: 70th, while make_fx meets it within 20 tensor programs), so two campaigns side by side, one
#: config each (not torch-env's 16 job pairs a program) and short shrinks
DOC = ("--baseline-env", "PYTHONPATH=", "--budget", "90")
SEMANTIC_ARGS = {"questions": ("--system", "torch-env", "--config", "default", "--seed", "1", "--shrink-budget", "5"),
                 "tensors": ("--system", "make_fx", "--config", "default", "--seed", "2", "--shrink-budget", "5")}


def patch_dir(root: Path, *names: str) -> str:
    """A PYTHONPATH folder whose sitecustomize.py loads the named plants (one module each, so
    their globals stay apart)."""
    d = root / "+".join(names)
    d.mkdir(exist_ok=True)
    for n in names:
        (d / f"plant_{n.replace('-', '_')}.py").write_text(PATCHES[n])
    (d / "sitecustomize.py").write_text("".join(f"import plant_{n.replace('-', '_')}\n" for n in names))
    return str(d)


def env_with(pythonpath: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


def start(out: Path, env: dict, *args: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "shapefuzz", "fuzz", "--workers", "1", "--quiet", "--out", str(out), *args]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(p: subprocess.Popen, timeout: float = 600) -> subprocess.CompletedProcess:
    out, err = p.communicate(timeout=timeout)
    assert "Traceback" not in out + err, out + err
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def fuzz(out: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return finish(start(out, env, *args))


def report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


def ab_rows(out: Path) -> list[dict]:
    rep = report(out)
    return [f for f in rep["findings"] + rep["unconfirmed"] if f["oracle"] == "ab"]


def repro_exit(case_dir: str, env: dict) -> int:
    return subprocess.run([sys.executable, str(Path(case_dir) / "repro.py")], env=env,
                          capture_output=True, text=True, timeout=600).returncode


# ---- bad baselines ------------------------------------------------------------------------------
def test_the_same_build_without_an_environment_difference_exits_2(tmp_path):
    r = fuzz(tmp_path / "out", env_with(None), "--baseline-env", "PYTHONPATH=", "--budget", "30")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "the baseline is the candidate" in r.stderr


def test_a_baseline_that_cannot_import_torch_exits_2(tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n")
    fake.chmod(0o755)
    r = fuzz(tmp_path / "out", env_with(None), "--baseline-python", str(fake), "--budget", "30")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "cannot import torch" in r.stderr and "No module named 'torch'" in r.stderr


# ---- the semantic plants: three campaigns ------------------------------------------------------
@pytest.fixture(scope="module")
def semantic(tmp_path_factory) -> dict[str, list[Path]]:
    """Each group's campaigns, the group's plants loaded together (one PATCHDIR, as a user's
    patch), all campaigns one after the other: side by side on two cores, four workers and two
    probes left each wall budget about half its programs, and the lost-precision plant went
    unmet at load 5-6."""
    root = tmp_path_factory.mktemp("ab-semantic")
    outs: dict[str, list[Path]] = {}
    for g, (plants, campaigns) in GROUPS.items():
        env = env_with(patch_dir(root, *plants))
        for k in campaigns:
            fuzz(root / f"{g}-{k}", env, *SEMANTIC_ARGS[k], *DOC)
        outs[g] = [root / f"{g}-{k}" for k in campaigns]
    return outs


def _of_class(outs: list[Path], kind: str) -> list[dict]:
    return [f for out in outs for f in ab_rows(out) if f["kind"] == kind]


@pytest.mark.parametrize("plant", list(SEMANTIC))
def test_a_semantic_plant_is_found_classified_and_blamed_on_the_candidate(semantic, plant):
    outs = semantic[GROUP_OF[plant]]
    found = _of_class(outs, SEMANTIC[plant])
    assert found, sorted({f["signature"] for out in outs for f in ab_rows(out)})
    assert all(f["severity"] in SEVERITY[SEMANTIC[plant]] for f in found)
    assert all(f["system"] in ("torch-env", "make_fx") for f in found)  # the candidate's, never "@baseline"
    assert any(f["shrunk"] for f in found)


@pytest.mark.parametrize("plant", list(SEMANTIC))
def test_its_repro_exits_1_with_that_plant_alone_and_0_without(semantic, plant, tmp_path):
    # the class is the plant's: some finding of it reproduces with this plant alone (the first
    # few are tried; a regression may also come from another plant's unguarded claim)
    alone = env_with(patch_dir(tmp_path, plant))
    found = _of_class(semantic[GROUP_OF[plant]], SEMANTIC[plant])
    mine = next((f for f in found[:3] if repro_exit(f["case_dir"], alone) == 1), None)
    assert mine is not None, [f["signature"] for f in found]
    assert repro_exit(mine["case_dir"], env_with(None)) == 0  # both sides the same torch


# ---- speed: a slower candidate and a slower baseline, side by side ------------------------------
@pytest.fixture(scope="module")
def timing(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("ab-timing")
    slow, a_bit = patch_dir(root, "slow"), patch_dir(root, "a-bit-slow")
    runs = {"slower": (env_with(slow), ("--system", "torch-env", "--config", "default", *DOC, "--seed", "2")),
            "faster": (env_with(None), ("--system", "torch-env", "--system", "make_fx", "--system", "export",
                                        "--config", "default", "--baseline-env", f"PYTHONPATH={a_bit}",
                                        "--budget", "90", "--seed", "3"))}
    procs = {k: start(root / k, env, *args) for k, (env, args) in runs.items()}
    for p in procs.values():
        finish(p)
    return {k: root / k for k in runs} | {"plant": Path(slow)}


def test_a_planted_slowdown_is_a_low_finding_and_shows_in_the_speed_table(timing):
    out = timing["slower"]
    slow = [f for f in ab_rows(out) if f["kind"] == "slowdown"]
    assert slow and all(f["severity"] == "low" and f["system"] == "torch-env" for f in slow)
    speed = report(out)["ab"]["speed"]["torch-env"]
    assert speed["candidate_s"] > 2 * speed["baseline_s"] and speed["median_ratio"] > 2 and speed["slower_2x"]
    assert "ab-speed" in (out / "report.html").read_text()
    assert repro_exit(slow[0]["case_dir"], env_with(str(timing["plant"]))) == 1  # timed: both sides
    assert repro_exit(slow[0]["case_dir"], env_with(None)) == 0


def test_a_baseline_that_differs_only_in_speed_gives_a_speedup_and_no_finding(timing):
    out = timing["faster"]
    rep = report(out)
    assert ab_rows(out) == [], [f["signature"] for f in ab_rows(out)]
    assert rep["ab"]["improvements"] == {} and rep["ab"]["programs"] >= 20
    assert set(rep["outcomes"]) >= {"torch-env@baseline", "make_fx@baseline", "export@baseline"}
    for system in ("torch-env", "make_fx", "export"):
        speed = rep["ab"]["speed"][system]
        # each baseline observation slept 50 ms at least once
        assert speed["baseline_s"] - speed["candidate_s"] > 0.04 * speed["n"] and speed["median_speedup"] > 1, \
            (system, speed)
    assert "median speedup" in (out / "report.md").read_text() and "ab-speed" in (out / "report.html").read_text()
