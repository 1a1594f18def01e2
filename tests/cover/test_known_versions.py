"""Known issues that know their versions (Note [known versions] in shapefuzz/cases/known.py):
schema 2 files migrate to 3 in memory, malformed files are one clear error, an entry's status
for a running torch follows seen_in / fixed_in, `known check --write` records the running
release, and a campaign finding of a fixed entry is a regression, not known."""

from __future__ import annotations

import json

import pytest
from _helpers import cli_exit

from shapefuzz.cases.known import (
    KnownError,
    KnownIssue,
    expected_status,
    fixed_regression,
    known_note,
    load_file,
    with_observation,
)
from shapefuzz.cases.versions import release, version_key


def test_a_schema_2_file_migrates_to_schema_3(tmp_path):
    p = tmp_path / "k.json"
    p.write_text(json.dumps({"schema": 2, "issues": [
        {"signature": "a:b", "title": "t", "upstream": "pytorch/pytorch#1", "fix": "", "fixed_in": "",
         "status": "no upstream fix; open in torch 2.13.0", "case": "corpus/x", "note": "n"},
        {"signature": "c:d", "fixed_in": "a release after 2.13", "status": "", "note": "n"},
        {"signature": "e:f", "fixed_in": "2.14.1+cpu", "note": "n"}]}))
    a, c, e = load_file(p)
    assert (a.seen_in, a.fixed_in, a.case, a.title) == (("2.13.0",), "", "corpus/x", "t")
    assert (c.seen_in, c.fixed_in) == ((), "") and "fixed in a release after 2.13" in c.status  # kept, as text
    assert e.fixed_in == "2.14.1"


def test_the_bundled_list_is_schema_3_and_names_versions():
    from importlib import resources

    raw = json.loads(resources.files("shapefuzz.cases").joinpath("known_issues.json").read_text())
    assert raw["schema"] == 3 and all(isinstance(it["seen_in"], list) for it in raw["issues"])
    assert all(it["seen_in"] or it["fixed_in"] for it in raw["issues"])


@pytest.mark.parametrize("bad, what", [
    ('{"schema": 3, "issues": [{"signature": "a", "seen_in": "2.13.0", "note": "n"}]}', "seen_in"),
    ('{"schema": 3, "issues": [{"signature": "a", "seen_in": ["soon"], "note": "n"}]}', "seen_in"),
    ('{"schema": 3, "issues": [{"signature": "a", "seen_in": [], "fixed_in": "later"}]}', "fixed_in"),
    ('{"schema": 3, "issues": [{"signature": "a", "seen_in": [], "seen-in": []}]}', "seen-in"),
    ('{"schema": 3, "issues": [{"signature": "a", "seen_in": [], "note": 3}]}', "note"),
    ('{"schema": 4, "issues": []}', "schema 4"),
    ('{"schema": 3, "issues": {}}', "issues"),
    ("[]", "issues"),
])
def test_a_malformed_file_is_one_clear_error(tmp_path, bad, what):
    p = tmp_path / "k.json"
    p.write_text(bad)
    with pytest.raises(KnownError) as e:
        load_file(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}: not a known-issues file") and what in msg and "\n" not in msg


