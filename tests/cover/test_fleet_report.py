"""`shapefuzz report --merge DIR [DIR ...] --out MERGED` (Note [fleet report] in
shapefuzz/report/merge.py) on hand-made report.json pairs: a signature met by several campaigns is
one finding and one bucket, counters add up, new / confirmed anywhere wins, the case is the
original folder, and every bad input is one line and exit 2. The real two-machine run through a
redis-server is tests/reliability/test_fleet_report.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shapefuzz.report import root_key

SIG = "truth:wrong-claim:torch-env:{}:C"


def _cli(*args: str) -> int:
    from shapefuzz.cli import main

    try:
        main([str(a) for a in args])
    except SystemExit as e:
        return e.code
    return 0


def _finding(sig: str, folder: str, **kw) -> dict:
    name = "case-" + sig.replace(":", "-")
    row = {"signature": sig, "oracle": "truth", "severity": "critical", "system": "torch-env",
           "config": sig.split(":")[3], "kind": "wrong-static", "summary": "torch-env: wrong-static",
           "detail": "question 0 answered True; the concrete answer is False",
           "case_dir": f"{folder}/findings/{name}", "count": 1, "shrunk": True, "confirmed": True,
           "program": "v0 = backed(0)", "n_instrs": 3, "known": False, "known_note": "",
           "regressed_fix": "", "pre_existing": False, "first_s": 10.0, "first_program": 4}
    return {**row, **kw}


def _report(seed: int, findings=(), unconfirmed=(), **kw) -> dict:
    return {"schema": 1, "torch_version": "2.13.0+cpu", "seed": seed, "elapsed_s": 60.0 + seed,
            "campaign_s": 50.0 + seed, "budget_s": 60.0, "programs": 100 * seed, "valid_programs": 90 * seed,
            "throughput": 1.0, "shrink_runs": seed, "db_replays": seed - 1,
            "outcomes": {"torch-env": {"default": {"ok": 80 * seed, "dde": seed}}},
            "ops": {"item": 3 * seed, "cat": seed}, "decisions": {"static": 7 * seed},
            "time_split": {"wall_s": 60.0 + seed, "cpu_s": {"campaign": 2.0 * seed, "total": 5.0 * seed},
                           "phases_s": {"generate": 40.0 + seed}},
            "findings": list(findings), "unconfirmed": list(unconfirmed),
            "new_findings": sum(not f.get("known") for f in findings), **kw}


def _write(folder: Path, data: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.json").write_text(json.dumps(data))
    return folder


def _merged(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


@pytest.fixture
def pair(tmp_path):
    """Machine a met S under two configs and T; machine b met S (config default) too, earlier,
    with a smaller program, but as a known upstream issue. Both recorded their case folders
    where they ran (another path than the one they are merged from)."""
    a = _write(tmp_path / "a", _report(1, [
        _finding(SIG.format("default"), "/run/machine-1/out", count=3, first_s=20.0, n_instrs=4),
        _finding(SIG.format("agfs=1"), "/run/machine-1/out", count=1, first_s=30.0),
        _finding("eager-agreement:wrong-value:make_fx:default:tensor", "/run/machine-1/out", count=2)]))
    b = _write(tmp_path / "b", _report(2, [
        _finding(SIG.format("default"), "out", count=5, first_s=5.0, first_program=2, n_instrs=2,
                 known=True, known_note="torch 2.13: upstream #1")]))
    return a, b


def test_a_signature_met_by_both_is_one_finding_and_one_bucket(pair, tmp_path):
    a, b = pair
    out = tmp_path / "merged"
    assert _cli("report", "--merge", a, b, "--out", out) == 0
    d = _merged(out)
    sigs = [f["signature"] for f in d["findings"]]
    assert sorted(sigs) == sorted(set(sigs)) and len(sigs) == 3
    s = next(f for f in d["findings"] if f["signature"] == SIG.format("default"))
    ins = [f for r in (a, b) for f in _merged(r)["findings"] if f["signature"] == s["signature"]]
    assert s["count"] == sum(f["count"] for f in ins)
    assert s["campaigns"] == [str(a), str(b)]
    # earliest first time and its campaign; the case of the smaller program, where it is now
    assert (s["first_s"], s["first_program"], s["first_campaign"]) == (5.0, 2, str(b))
    assert s["case_dir"] == str(b.resolve() / "findings" / Path(ins[1]["case_dir"]).name)
    assert s["n_instrs"] == 2 and s["case_href"] == f"../b/findings/{Path(ins[1]['case_dir']).name}"
    assert not s["known"] and s["known_note"] == ""  # new on machine a: new in the fleet
    assert d["new_findings"] == 3
    # the bucket table groups S's two configs as a campaign's does, and lists it once
    md = (out / "report.md").read_text()
    rows = [r for r in md.split("## Buckets")[1].split("## Campaigns")[0].splitlines() if r.startswith("| new")]
    bucket = [r for r in rows if root_key(s) in r]
    assert len(rows) == 2 and len(bucket) == 1, rows
    assert bucket[0].startswith(f"| new | {s['count'] + 1} | 5.0 s (#2) | 2 instrs |")
    assert "| agfs=1, default |" in bucket[0] and "[../b/findings/" in bucket[0]
    assert f"- `{root_key(s)}`: {a}, {b}" in md
    html = (out / "report.html").read_text()
    assert "fleet report (2 campaigns merged)" in html and "href='../b/findings/" in html


def test_counters_are_summed_and_each_campaign_listed(pair, tmp_path):
    a, b = pair
    out = tmp_path / "merged"
    assert _cli("report", "--merge", a, b, "--out", out) == 0
    d, ra, rb = _merged(out), _merged(a), _merged(b)
    for key in ("programs", "valid_programs", "elapsed_s", "campaign_s", "budget_s", "shrink_runs", "db_replays"):
        assert d[key] == ra[key] + rb[key], key
    assert d["time_split"]["cpu_s"]["total"] == ra["time_split"]["cpu_s"]["total"] + rb["time_split"]["cpu_s"]["total"]
    assert d["time_split"]["wall_s"] == ra["time_split"]["wall_s"] + rb["time_split"]["wall_s"]
    ok = d["outcomes"]["torch-env"]["default"]["ok"]
    assert ok == ra["outcomes"]["torch-env"]["default"]["ok"] + rb["outcomes"]["torch-env"]["default"]["ok"]
    assert d["ops"] == {k: ra["ops"][k] + rb["ops"][k] for k in ra["ops"]}
    assert d["throughput"] == pytest.approx(d["programs"] / d["elapsed_s"])
    assert d["seed"] == [1, 2] and d["torch_version"] == ra["torch_version"]
    assert [(c["folder"], c["seed"], c["programs"], c["findings"]) for c in d["campaigns"]] == [
        (str(a), 1, ra["programs"], 3), (str(b), 2, rb["programs"], 1)]
    assert d["campaigns"][1]["cpu_s"] == rb["time_split"]["cpu_s"]["total"]
    md = (out / "report.md").read_text()
    assert f"| {b} | 2 | 2.13.0+cpu | {rb['programs']} | {rb['valid_programs']} |" in md


def test_a_key_one_campaign_lacks_counts_as_zero(tmp_path):
    a = _write(tmp_path / "a", _report(1, outcomes={"make_fx": {"default": {"ok": 3}}}))
    b = _write(tmp_path / "b", _report(2))
    assert _cli("report", "--merge", a, b, "--out", tmp_path / "m") == 0
    outcomes = _merged(tmp_path / "m")["outcomes"]
    assert outcomes == {"make_fx": {"default": {"ok": 3}}, "torch-env": {"default": {"ok": 160, "dde": 2}}}


def test_confirmed_anywhere_is_confirmed_known_only_when_known_everywhere(tmp_path):
    s, u, k = SIG.format("default"), SIG.format("agfs=2"), SIG.format("agfs=1")
    a = _write(tmp_path / "a", _report(1, [_finding(k, "a", known=True, known_note="upstream #1")],
                                       [_finding(s, "a", confirmed=False, n_instrs=1),
                                        _finding(u, "a", confirmed=False)]))
    b = _write(tmp_path / "b", _report(2, [_finding(s, "b", n_instrs=5),
                                           _finding(k, "b", known=True, known_note="upstream #1")],
                                       [_finding(u, "b", confirmed=False)]))
    assert _cli("report", "--merge", a, b, "--out", tmp_path / "m") == 0
    d = _merged(tmp_path / "m")
    found = {f["signature"]: f for f in d["findings"]}
    assert set(found) == {s, k} and [x["signature"] for x in d["unconfirmed"]] == [u]
    # s: confirmed by b's repro.py; its case is b's (a's smaller program was not confirmed)
    assert found[s]["confirmed"] and found[s]["campaigns"] == [str(a), str(b)] and found[s]["count"] == 2
    assert found[s]["case_dir"] == str(b.resolve() / "findings" / Path(found[s]["case_dir"]).name)
    assert found[k]["known"] and found[k]["known_note"] == "upstream #1"
    assert d["new_findings"] == 1 and d["unconfirmed"][0]["count"] == 2
    md = (tmp_path / "m" / "report.md").read_text()
    assert md.split("## Unconfirmed")[1].count(u) == 1


def test_the_merged_report_rerenders_and_a_merge_again_replaces_it(pair, tmp_path):
    a, b = pair
    out = tmp_path / "m"
    assert _cli("report", "--merge", a, "--out", out) == 0
    assert _cli("report", "--merge", a, b, "--out", out) == 0  # a merged report is replaced
    md = (out / "report.md").read_text()
    (out / "report.md").unlink()
    assert _cli("report", out) == 0  # `shapefuzz report MERGED` reads it as any report
    assert (out / "report.md").read_text() == md and "Campaigns merged (2)" in md


def _bad(tmp_path: Path, case: str) -> list[str]:
    """The command line of one bad input, with the folders it needs."""
    ok = lambda name, **kw: str(_write(tmp_path / name, _report(1, **kw)))
    if case == "no folder":
        return ["--merge", "--out", str(tmp_path / "m")]
    if case == "no --out":
        return ["--merge", ok("a")]
    if case == "--out without --merge":
        return [ok("a"), "--out", str(tmp_path / "m")]
    if case == "two folders without --merge":
        return [ok("a"), ok("b")]
    if case == "no report.json":
        (tmp_path / "empty").mkdir()
        return ["--merge", ok("a"), str(tmp_path / "empty"), "--out", str(tmp_path / "m")]
    if case == "--out is an input":
        return ["--merge", ok("a"), ok("b"), "--out", str(tmp_path / "b")]
    if case == "given twice":
        return ["--merge", ok("a"), ok("b"), str(tmp_path / "a") + "/", "--out", str(tmp_path / "m")]
    if case == "--out holds a campaign":
        return ["--merge", ok("a"), "--out", ok("other")]
    if case == "different torch":
        return ["--merge", ok("a"), ok("b", torch_version="2.14.1"), "--out", str(tmp_path / "m")]
    (tmp_path / "bad").mkdir()
    text = {"unreadable": "{", "not a report": "[]",
            "malformed counter": json.dumps(_report(1, programs="many")),
            "malformed table": json.dumps(_report(1, outcomes={"torch-env": "lots"})),
            "malformed row": json.dumps(_report(1, [{"signature": "x"}])),
            "a merged report": json.dumps(_report(1, campaigns=[]))}[case]
    (tmp_path / "bad" / "report.json").write_text(text)
    return ["--merge", ok("a"), str(tmp_path / "bad"), "--out", str(tmp_path / "m")]


@pytest.mark.parametrize("case,msg", [
    ("no folder", "no campaign folder given"), ("no --out", "--merge needs --out"),
    ("--out without --merge", "is for --merge"), ("two folders without --merge", "give one campaign folder"),
    ("no report.json", "no report.json"), ("unreadable", "not a readable JSON report"),
    ("not a report", "not a shapefuzz report"), ("malformed counter", "programs is 'many'"),
    ("malformed table", "outcomes.torch-env: malformed report"), ("malformed row", "a row of findings lacks"),
    ("a merged report", "a merged report"), ("--out is an input", "is one of the campaigns merged"),
    ("given twice", "are the same campaign folder"), ("--out holds a campaign", "holds a campaign's report.json"),
    ("different torch", "different torch versions")])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, case, msg):
    args = _bad(tmp_path, case)
    capsys.readouterr()
    assert _cli("report", *args) == 2
    err = capsys.readouterr().err
    assert msg in err and err.startswith("shapefuzz: error: ") and err.count("\n") == 1, err
    assert not (tmp_path / "m" / "report.json").exists()
    if case == "--out holds a campaign":  # and the campaign's report is left as it was
        assert _merged(tmp_path / "other")["programs"] == 100
