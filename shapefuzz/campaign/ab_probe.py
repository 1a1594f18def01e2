"""Probing both sides of an A/B campaign (Note [A/B workers] in ab_pool.py): which torch build each
interpreter imports, and whether the baseline is usable and another build than the candidate."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Mapping

import shapefuzz
from shapefuzz import BadInput
from shapefuzz.repro.ab import SOURCE_ROOT, Baseline

__all__ = ["SHAPE_FILES", "build_info", "check_baseline", "probe", "start_probe"]

#: files whose hashes tell two torch builds apart (the shape system and what it leans on)
SHAPE_FILES = ("fx/experimental/symbolic_shapes.py", "fx/experimental/sym_node.py",
               "fx/experimental/_config.py", "fx/experimental/recording.py",
               "utils/_sympy/functions.py", "utils/_sympy/value_ranges.py", "utils/_sympy/solve.py",
               "_subclasses/fake_tensor.py", "_subclasses/fake_impls.py", "_meta_registrations.py",
               "fx/passes/runtime_assert.py")

def build_info() -> dict:
    """This process's torch: version, file, hashes of SHAPE_FILES; and shapefuzz's folder."""
    import torch

    root = os.path.dirname(torch.__file__)

    def digest(p: str) -> str:
        try:
            with open(os.path.join(root, p), "rb") as fh:
                return hashlib.sha256(fh.read()).hexdigest()[:16]
        except OSError:
            return ""

    return {"torch": torch.__version__, "torch_file": torch.__file__,
            "shapefuzz": os.path.dirname(os.path.abspath(shapefuzz.__file__)),
            "python": sys.version.split()[0], "hashes": {p: digest(p) for p in SHAPE_FILES},
            "tree": _tree_digest(root)}


def _tree_digest(root: str) -> str:
    """Sizes and mtimes of every .py under torch/: an edit anywhere in a source build shows
    (Note [baseline cache]); 30-60 ms."""
    h = hashlib.sha256()
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        for n in sorted(files):
            if n.endswith(".py"):
                try:
                    st = os.stat(os.path.join(dirpath, n))
                except OSError:
                    continue
                h.update(f"{dirpath[len(root):]}/{n}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


_PROBE = ("import json, sys; sys.path.insert(0, {root!r}); "
          "from shapefuzz.campaign.ab_probe import build_info; print(json.dumps(build_info()))")


def probe(python: str, env: Mapping[str, str], timeout_s: float = 300.0) -> dict:
    """build_info() of `python` under `env`. Raises BadInput (one line) when it cannot
    import torch or shapefuzz."""
    return _probe_result(start_probe(python, env), python, timeout_s)


def start_probe(python: str, env: Mapping[str, str]) -> subprocess.Popen:
    try:
        return subprocess.Popen([python, "-c", _PROBE.format(root=SOURCE_ROOT)], env=dict(env),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL)
    except OSError as e:
        raise BadInput(f"--baseline-python {python}: cannot run it ({type(e).__name__}: {e})") from None


def _probe_result(p: subprocess.Popen, python: str, timeout_s: float) -> dict:
    try:
        out, err = p.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        p.kill()
        p.communicate()
        raise BadInput(f"--baseline-python {python}: cannot run it ({type(e).__name__}: {e})") from None
    if p.returncode != 0:
        last = (err.strip().splitlines() or ["no output"])[-1][:200]
        raise BadInput(f"the baseline ({python}) cannot import torch and shapefuzz ({last}); "
                       f"check `{python} -c 'import torch'` under the baseline environment")
    return json.loads(out.strip().splitlines()[-1])


def check_baseline(baseline: Baseline, timeout_s: float = 300.0,
                   started: subprocess.Popen | None = None) -> tuple[dict, dict]:
    """(candidate probe, baseline probe); BadInput when the baseline is unusable or is the
    candidate itself: the same torch build with no environment difference. `started`: the
    baseline's probe, already running (start_probe)."""
    env = baseline.environ(os.environ)
    started = started or start_probe(baseline.python, env)  # its torch import overlaps ours
    cand = build_info()
    base = _probe_result(started, baseline.python, timeout_s)
    if base["shapefuzz"] != cand["shapefuzz"]:
        raise BadInput(f"the baseline imports shapefuzz from {base['shapefuzz']}, not from "
                       f"{cand['shapefuzz']}; remove that copy from its environment")
    same = (base["torch"], base["hashes"]) == (cand["torch"], cand["hashes"])
    if same and env == dict(os.environ):
        raise BadInput(f"the baseline is the candidate: torch {base['torch']} with the same "
                       "symbolic_shapes.py and friends and no environment difference; give "
                       "--baseline-python another interpreter or --baseline-env KEY=VALUE")
    return cand, base
