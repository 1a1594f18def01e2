"""Note [private names in scripts] (shapefuzz/repro/common.py): a repro.py run on a torch that
moved a private name it uses exits 2 with one line naming it, never a traceback of its own
(which would read as the bug: exit 1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from shapefuzz.cases.corpus import load_case
from shapefuzz.repro import repro_source
from shapefuzz.repro.common import private_names

CORPUS = Path(__file__).resolve().parents[2] / "corpus"

#: corpus case -> (the private name its repro.py uses, the sitecustomize line that removes it)
STRIPPED = {
    "planted-flip-equality-export": (
        "torch.fx.experimental._config.inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY",
        "import torch.fx.experimental._config as c\n"
        "del c._config['inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY']\n"),
    "zero-size-backed-positive-torch-env": (
        "torch.fx.experimental.symbolic_shapes.ShapeEnv._maybe_evaluate_static",
        "from torch.fx.experimental import symbolic_shapes as ss\n"
        "del ss.ShapeEnv._maybe_evaluate_static\n"),
}


@pytest.mark.parametrize("name", sorted(STRIPPED))
def test_a_repro_on_a_torch_without_its_private_name_exits_2_with_one_line(name, tmp_path):
    gone, strip = STRIPPED[name]
    src = repro_source(load_case(CORPUS / name))
    assert gone in private_names([], src)
    (tmp_path / "repro.py").write_text(src)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(strip)  # the torch a user has: the name moved away
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 2, r.stdout[-3000:] + r.stderr[-3000:]
    assert "Traceback" not in r.stderr, r.stderr
    (line,) = r.stdout.splitlines()  # one line, naming what this torch lacks
    assert line.startswith(f"repro.py: this torch ({_version()}) lacks a name it uses (") and \
        line.endswith("; the repro cannot run here") and gone.rsplit(".", 1)[1] in line, line


def _version() -> str:
    import torch

    return torch.__version__


def test_a_repro_of_public_names_only_has_no_check():
    src = repro_source(load_case(CORPUS / "canonicalize-booleantrue-narrow-export"))
    assert "pkgutil" not in src and "cannot run here" not in src


def test_private_names_are_read_from_imports_chains_shape_env_methods_and_slow_paths():
    code = ("se = ShapeEnv()\nse._maybe_evaluate_static(x)\nse.guards\nss._static_eval_sym_bool = 1\n"
            "torch.fx.experimental._config.backed_size_oblivious = True\ntorch._check(x)\n"
            "with applied('slow:no-hint'):\n    pass\nFX_CONFIG = {'use_duck_shape': False}\n")
    names = private_names(["import torch", "from torch.fx.experimental import symbolic_shapes as ss",
                           "from torch.fx.experimental.symbolic_shapes import ShapeEnv",
                           "from torch.export import export"], code)
    assert len(names) == len(set(names)) and set(names) == {
        "torch.fx.experimental.symbolic_shapes.ShapeEnv._maybe_evaluate_static",
        "torch.fx.experimental.symbolic_shapes._static_eval_sym_bool",
        "torch.fx.experimental._config.backed_size_oblivious",
        "torch.fx.experimental.sym_node._NO_HINT",
        "torch.fx.experimental._config.use_duck_shape"}  # not se.guards, not torch._check