def test_a_malformed_extra_file_exits_2_with_one_line(tmp_path, capsys):
    p = tmp_path / "k.json"
    p.write_text('{"schema": 3, "issues": [{"signature": "a", "seen_in": "2.13"}]}')
    assert cli_exit("known", "check", "--no-bundled", "--known", str(p)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(p) in err and "seen_in" in err


def test_versions_order_as_releases_do():
    order = ["2.13.0", "2.14.0", "2.14.1", "2.16.0.dev20260101", "2.16.0a0+gitabc1234", "2.16.0rc1",
             "2.16.0", "2.16.0.post1", "2.17"]
    assert sorted(order, key=version_key) == order
    assert release("2.13.0+cpu") == "2.13.0" and release("2.16.0a0+gitabc") == "2.16.0a0"
    assert version_key("2.14") == version_key("2.14.0")
    with pytest.raises(ValueError):
        version_key("main")


FIXED = KnownIssue("a:b", title="narrow", seen_in=("2.13.0",), fixed_in="2.14.1", case="corpus/x")


@pytest.mark.parametrize("running, want", [
    ("2.13.0+cpu", "reproduces"),  # before fixed_in, and seen there
    ("2.14.0", "reproduces"),      # before fixed_in, never checked: open as far as the file knows
    ("2.14.1", "fixed"),
    ("2.14.1+cu130", "fixed"),
    ("2.16.0a0+gitabc1234", "fixed"),  # a source build after the fix
])
def test_status_before_and_after_fixed_in(running, want):
    assert expected_status(FIXED, running) == want


def test_a_source_build_before_the_fixing_release_is_not_fixed():
    k = KnownIssue("a:b", seen_in=("2.13.0",), fixed_in="2.16.0")
    assert expected_status(k, "2.16.0a0+gitabc1234") == "reproduces"  # an alpha comes before 2.16.0


def test_a_recorded_regression_wins_over_fixed_in():
    back = with_observation(FIXED, "2.16.0+cpu", True)
    assert back.seen_in == ("2.13.0", "2.16.0") and back.fixed_in == "2.14.1"
    assert expected_status(back, "2.16.0") == "reproduces" and expected_status(back, "2.15.0") == "fixed"


def test_an_observation_writes_seen_in_or_the_first_fixed_in():
    open_ = KnownIssue("a:b", seen_in=("2.13.0",))
    assert with_observation(open_, "2.14.1+cpu", True).seen_in == ("2.13.0", "2.14.1")
    assert with_observation(open_, "2.13.0", True) is open_
    assert with_observation(open_, "2.15.0", False).fixed_in == "2.15.0"
    assert with_observation(FIXED, "2.14.0", False).fixed_in == "2.14.0"  # an earlier release seen fixed
    assert with_observation(FIXED, "2.16.0", False).fixed_in == "2.14.1"


def _fake_repo(tmp_path):
    for name, rc in (("here", 1), ("gone", 0)):
        (tmp_path / "cases" / name).mkdir(parents=True)
        (tmp_path / "cases" / name / "repro.py").write_text(f"raise SystemExit({rc})\n")
    p = tmp_path / "k.json"
    p.write_text(json.dumps({"schema": 3, "issues": [
        {"signature": "a:b", "title": "still there", "upstream": "", "fix": "", "seen_in": ["2.0.0"],
         "fixed_in": "", "status": "", "case": "cases/here", "note": "n"},
        {"signature": "c:d", "title": "gone", "upstream": "pytorch/pytorch#1", "fix": "", "seen_in": ["2.0.0"],
         "fixed_in": "", "status": "", "case": "cases/gone", "note": "n"},
        {"signature": "e:f", "title": "no case", "upstream": "", "fix": "", "seen_in": ["2.0.0"],
         "fixed_in": "", "status": "", "case": "", "note": "n"}]}, indent=2) + "\n")
    return p


def test_known_check_write_round_trip(tmp_path, capsys):
    import torch

    here = release(torch.__version__)
    p = _fake_repo(tmp_path)
    args = ("known", "check", "--no-bundled", "--known", str(p), "--root", str(tmp_path))
    assert cli_exit(*args, "--write") == 1  # "gone" is fixed here where the file says it reproduces
    out = capsys.readouterr().out
    assert "reproduces  cases/here" in out and "fixed here  cases/gone" in out and "no case" in out
    a, c, e = load_file(p)
    assert a.seen_in == ("2.0.0", here) and a.fixed_in == ""
    assert c.seen_in == ("2.0.0",) and c.fixed_in == here
    assert e.seen_in == ("2.0.0",)
    assert not list(tmp_path.glob(".k.json.*"))  # the temp file was renamed over k.json
    written = p.read_text()
    assert cli_exit(*args, "--write") == 0  # every entry is now as its file says
    assert p.read_text() == written
    assert json.loads(written)["schema"] == 3 and written.startswith('{\n  "schema": 3,\n  "issues": [\n    {')


def test_a_fix_that_comes_back_is_reported_regressed(tmp_path, capsys):
    import torch

    p = _fake_repo(tmp_path)
    raw = json.loads(p.read_text())
    raw["issues"][0]["fixed_in"] = "2.0.1"  # "here" reproduces, but the file says fixed since 2.0.1
    p.write_text(json.dumps(raw))
    assert version_key(torch.__version__) > version_key("2.0.1")
    assert cli_exit("known", "check", "--no-bundled", "--known", str(p), "--root", str(tmp_path)) == 1
    assert "regressed  cases/here" in capsys.readouterr().out


def test_write_needs_a_file(capsys):
    assert cli_exit("known", "check", "--write") == 2
    assert "--known" in capsys.readouterr().err


def test_a_finding_of_a_fixed_entry_is_a_regression_not_known():
    known = {FIXED.signature: FIXED, "x:*": KnownIssue("x:*", seen_in=("2.13.0",))}
    assert fixed_regression(known, "a:b", "2.13.0+cpu") is None and known_note(known, "a:b")
    assert fixed_regression(known, "a:b", "2.14.1") == "narrow fixed in 2.14.1"
    assert fixed_regression(known, "x:y", "2.14.1") is None  # open: known
    assert fixed_regression(known, "new:one", "2.14.1") is None
    assert fixed_regression({"a:b": "a note"}, "a:b", "2.14.1") is None  # a plain note has no versions


def test_the_campaign_counts_a_regressed_fix_as_new(monkeypatch):
    from types import SimpleNamespace

    from shapefuzz.campaign import run

    opts = SimpleNamespace(known={FIXED.signature: FIXED}, strict=False)
    monkeypatch.setattr(run, "_torch_version", lambda: "2.13.0+cpu")
    assert run._is_known(opts, "a:b") and run._known_verdict(opts, "a:b")[1] is None
    monkeypatch.setattr(run, "_torch_version", lambda: "2.16.0a0+gitabc1234")
    assert not run._is_known(opts, "a:b")
    assert run._known_verdict(opts, "a:b") == (None, "narrow fixed in 2.14.1")
