"""Reliability tests: campaigns against planted crashes and hangs, parallel determinism, kill -9
and resume, a shared Redis database. They start real worker processes (torch imported in each),
so they are slow; the test-only op lives in planted_ops.py, found through PYTHONPATH."""

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # spawned workers inherit sys.path: they can import planted_ops


@pytest.fixture
def cli_env():
    """The environment for a `shapefuzz` subprocess that may load the planted op."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), str(ROOT), env.get("PYTHONPATH")]))
    return env
