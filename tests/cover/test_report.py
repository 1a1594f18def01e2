"""report.json / report.md / report.html: buckets, blame lines, re-rendering from report.json,
a self-contained html whose plots really render (headless Chromium), and the progress display."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from shapefuzz.report import ReportError, load_report, render_md, rerender, write_report
from shapefuzz.report.plots import PLOT_NAMES

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> int:
    from shapefuzz.cli import main

    try:
        main(list(args))
    except SystemExit as e:
        return e.code
    return 0


def _finding(sig: str, **kw) -> dict:
    row = {"signature": sig, "oracle": "truth", "severity": "critical", "system": "torch-env",
           "config": "no-specialize-zero-one", "kind": "wrong-static", "summary": "torch-env: wrong-static on bool",
           "detail": "question 0: bool(True) answered True (static); the concrete answer is False",
           "case_dir": "/tmp/out/findings/truth-torch-env-0123456789", "count": 7, "shrunk": True,
           "confirmed": True, "program": "v0 = backed(0)\nask('bool', '!=', v0, 0)", "n_instrs": 2,
           "known": False, "known_note": "", "first_s": 3.25, "first_program": 12,
           "blame": "torch bug: ref agrees with the concrete answers where torch does not"}
    return {**row, **kw}


def report_data(**extra) -> dict:
    timeline = [[round(0.5 * k, 2), 3 * k, min(k // 20, 2)] for k in range(120)]
    return {
        "torch_version": "2.13.0+cpu", "seed": 1, "elapsed_s": 60.0, "budget_s": 60.0, "programs": 357,
        "valid_programs": 300, "valid_fraction": 300 / 357, "throughput": 5.95,
        "outcomes": {"torch-env": {"default": {"ok": 350, "dde": 7},
                                   "no-specialize-zero-one": {"ok": 340, "dde": 10, "error": 7}},
                     "make_fx": {"default": {"ok": 200, "dde": 100, "error": 3, "timeout": 1}}},
        "findings": [
            _finding("truth:wrong-claim:torch-env:no-specialize-zero-one:C"),
            _finding("config-differential:config-mismatch:torch-env:expr-cache", oracle="config-differential",
                     config="agfs=1", count=2, n_instrs=5, first_s=40.0, first_program=300,
                     blame="guilty toggle: expr-cache (reverting it alone makes torch-env agree with its baseline)"),
            _finding("eager-agreement:trace-error:make_fx:default:AssertionError:x.py:f", known=True,
                     known_note="torch 2.13.0: narrow", count=1, blame=""),
        ],
        "unconfirmed": [_finding("truth:wrong-value-expr:torch-env:default:B", confirmed=False, count=1)],
        "new_findings": 2, "ops": {"narrow": 40, "item": 30, "cat": 9, "backed": 50, "ask:bool": 12},
        "op_families": {"layout": 49, "datadep": 30, "backed": 50, "ask:bool": 12},
        "decisions": {"static": 100, "guard": 40, "fallback": 12},
        "timeline": timeline, **extra,
    }


def test_markdown_has_buckets_blame_and_coverage(tmp_path):
    write_report(tmp_path, report_data())
    md = (tmp_path / "report.md").read_text()
    buckets = md.split("## Buckets (one line per root cause")[1].split("## Findings")[0]
    rows = [r for r in buckets.splitlines() if r.startswith("| ") and "`" in r]
    assert len(rows) == 3  # one line per confirmed signature; unconfirmed ones are never buckets
    assert rows[0].startswith("| new | 7 | 3.2 s (#12) | 2 instrs | `truth:wrong-claim:")
    assert rows[0].endswith("| [findings/truth-torch-env-0123456789](findings/truth-torch-env-0123456789) |")
    assert any(r.startswith("| known | 1 |") for r in rows) and not any("unconfirmed" in r for r in rows)
    unconfirmed = md.split("## Unconfirmed")[1]
    assert "truth:wrong-value-expr:torch-env:default:B" in unconfirmed
    assert "- blame: guilty toggle: expr-cache" in md
    assert "- blame: torch bug: ref agrees with the concrete answers" in md
    assert "python /tmp/out/findings/truth-torch-env-0123456789/repro.py" in md
    assert "op families: backed 50, layout 49, datadep 30" in md and "ops: backed 50, narrow 40" in md
    assert "z3 verdicts" not in md  # only when the report has them


def test_one_bug_under_several_configs_is_one_bucket_a_guilty_toggle_is_not(tmp_path):
    """Note [buckets up to the config]: the sym_ite compile bug met under default and aot_eager
    is one row listing both configs (counts summed, the earliest first-seen, the smaller case);
    two config differentials blaming other toggles stay two rows."""
    sig = "eager-agreement:error-where-eager-succeeds:compile:{}:Unsupported@_dynamo/eval_frame.py:compile_wrapper"
    comp = dict(oracle="eager-agreement", system="compile", blame="")
    diff = dict(oracle="config-differential", system="torch-env", blame="")
    d = report_data(findings=[
        _finding(sig.format("default"), config="default", count=3, n_instrs=4, first_s=9.0, first_program=20,
                 case_dir="/o/findings/a", **comp),
        _finding(sig.format("aot_eager"), config="aot_eager", count=2, n_instrs=2, first_s=5.0, first_program=11,
                 case_dir="/o/findings/b", **comp),
        _finding("config-differential:config-mismatch:torch-env:expr-cache", config="expr-cache", **diff),
        _finding("config-differential:config-mismatch:torch-env:smart-sort", config="smart-sort", **diff)])
    write_report(tmp_path, d)
    md = (tmp_path / "report.md").read_text()
    rows = [r for r in md.split("## Buckets")[1].split("## Findings")[0].splitlines() if r.startswith("| new")]
    assert len(rows) == 3, rows
    grouped = next(r for r in rows if "compile:*:Unsupported" in r)
    assert grouped.startswith("| new | 5 | 5.0 s (#11) | 2 instrs |") and "| aot_eager, default |" in grouped
    assert grouped.endswith("[findings/b](findings/b) |")
    html = (tmp_path / "report.html").read_text()
    assert "<td>aot_eager, default</td>" in html


def test_z3_verdicts_render_when_present(tmp_path):
    d = report_data(z3={"static-soundness": {"unsat": 40, "sat": 2, "unknown": 1}, "timeout": 0})
    md = render_md({"schema": 1, **d})
    assert "- static-soundness/unsat: 40" in md and "- static-soundness/sat: 2" in md
    write_report(tmp_path, d)
    assert "id='plot-z3'" in (tmp_path / "report.html").read_text()
    # run.py's key (the soundness oracles' counts per oracle)
    md = render_md({"schema": 1, **report_data(z3_verdicts={"spurious-dde": {"deserved": 5, "timeout": 1}})})
    assert "- spurious-dde/deserved: 5" in md and "- spurious-dde/timeout: 1" in md


def test_report_rerenders_from_json_alone(tmp_path):
    write_report(tmp_path, report_data())
    md, html = (tmp_path / "report.md").read_text(), (tmp_path / "report.html").read_text()
    (tmp_path / "report.md").unlink()
    (tmp_path / "report.html").unlink()
    assert _cli("report", str(tmp_path)) == 0
    assert (tmp_path / "report.md").read_text() == md
    assert (tmp_path / "report.html").read_text() == html


@pytest.mark.parametrize("content,msg", [(None, "no report.json"), ("{", "not a readable JSON"),
                                         ('{"schema": 1}', "malformed report"), ("[]", "not a shapefuzz report")])
def test_bad_report_folder_is_a_clear_error(tmp_path, content, msg, capsys):
    if content is not None:
        (tmp_path / "report.json").write_text(content)
    with pytest.raises(ReportError, match=msg):
        rerender(tmp_path)
    assert _cli("report", str(tmp_path)) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err and err.count("\n") == 1


def test_html_is_self_contained_and_escapes_text(tmp_path):
    d = report_data()
    d["findings"][0]["summary"] = "<script>alert(1)</script>"
    write_report(tmp_path, d)
    html = (tmp_path / "report.html").read_text()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)" in html
    assert not re.search(r"<script[^>]*\bsrc=", html) and "<link" not in html  # nothing fetched
    assert "Plotly.newPlot" in html and len(html) > 1_000_000  # plotly.js inline
    for name in ("timeline", "throughput", "outcomes", "families", "ops", "decisions"):
        assert f"id='plot-{name}'" in html
    assert load_report(tmp_path)["programs"] == 357


def test_html_renders_the_markdown_links_cases_and_collapses_unconfirmed(tmp_path):
    write_report(tmp_path, report_data(command="shapefuzz fuzz --seed 1", versions={"torch": "2.13.0"}))
    html = (tmp_path / "report.html").read_text()
    body = html.split("<h2>Findings</h2>")[1].split("<h2>Counts</h2>")[0]
    assert "<section class='finding'><h3>[critical]" in body and "<li>oracle <code>truth</code>" in body
    assert "<pre><code>v0 = backed(0)" in body and "### " not in body  # rendered, not raw markdown
    assert "```" not in body
    assert '<a href="findings/truth-torch-env-0123456789">' in body  # case folders are links
    assert "<a href='findings/truth-torch-env-0123456789'>" in html  # in the bucket table too
    assert "<div class='wide'><table id='buckets'>" in html  # a wide table scrolls in its box
    buckets = html.split("id='buckets'")[1].split("</table>")[0]
    assert "wrong-value-expr" not in buckets
    assert "<details id='unconfirmed'><summary>Unconfirmed: 1" in html
    assert "<code>shapefuzz fuzz --seed 1</code>" in html and "torch 2.13.0" in html


def test_report_files_are_readable_by_others(tmp_path):
    import os
    import stat

    write_report(tmp_path, report_data())
    for name in ("report.json", "report.md", "report.html"):
        mode = stat.S_IMODE(os.stat(tmp_path / name).st_mode)
        assert mode == 0o666 & ~_umask(), oct(mode)


def _umask() -> int:
    import os

    m = os.umask(0)
    os.umask(m)
    return m


def _chromium() -> str | None:
    return next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)),
                None)


def test_report_html_renders_plots_in_headless_chromium(tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium on PATH (.ci/run installs the Debian package: apt-get install chromium)")
    split = {"wall_s": 60.0, "phases_s": {"startup": 3.0, "generate": 7.0, "wait": 45.0, "confirm": 5.0},
             "systems": {"make_fx": {"trace_s": 40.0, "replay_s": 2.0, "z3_s": 3.0, "ipc_s": 1.0}}}
    cov = {"timeline": [[1.0, {"symbolic_shapes": 300, "_refs": 20}], [9.0, {"symbolic_shapes": 410, "_refs": 80}]],
           "paths": {"symbolic_shapes": "torch/fx/experimental/symbolic_shapes.py"}, "traced_jobs": 3,
           "cost_share": 0.05}
    write_report(tmp_path, report_data(z3={"unsat": 12, "sat": 1}, time_split=split, torch_coverage=cov))
    r = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        "--virtual-time-budget=20000", "--dump-dom", (tmp_path / "report.html").as_uri()],
                       capture_output=True, text=True, timeout=240)
    dom = r.stdout
    assert "<h1>shapefuzz campaign report</h1>" in dom, r.stderr[-2000:]
    parts = re.split(r"<div[^>]*id=\"plot-", dom)[1:]
    rendered = {p.split('"', 1)[0]: p for p in parts}
    expected = {"timeline", "throughput", "time", "torch_coverage", "outcomes", "z3", "families", "ops",
                "decisions"}
    assert set(rendered) == expected == set(PLOT_NAMES)
    for name, html in rendered.items():
        # plotly drew an svg with axes and data marks inside the div
        assert 'class="main-svg"' in html.split("id=\"plot-", 1)[0], f"plot {name} has no svg"
        assert re.search(r'class="(trace bars|scatterlayer|bars)', html), f"plot {name} has no data marks"


#: a real campaign's report (torch 2.13.0, make_fx under its configs: 30 findings with multi-line
#: details, 7 unconfirmed, signatures up to 182 characters), re-rendered by the code under test
REAL_REPORT = ROOT / "reports" / "torch-2.13" / "campaigns" / "F2-make_fx-cfgs-s214" / "report.json"

#: appended to a copy of report.html: once the page has loaded (plots drawn), replaces the page by
#: what the browser shows of it (innerText: rendered text only, never collapsed or hidden source)
#: and the page's and the bucket table's widths against the viewport, for --dump-dom to print
_PROBE = """<script>window.addEventListener('load', () => {
  const b = document.getElementById('buckets'), r = b && b.getBoundingClientRect();
  const seen = {text: document.body.innerText, viewport: window.innerWidth,
                page: document.documentElement.scrollWidth, table: r && r.right};
  document.body.textContent = '';
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify(seen);
  document.body.appendChild(out);
});</script>"""


def _seen_in_browser(browser: str, page, width: int) -> dict:
    """What headless Chromium shows of `page` in a window `width` pixels wide (see _PROBE)."""
    import html
    import json

    probe = page.with_name("probe.html")
    probe.write_text(page.read_text() + _PROBE)
    r = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        f"--window-size={width},900", "--virtual-time-budget=20000", "--dump-dom",
                        probe.as_uri()], capture_output=True, text=True, timeout=240)
    m = re.search(r'<pre id="probe">(.*?)</pre>', r.stdout, re.S)
    assert m, f"the probe did not run (exit {r.returncode}): {r.stderr[-2000:]}"
    return json.loads(html.unescape(m[1]))


@pytest.mark.parametrize("width", [1280, 800])
def test_a_real_report_shows_rendered_markdown_and_fits_the_window(tmp_path, width):
    """issue 33: report.html showed raw ``` fences; its bucket table must fit the page. A real
    campaign's report.json, re-rendered as `shapefuzz report` does, in a wide and a narrow window."""
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium on PATH (.ci/run installs the Debian package: apt-get install chromium)")
    shutil.copy(REAL_REPORT, tmp_path / "report.json")
    assert _cli("report", str(tmp_path)) == 0
    seen = _seen_in_browser(browser, tmp_path / "report.html", width)
    text = seen["text"]
    assert "Buckets (one line per root cause" in text and "Findings" in text  # the page rendered
    programs = [f["program"] for f in load_report(tmp_path)["findings"]]
    assert all(p.splitlines()[-2] in text for p in programs)  # each finding's program is shown
    assert "```" not in text and "\n### " not in text  # no raw markdown
    assert seen["table"] <= seen["viewport"], seen  # the bucket table ends inside the window
    assert seen["page"] <= seen["viewport"], seen  # and nothing makes the page scroll sideways


