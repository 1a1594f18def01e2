"""`shapefuzz fuzz --out` of a finished campaign is refused unless --force; `shapefuzz systems`
says what each config switches; `known check` reports which known issues still reproduce."""

from __future__ import annotations

import json

import pytest
from _helpers import cli_exit

from shapefuzz.cases.corpus import STATE_FILE, clear_campaign, finished_campaign


def _finished(out):
    (out / "findings" / "old-case").mkdir(parents=True)
    (out / "report.json").write_text("{}")
    (out / STATE_FILE).write_text(json.dumps({"finished": True}))


def test_a_finished_campaign_out_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    _finished(out)
    assert finished_campaign(out)
    assert cli_exit("fuzz", "--out", str(out), "--budget", "5", "--workers", "1") == 2
    err = capsys.readouterr().err
    assert "holds a finished campaign" in err and "--force" in err and err.count("\n") == 1
    assert (out / "findings" / "old-case").is_dir()  # nothing touched


def test_force_clears_the_old_campaign_and_an_unfinished_one_resumes(tmp_path):
    out = tmp_path / "out"
    _finished(out)
    clear_campaign(out)
    assert not (out / "findings").exists() and not (out / "report.json").exists()
    (out / STATE_FILE).write_text(json.dumps({"finished": False}))
    assert not finished_campaign(out)  # resumable: run_fuzz resumes it (Note [resume])
    assert not finished_campaign(tmp_path / "fresh")


def test_systems_describes_every_config(capsys):
    from shapefuzz.systems import CONFIGS, DEFAULT_CONFIGS

    assert cli_exit("systems") == 0
    text = capsys.readouterr().out
    assert "compile (runs by default: " + ", ".join(DEFAULT_CONFIGS["compile"]) + ")" in text
    lines = [x for x in text.splitlines() if x.startswith("  ")]
    assert len(lines) >= sum(len(c) for c in CONFIGS.values())
    assert all(len(x.split(None, 1)) == 2 for x in lines)  # a name and what it switches
    assert any(x.split()[0] == "no-duck-shape" and "use_duck_shape=False" in x for x in lines)


def test_known_check_says_which_entries_reproduce(tmp_path, capsys):
    case = tmp_path / "corpus" / "gone"
    case.mkdir(parents=True)
    (case / "repro.py").write_text("raise SystemExit(0)\n")  # fixed: exits 0
    (tmp_path / "corpus" / "here").mkdir()
    (tmp_path / "corpus" / "here" / "repro.py").write_text("raise SystemExit(1)\n")
    known = tmp_path / "k.json"
    known.write_text(json.dumps({"schema": 2, "issues": [
        {"signature": "a:b", "upstream": "pytorch/pytorch#1", "case": "corpus/gone", "note": "n"},
        {"signature": "c:d", "case": "corpus/here", "note": "n"}]}))
    from shapefuzz.cases.known import check_known, load_entries

    entries = [e for e in load_entries((str(known),)) if e.signature in ("a:b", "c:d")]
    import subprocess
    import sys

    verdicts = {c.entry.signature: c.status for c in check_known(
        entries, tmp_path, lambda p: subprocess.run([sys.executable, str(p)]).returncode, "2.13.0")}
    assert verdicts == {"a:b": "fixed here", "c:d": "reproduces"}


@pytest.mark.parametrize("bad", ["{", '{"issues": [{"note": "no signature"}]}'])
def test_a_bad_known_file_is_a_clear_error(tmp_path, bad):
    from shapefuzz.cases.known import KnownError, load_entries

    p = tmp_path / "k.json"
    p.write_text(bad)
    with pytest.raises(KnownError, match="not a known-issues file"):
        load_entries((str(p),))


def test_a_drift_of_torchs_own_state_fails_the_run_only_under_strict():
    # reports/torch-2.13 row 27: torch.cond leaves torch-function dispatch disabled; a shapefuzz
    # bug, a new finding, or --strict fail the run
    from shapefuzz.campaign.run import exit_code

    torch_own = {"message": "make_fx:default left torch state changed", "torch_owned": True}
    ours = {"message": "ref:default raised inside shapefuzz", "torch_owned": False}
    assert exit_code([], [torch_own], strict=False) == 0
    assert exit_code([], [torch_own], strict=True) == 1
    assert exit_code([], [ours, torch_own], strict=False) == 1
    assert exit_code([{"signature": "x"}], [], strict=False) == 1
    assert exit_code([], [], strict=False) == 0


def test_a_campaign_without_systems_runs_the_tracers_and_every_torch_env_config():
    # Note [default systems]: torch-env's toggles are cheap, and some regressions show only there
    from shapefuzz.systems import CONFIGS, targets_for

    assert targets_for() == (("make_fx", "default"), ("export", "default"),
                             *(("torch-env", c) for c in CONFIGS["torch-env"]))
    assert targets_for(("torch-env",)) == tuple(("torch-env", c) for c in CONFIGS["torch-env"])
    assert sum(s == "torch-env" for s, _ in targets_for((), ("all",))) == len(CONFIGS["torch-env"])
