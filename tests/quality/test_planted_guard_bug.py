"""A guard bug planted in torch's produce_guards (it forgets the 0/1-specialization lower bound
of every backed size, so a graph compiled for sizes >= 2 is reused for sizes 0 and 1) is found
by a compile campaign through the call-sequence (recompile) oracle, shrunk and confirmed by its
repro.py; the same campaign on unmodified torch does not report it.

The plant is a start-up hook (sitecustomize on PYTHONPATH): the campaign's workers and every
repro.py it runs inherit the environment, exactly as a locally patched torch would be fuzzed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

PLANT = '''
import functools
import sys


def _plant():
    from torch.fx.experimental import symbolic_shapes as ss
    from torch.utils._sympy.value_ranges import ValueRanges

    orig = ss.ShapeEnv.produce_guards_verbose

    @functools.wraps(orig)
    def produce_guards_verbose(self, *args, **kwargs):
        ranges = dict(self.var_to_range)
        for sym, vr in ranges.items():  # planted: forget the 0/1-specialization lower bound
            if str(sym).startswith("s") and vr.lower == 2:
                self.var_to_range[sym] = ValueRanges(0, vr.upper)
        try:
            return orig(self, *args, **kwargs)
        finally:
            self.var_to_range.update(ranges)

    ss.ShapeEnv.produce_guards_verbose = produce_guards_verbose


class _Finder:
    """Plant when symbolic_shapes is first imported (no torch import at start-up)."""

    def find_spec(self, name, path, target=None):
        if name != "torch.fx.experimental.symbolic_shapes":
            return None
        sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(name)
        orig_exec = spec.loader.exec_module

        def exec_module(module):
            orig_exec(module)
            _plant()

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Finder())
'''

SIGNATURE = "recompile:unsound-reuse:compile:default"


#: Fixed numbers of programs (seed 0), not a wall budget, so both runs see the same programs
#: whatever the machine's load: the planted campaign meets the bug at program 4; the clean one
#: runs round 0's first 64 programs (as many as a 100 s budget gave on a loaded machine), which
#: hold that program 4 (seed 0's round 0 is the same until a campaign's first finding).
PLANTED_PROGRAMS, CLEAN_PROGRAMS = 24, 64


def _fuzz(out, n_programs: int, plant_dir=None, *extra):
    env = dict(os.environ)
    if plant_dir is not None:
        env["PYTHONPATH"] = str(plant_dir) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "shapefuzz", "fuzz", "--system", "compile", "--config", "default",
           "--max-examples", str(n_programs), "--budget", "600", "--seed", "0", "--workers", "2",
           "--quiet", "--out", str(out), *extra]
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=1200, env=env)
    return r.returncode, json.loads((out / "report.json").read_text())


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    plant = tmp_path_factory.mktemp("plant")
    (plant / "sitecustomize.py").write_text(textwrap.dedent(PLANT))
    return _fuzz(tmp_path_factory.mktemp("planted"), PLANTED_PROGRAMS, plant, "--shrink-budget", "30")


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    # only which signatures it meets counts (unconfirmed ones too): no repro runs, short shrinks
    return _fuzz(tmp_path_factory.mktemp("clean"), CLEAN_PROGRAMS, None, "--no-confirm",
                 "--shrink-budget", "1")


def test_planted_guard_bug_is_found_by_the_call_sequence_oracle(planted):
    code, report = planted
    assert code == 1
    hits = [f for f in report["findings"] if f["signature"] == SIGNATURE]
    assert hits, [f["signature"] for f in report["findings"] + report["unconfirmed"]]
    assert all(f["confirmed"] for f in hits) and hits[0]["severity"] == "critical"


def test_planted_guard_bug_is_absent_on_unmodified_torch(clean):
    _code, report = clean
    assert report["programs"] >= CLEAN_PROGRAMS, report["programs"]  # the budget did not cut it
    assert SIGNATURE not in {f["signature"] for f in report["findings"] + report["unconfirmed"]}
