"""Note [fleet report]: two real campaigns share a real redis-server (Note [shared database]), as
two machines of one fleet do, and `shapefuzz report --merge` makes one report of them: its
counters are the sums of the two reports and a finding both met is listed once, with both
campaigns. The planted op (`--plugin planted_ops`, PLANTED_ACTIONS=wrong) gives each campaign a
finding in a few programs; --no-confirm and --max-examples keep each campaign under a minute."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

ARGS = ["--system", "make_fx", "--family", "planted", "--family", "pointwise", "--max-ops", "3",
        "--plugin", "planted_ops", "--no-confirm", "--quiet", "--shrink-budget", "5", "--workers", "1",
        "--max-examples", "8", "--budget", "120"]


def _shapefuzz(args, env, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shapefuzz", *map(str, args)], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_two_campaigns_sharing_redis_merge_into_one_report(redis_url, tmp_path, cli_env):
    url, _ = redis_url
    env = {**cli_env, "PLANTED_ACTIONS": "wrong"}
    for seed in (1, 2):  # one after the other: the second replays what the first saved
        r = _shapefuzz(["fuzz", *ARGS, "--database", url, "--seed", seed, "--out", f"run-{seed}"], env, tmp_path)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stdout + r.stderr
    a, b = (json.loads((tmp_path / f"run-{s}" / "report.json").read_text()) for s in (1, 2))
    assert b["db_replays"] >= 1

    r = _shapefuzz(["report", "--merge", "run-1", "run-2", "--out", "fleet"], env, tmp_path)
    assert r.returncode == 0 and not r.stderr, r.stderr
    m = json.loads((tmp_path / "fleet" / "report.json").read_text())
    for key in ("programs", "valid_programs", "elapsed_s", "campaign_s", "shrink_runs", "db_replays"):
        assert m[key] == pytest.approx(a[key] + b[key]), key
    cpu = [d["time_split"]["cpu_s"]["total"] for d in (a, b)]
    assert m["time_split"]["cpu_s"]["total"] == pytest.approx(sum(cpu))
    ok = [d["outcomes"]["make_fx"]["default"].get("ok", 0) for d in (a, b)]
    assert m["outcomes"]["make_fx"]["default"].get("ok", 0) == sum(ok)
    assert [(c["folder"], c["seed"]) for c in m["campaigns"]] == [("run-1", 1), ("run-2", 2)]

    sigs = [f["signature"] for f in m["findings"]]
    assert len(sigs) == len(set(sigs))
    assert set(sigs) == {f["signature"] for d in (a, b) for f in d["findings"]}
    both = {f["signature"] for f in a["findings"]} & {f["signature"] for f in b["findings"]}
    assert both, (a["findings"], b["findings"])
    for f in m["findings"]:
        if f["signature"] in both:
            assert f["campaigns"] == ["run-1", "run-2"]
            assert f["count"] == sum(g["count"] for d in (a, b) for g in d["findings"]
                                     if g["signature"] == f["signature"])
            assert (tmp_path / f["case_dir"] / "repro.py").is_file()  # the original case folder
    md = (tmp_path / "fleet" / "report.md").read_text()
    assert md.startswith("# shapefuzz fleet report (2 campaigns merged)")
    assert all(md.split("## Findings")[1].count(f"signature `{s}`") == 1 for s in both)
