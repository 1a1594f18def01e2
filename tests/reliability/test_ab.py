"""A/B campaigns through the CLI (shapefuzz/campaign/ab.py, oracles/ab.py, repro/ab.py): the
candidate is this interpreter with a planted patch of torch's ShapeEnv loaded by a
sitecustomize.py on PYTHONPATH, the baseline the same interpreter with PYTHONPATH unset.

- the baseline being the candidate (same build, no environment difference) or an interpreter
  that cannot import torch: exit 2 with one line;
- each planted patch is found, classified and blamed on the candidate, and the A/B finding's
  repro.py exits 1 with the patch and 0 without it (then both sides are the same torch);
- identical behaviour (the environment differs only by an unrelated variable): no A/B finding
  and no improvement over a few hundred programs;
- a baseline made slower: a speed-up in the report's speed table and no finding.
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
PATCHES = {
    # a fast path that claims too much: an undecided equality over unbacked symbols is False
    "claims-too-much": HEAD + f"""_orig = ShapeEnv._maybe_evaluate_static
def _fast(self, e, *a, **k):
    r = _orig(self, e, *a, **k)
    return sympy.false if r is None and isinstance(e, sympy.Eq) and {UNBACKED} else r
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
    # a dropped guard: orderings decided on backed sizes are not recorded
    "drops-guards": HEAD + """_orig = ShapeEnv._evaluate_expr
def _drop(self, *a, **k):
    n = len(self.guards)
    r = _orig(self, *a, **k)
    if len(self.guards) > n and not isinstance(self.guards[-1].expr, (sympy.Eq, sympy.Ne)):
        del self.guards[n:]
    return r
ShapeEnv._evaluate_expr = _drop
""",
    # a slowdown: every evaluate_expr pays 40 ms
    "slow": HEAD + """_orig = ShapeEnv.evaluate_expr
def _slow(self, *a, **k):
    time.sleep(0.04)
    return _orig(self, *a, **k)
ShapeEnv.evaluate_expr = _slow
""",
}


def patch_dir(tmp_path: Path, name: str) -> str:
    d = tmp_path / name
    d.mkdir()
    (d / "sitecustomize.py").write_text(PATCHES[name])
    return str(d)


def env_with(pythonpath: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


def fuzz(out: Path, env: dict, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "shapefuzz", "fuzz", "--workers", "1", "--quiet", "--out", str(out), *args]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in r.stdout + r.stderr, r.stdout + r.stderr
    return r


def ab_rows(out: Path) -> list[dict]:
    rep = json.loads((out / "report.json").read_text())
    return [f for f in rep["findings"] + rep["unconfirmed"] if f["oracle"] == "ab"]


def repro_exit(case_dir: str, env: dict) -> int:
    return subprocess.run([sys.executable, str(Path(case_dir) / "repro.py")], env=env,
                          capture_output=True, text=True, timeout=600).returncode


QUESTIONS = ["--system", "torch-env", "--config", "default", "--shrink-budget", "10", "--no-confirm"]


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


# ---- planted patches ----------------------------------------------------------------------------
# The seed is part of the case: since the question generator of issue 13, seed 1's 120 s campaign
# (2162 programs) never meets the gives-up plant while seed 2's (2354) meets it in five buckets.
@pytest.mark.parametrize(("patch", "kinds", "seed"), [
    ("claims-too-much", {"regression"}, "1"),
    ("gives-up", {"lost-precision"}, "2"),
    ("drops-guards", {"weaker-guards"}, "1"),
])
def test_a_planted_patch_is_found_classified_and_reproduced(tmp_path, patch, kinds, seed):
    d = patch_dir(tmp_path, patch)
    out = tmp_path / "out"
    fuzz(out, env_with(d), *QUESTIONS, "--baseline-env", "PYTHONPATH=", "--budget", "120", "--seed", seed)
    rows = ab_rows(out)
    found = [f for f in rows if f["kind"] in kinds]
    assert found, [f["signature"] for f in rows]
    f = found[0]
    assert f["system"] == "torch-env" and f["shrunk"]
    assert {"regression": "critical", "lost-precision": "medium"}.get(f["kind"], f["severity"]) == f["severity"]
    assert repro_exit(f["case_dir"], env_with(d)) == 1  # with the patch: the sides differ
    assert repro_exit(f["case_dir"], env_with(None)) == 0  # without it both are the same torch


def test_a_planted_slowdown_is_a_low_finding_and_shows_in_the_speed_table(tmp_path):
    d = patch_dir(tmp_path, "slow")
    out = tmp_path / "out"
    fuzz(out, env_with(d), *QUESTIONS, "--baseline-env", "PYTHONPATH=", "--budget", "120", "--seed", "2")
    assert any(f["kind"] == "slowdown" and f["severity"] == "low" for f in ab_rows(out))
    speed = json.loads((out / "report.json").read_text())["ab"]["speed"]["torch-env"]
    # most question programs never reach evaluate_expr (their answers are static): the slow tail
    assert speed["candidate_s"] > 2 * speed["baseline_s"] and speed["p90_ratio"] > 2 and speed["slower_2x"]
    assert "ab-speed" in (out / "report.html").read_text()


# ---- identical behaviour ------------------------------------------------------------------------
def test_identical_builds_that_differ_only_in_environment_stay_quiet(tmp_path):
    out = tmp_path / "out"
    fuzz(out, env_with(None), "--system", "torch-env", "--system", "make_fx", "--system", "export",
         "--baseline-env", "SHAPEFUZZ_AB_UNRELATED=1", "--max-examples", "250", "--budget", "400",
         "--seed", "3", "--shrink-budget", "10")
    rep = json.loads((out / "report.json").read_text())
    confirmed = [f["signature"] for f in rep["findings"] if f["oracle"] == "ab"]
    assert confirmed == [], confirmed
    # a timing difference may be flagged on a loaded machine, never confirmed; nothing else may
    assert {f["kind"] for f in ab_rows(out)} <= {"slowdown"}, [f["signature"] for f in ab_rows(out)]
    assert rep["ab"]["improvements"] == {} and rep["ab"]["programs"] >= 100
    assert set(rep["outcomes"]) >= {"torch-env", "torch-env@baseline", "make_fx@baseline"}


def test_a_slower_baseline_is_a_speedup_and_no_finding(tmp_path):
    d = patch_dir(tmp_path, "slow")
    out = tmp_path / "out"
    fuzz(out, env_with(None), *QUESTIONS, "--baseline-env", f"PYTHONPATH={d}", "--budget", "90", "--seed", "4")
    assert ab_rows(out) == []
    rep = json.loads((out / "report.json").read_text())
    speed = rep["ab"]["speed"]["torch-env"]
    assert speed["baseline_s"] > 2 * speed["candidate_s"] and speed["p10_ratio"] < 0.5
    assert "median speedup" in (out / "report.md").read_text()