def test_markdown_keeps_a_reports_text_as_written():
    """Expressions, names and hostile strings in a finding's text render as written: no emphasis
    from `*` or `_`, no raw HTML, no javascript: link; fences (also inside a list) and tables render."""
    from shapefuzz.report.markdown import fence, to_html

    out = to_html("size 2*s0 + 3*s1 of __init__ <script>x</script> [a](javascript:alert(1))\n\n"
                  "- item\n\n  ```\n  v0 = x\n  ```\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    assert "2*s0 + 3*s1 of __init__" in out and "<em>" not in out and "<strong>" not in out
    assert "<script>" not in out and "&lt;script&gt;" in out and "href=\"javascript" not in out
    assert "<pre><code>v0 = x" in out and "```" not in out
    assert "<div class='wide'><table>" in out and "<td>2</td>" in out
    assert fence("a ``` b") == ["````", "a ``` b", "````"]


# ---- progress ----------------------------------------------------------------------------------
def test_progress_shows_budget_programs_valid_findings_and_rate_on_a_terminal():
    from rich.console import Console

    from shapefuzz.campaign.progress import CampaignProgress, Snapshot

    buf = io.StringIO()
    p = CampaignProgress(60, console=Console(file=buf, force_terminal=True, width=160), min_interval_s=0)
    assert p.enabled
    p.update(Snapshot(10.0, 60, 50, 40, 1))
    p.update(Snapshot(20.0, 60, 120, 90, 2))
    p.close()
    out = buf.getvalue()
    assert "20/60 s" in out and "programs 120" in out and "valid 75%" in out
    assert "findings 2" in out and "6.0 programs/s" in out


def test_progress_is_quiet_off_a_terminal():
    from rich.console import Console

    from shapefuzz.campaign.progress import CampaignProgress, Snapshot

    buf = io.StringIO()
    p = CampaignProgress(60, console=Console(file=buf, force_terminal=False), min_interval_s=0)
    assert not p.enabled
    p.update(Snapshot(10.0, 60, 50, 40, 1))
    p.close()
    assert buf.getvalue() == ""


def test_timeline_marks_first_seen_times_and_shades_shrinks_and_bars_go_log():
    from shapefuzz.report.plots import figures

    d = report_data(shrink_spans=[[10.0, 14.5], [40.0, 47.0]])
    figs = figures(d, {}, {"static-soundness/unsat": 2432, "static-soundness/sat": 9})
    tl = figs["timeline"].to_plotly_json()
    markers = next(t for t in tl["data"] if t.get("mode") == "markers" and t.get("text"))
    assert sorted(markers["x"]) == sorted(f["first_s"] for f in d["findings"])  # not shrink ends
    assert [(s["x0"], s["x1"]) for s in tl["layout"]["shapes"]] == [(10.0, 14.5), (40.0, 47.0)]
    assert figs["z3"].to_plotly_json()["layout"]["yaxis"]["type"] == "log"  # 2432 vs 9
    flat = figures(report_data(), {"a": 5, "b": 3}, {})["families"].to_plotly_json()
    assert flat["layout"]["yaxis"]["type"] == "linear"


def test_a_regressed_fix_and_a_failed_step_show_in_the_markdown():
    """A finding whose known entry is fixed in the running torch is a regression of that fix
    (Note [known versions]): its bucket says so, not "new"; an unconfirmed finding whose
    confirmation step raised says which step and the exception. Without either, neither shows."""
    regressed = _finding("eager-agreement:trace-error:make_fx:default:RuntimeError:cond.py:_bound_stride",
                         regressed_fix="cond _bound_stride fixed in 2.14.1")
    failed = _finding("truth:wrong-value-expr:torch-env:default:B", confirmed=False,
                      error="Traceback (most recent call last):\n  ...\nOSError: disk full", error_step="confirm")
    known = _finding("eager-agreement:trace-error:make_fx:default:AssertionError:x.py:f", known=True,
                     known_note="torch 2.13.0: narrow", count=50)
    md = render_md({"schema": 1, **report_data(findings=[known, regressed], unconfirmed=[failed])})
    buckets = md.split("## Buckets")[1].split("## Findings")[0]
    assert buckets.index("| regressed | 7 |") < buckets.index("| known | 50 |")  # what fails the run first
    assert "| regressed | 7 |" in md and "(regression: cond _bound_stride fixed in 2.14.1)" in md
    assert "the confirm step failed: `OSError: disk full`" in md
    plain = render_md({"schema": 1, **report_data()})
    assert "regress" not in plain and "step failed" not in plain
