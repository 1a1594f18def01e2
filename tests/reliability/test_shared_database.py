"""Note [shared database]: campaigns on several machines share shrunk findings through Hypothesis's
Redis example database. Campaign A finds and shrinks bugs and saves them to a real redis-server
started here; campaign B (another seed, a budget too small to generate a single program) replays
them from Redis at start-up and reports A's findings without generating anything itself."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # the redis_url fixture (conftest.py) skips when redis-server is absent

ARGS = ["--system", "make_fx", "--family", "planted", "--family", "pointwise", "--max-ops", "3",
        "--plugin", "planted_ops", "--no-confirm", "--quiet", "--shrink-budget", "5", "--workers", "1"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fuzz(args, env, out):
    r = subprocess.run([sys.executable, "-m", "shapefuzz", "fuzz", *args, "--out", str(out)],
                       env=env, capture_output=True, text=True, timeout=900)
    return r.returncode, r.stdout + r.stderr


def test_campaigns_share_findings_through_redis(redis_url, tmp_path, cli_env):
    url, client = redis_url
    env = {**cli_env, "PLANTED_ACTIONS": "wrong"}
    rc, log = fuzz([*ARGS, "--database", url, "--seed", "7", "--max-examples", "8", "--budget", "600"],
                   env, tmp_path / "a")
    assert rc == 1 and "Traceback" not in log, log
    a = json.loads((tmp_path / "a" / "report.json").read_text())
    shrunk = {f["signature"] for f in a["findings"] if f["shrunk"]}
    assert shrunk, a["findings"]
    keys = client.keys(b"shapefuzz-example:*")
    assert keys, "campaign A saved nothing to Redis"

    rc, log = fuzz([*ARGS, "--database", url, "--seed", "99", "--max-examples", "8", "--budget",
                    "0.001"], env, tmp_path / "b")
    assert rc == 1 and "Traceback" not in log, log
    b = json.loads((tmp_path / "b" / "report.json").read_text())
    assert b["programs"] == 0  # B generated nothing: what it reports came from Redis
    assert b["db_replays"] >= 1
    assert shrunk & {f["signature"] for f in b["findings"]}, (shrunk, b["findings"])
    assert client.keys(b"shapefuzz-example:*")  # B kept the still-failing examples


def test_unreachable_database_is_bad_input(tmp_path, cli_env):
    rc, log = fuzz([*ARGS, "--database", f"redis://127.0.0.1:{_free_port()}", "--max-examples", "1"],
                   cli_env, tmp_path / "c")
    assert rc == 2, log
    assert "cannot reach Redis" in log and "Traceback" not in log
    assert len(log.strip().splitlines()) == 1
