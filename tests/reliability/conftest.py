"""Reliability tests: campaigns against planted crashes and hangs, parallel determinism, kill -9
and resume, a shared Redis database. They start real worker processes (torch imported in each),
so they are slow; the test-only op lives in planted_ops.py, found through PYTHONPATH."""

import os
import shutil
import socket
import subprocess
import sys
import time
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


REDIS = shutil.which("redis-server")


@pytest.fixture
def redis_url(tmp_path):
    """(URL, client) of a real redis-server started on a free port for this test (Note [shared
    database]); the test is skipped when redis-server is not installed."""
    if REDIS is None:
        pytest.skip("redis-server is not installed (apt-get install -y redis-server; .ci/run installs it)")
    import redis

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([REDIS, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port)
    deadline = time.monotonic() + 20
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail(f"redis-server did not start on port {port}")
            time.sleep(0.1)
    yield f"redis://127.0.0.1:{port}/0", client
    proc.terminate()
    proc.wait(10)
