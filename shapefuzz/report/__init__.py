"""report.json, report.md and report.html for a campaign (schema: docs/reference/report-json.md).

report.json is the source of truth: report.md and report.html are rendered from it alone, so
`shapefuzz report DIR` can re-render them later (after a template change, or to view an old
campaign). report.html is self-contained (no network): the plotting library's JavaScript is
embedded once, inline (Note [self-contained html])."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from shapefuzz import BadInput
from shapefuzz.cases.corpus import atomic_write
from shapefuzz.report import plots as report_plots
from shapefuzz.report.ab_section import ab_html, ab_md
from shapefuzz.report.buckets import BUCKETS_TITLE, bucket_rows, root_key
from shapefuzz.report.fleet import fleet_html, fleet_md
from shapefuzz.report.markdown import fence, to_html

__all__ = ["REPORT_SCHEMA", "ReportError", "bucket_rows", "case_href", "load_report", "op_family_counts",
           "render_html", "render_md", "rerender", "root_key", "unconfirmed_section", "write_report"]

REPORT_SCHEMA = 1
#: keys report.md/html need; everything else is optional (older or partial reports still render)
_REQUIRED = ("torch_version", "seed", "elapsed_s", "programs", "valid_programs", "throughput",
             "outcomes", "findings")


class ReportError(BadInput):
    """A report.json is missing or malformed; the message says which and what to do."""


def write_report(out: Path, data: dict[str, Any]) -> None:
    data = {"schema": REPORT_SCHEMA, **data}
    atomic_write(out / "report.json", json.dumps(data, indent=1, sort_keys=True))
    _render_files(out, data)


def _render_files(out: Path, data: dict[str, Any]) -> None:
    atomic_write(out / "report.md", render_md(data))
    atomic_write(out / "report.html", render_html(data))


def load_report(out: Path) -> dict[str, Any]:
    p = Path(out) / "report.json" if Path(out).is_dir() else Path(out)
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        raise ReportError(f"{p}: no report.json (give the --out folder of a campaign)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ReportError(f"{p}: not a readable JSON report ({type(e).__name__})") from None
    if not isinstance(data, dict) or data.get("schema") != REPORT_SCHEMA:
        raise ReportError(f"{p}: not a shapefuzz report of schema {REPORT_SCHEMA}")
    missing = [k for k in _REQUIRED if k not in data]
    if missing or not isinstance(data["findings"], list) or not isinstance(data["outcomes"], dict):
        raise ReportError(f"{p}: malformed report (missing or wrong: {', '.join(missing) or 'findings/outcomes'})")
    return data


def rerender(out: Path) -> Path:
    """Rewrite report.md and report.html of a campaign folder from its report.json."""
    data = load_report(out)
    folder = Path(out) if Path(out).is_dir() else Path(out).parent
    _render_files(folder, data)
    return folder


# ---- markdown --------------------------------------------------------------------------------
def _headline(d: dict[str, Any]) -> str:
    valid = d.get("valid_fraction", d["valid_programs"] / d["programs"] if d["programs"] else 0.0)
    return (f"torch {d['torch_version']}, seed {d['seed']}, {d['elapsed_s']:.1f} s, "
            f"{d['programs']} programs ({d['valid_programs']} valid in eager, {100 * valid:.0f}%), "
            f"{d['throughput']:.2f} programs/s")


def case_href(case_dir: str) -> str:
    """A case folder as a link relative to the report (findings/<name>), the path as given when
    it is not a campaign's finding folder."""
    parts = str(case_dir).rstrip("/").split("/")
    return "/".join(parts[-2:]) if len(parts) >= 2 and parts[-2] == "findings" else str(case_dir)


def _href(row: dict[str, Any]) -> str:
    """A finding row's case link: its own `case_href` when it has one (a merged report's rows
    link the campaigns' folders, Note [fleet report] in report/merge.py), else case_href."""
    return row.get("case_href") or case_href(row["case_dir"])


def _case_link(row: dict[str, Any]) -> str:
    return f"[{_href(row)}]({_href(row)})"


def _rerun(d: dict[str, Any]) -> list[str]:
    """The command line and versions a rerun needs."""
    out = [f"Command: `{d['command']}`"] if d.get("command") else []
    versions = d.get("versions") or {}
    if versions:
        out.append("Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    return out + [""] if out else []


def render_md(d: dict[str, Any]) -> str:
    lines = [f"# {_title(d)}", "", _headline(d), ""] + _rerun(d)
    lines += _md_buckets(d) + fleet_md(d) + ab_md(d) + ["## Findings", ""]
    if not d["findings"]:
        lines += ["No confirmed finding.", ""]
    for f in d["findings"]:
        lines += _md_finding(f)
    lines += unconfirmed_section(d)
    return "\n".join(lines + _md_tables(d))


def _md_tables(d: dict[str, Any]) -> list[str]:
    """The closing sections: outcome counts, z3 verdicts and coverage."""
    lines = ["## Outcomes per system and config", "", "| system | config | outcome | programs |",
             "|---|---|---|---|"]
    for system, cfgs in sorted(d["outcomes"].items()):
        for cfg, statuses in sorted(cfgs.items()):
            lines += [f"| {system} | {cfg} | {status} | {n} |" for status, n in sorted(statuses.items())]
    if _z3_counts(d):
        lines += ["", "## z3 verdicts", ""] + [f"- {k}: {n}" for k, n in _z3_counts(d).items()]
    lines += ["", "## Coverage", "", "op families: " + _kv(_families(d)), "",
              "ops: " + _kv(d.get("ops", {})), "", "decisions: " + _kv(d.get("decisions", {})), ""]
    return lines


def _title(d: dict[str, Any]) -> str:
    n = len(d.get("campaigns") or ())
    return f"shapefuzz fleet report ({n} campaigns merged)" if n else "shapefuzz campaign report"


def _kv(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))) or "(none)"


def _md_buckets(d: dict[str, Any]) -> list[str]:
    rows = bucket_rows(d)
    if not rows:
        return []
    out = [f"## {BUCKETS_TITLE}", "",
           "| status | count | first seen | smallest program | signature | configs | case |",
           "|---|---:|---|---:|---|---|---|"]
    for r in rows:
        first = f"{r['first_s']:.1f} s (#{r['first_program']})" if "first_s" in r else "-"
        out.append(f"| {r['status']} | {r.get('count', 1)} | {first} | {r.get('n_instrs', '-')} instrs | "
                   f"`{r['signature']}` | {', '.join(r['configs'])} | {_case_link(r)} |")
    return out + [""]


def _md_finding(f: dict[str, Any]) -> list[str]:
    known = f" (known upstream: {f['known_note']})" if f.get("known") else ""
    known += " (pre-existing: the baseline shows it too)" if f.get("pre_existing") else ""
    known += f" (regression: {f['regressed_fix']})" if f.get("regressed_fix") else ""
    first = f", first after {f['first_s']:.1f} s (program #{f['first_program']})" if "first_s" in f else ""
    out = [f"### [{f['severity']}] {f['summary']}{known}", "",
           (f"- oracle `{f['oracle']}`, system `{f['system']}`, config `{f['config']}`, "
           f"seen {f['count']}x{first}, shrunk: {f['shrunk']}, confirmed by repro.py: {f['confirmed']}"),
           f"- signature `{f['signature']}`"]
    if f.get("blame"):
        out.append(f"- blame: {f['blame']}")
    return out + [(f"- case: {_case_link(f)}; replay: `shapefuzz replay {f['case_dir']}`; "
                  f"repro: `python {f['case_dir']}/repro.py`"), "", *fence(f["program"]), "",
                  f["detail"], ""]


def unconfirmed_section(d: dict[str, Any]) -> list[str]:
    """Findings whose repro.py did not reproduce them: listed apart, not counted, not buckets."""
    if not d.get("unconfirmed"):
        return []
    return (["## Unconfirmed (repro.py did not reproduce; not counted, not bucketed)", ""]
            + [f"- `{u['signature']}`: {u['summary']} ({_case_link(u)}){_step_error(u)}"
               for u in d["unconfirmed"]]
            + [""])


def _step_error(u: dict[str, Any]) -> str:
    """Why a finding is unconfirmed when a step of shapefuzz's own failed (campaign/failures.py):
    the step and the last line of its traceback (the whole traceback is in report.json)."""
    if not u.get("error"):
        return ""
    last = (u["error"].strip().splitlines() or [""])[-1]
    return f"; the {u.get('error_step', '?')} step failed: `{last}`"


def op_family_counts(ops: dict[str, int]) -> dict[str, int]:
    """Op counts folded into op families (question ops keep their names: ask:<mode>, backed ...).
    Imports the op registry (and so torch): called when a campaign writes report.json, never
    when a report is rendered."""
    from shapefuzz.ops import all_ops  # lazy: the ops import torch (+1 s)

    family = {name: op.family for name, op in all_ops().items()}
    out: dict[str, int] = {}
    for name, n in ops.items():
        out[family.get(name, name)] = out.get(family.get(name, name), 0) + n
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def _families(d: dict[str, Any]) -> dict[str, int]:
    return dict(sorted((d.get("op_families") or {}).items(), key=lambda kv: (-kv[1], kv[0])))


def _z3_counts(d: dict[str, Any]) -> dict[str, int]:
    """z3 verdict counts, flattened: {"unsat": 3} or {"truth": {"unsat": 3}} -> label -> count."""
    raw = d.get("z3") or d.get("z3_verdicts") or {}
    out: dict[str, int] = {}

    def walk(prefix: str, v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(f"{prefix}/{k}" if prefix else str(k), x)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[prefix] = int(v)

    walk("", raw)
    return out


# ---- html ------------------------------------------------------------------------------------
# Note [self-contained html]: report.html must open on an air-gapped machine and in CI artifacts,
# so plotly.js (about 4.6 MB) is embedded once, inline; every figure is a div that plotly fills.
# Each plot div carries class "shapefuzz-plot" and an id "plot-<name>" (tests look for them).

#: long signatures, paths and blame lines wrap anywhere, so a table fits the page's width (its
#: cells shrink to the longest unbreakable piece, a character); a table that still does not fit
#: scrolls inside its own box (.wide), never the page
_STYLE = ("<style>body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;"
          "max-width:100%}#buckets{width:100%}td,th{border:1px solid #ccc;padding:3px 6px;font-size:13px;"
          "vertical-align:top;overflow-wrap:anywhere}pre{background:#f6f6f6;padding:8px;overflow-x:auto}"
          ".new{color:#b00}.known{color:#777}.shapefuzz-plot{width:100%;min-height:360px}"
          ".wide{overflow-x:auto;max-width:100%}code{overflow-wrap:anywhere}td code{word-break:break-all}"
          "details{margin:1em 0}</style>")


def render_html(d: dict[str, Any]) -> str:
    figs = report_plots.figures(d, _families(d), _z3_counts(d))
    plots, script = report_plots.render(figs)
    esc = html.escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>" + esc(_title(d)) + "</title>",
             _STYLE, script, "</head><body>",
             f"<h1>{esc(_title(d))}</h1>", f"<p>{esc(_headline(d))}</p>", to_html("\n".join(_rerun(d)))]
    parts += _html_buckets(d) + fleet_html(d) + ab_html(d)
    parts += ["<h2>Plots</h2>", plots]
    parts += ["<h2>Findings</h2>"] + (["<p>No confirmed finding.</p>"] if not d["findings"] else [])
    for f in d["findings"]:  # the markdown sections, rendered
        parts.append(f"<section class='finding'>{to_html(chr(10).join(_md_finding(f)))}</section>")
    if d.get("unconfirmed"):  # collapsed: not findings until a repro shows them
        parts += [f"<details id='unconfirmed'><summary>Unconfirmed: {len(d['unconfirmed'])} (repro.py did "
                  "not reproduce; not counted, not bucketed)</summary>",
                  to_html("\n".join(unconfirmed_section(d)[2:])), "</details>"]
    # the counts behind the plots, as report.md has them (collapsed: the plots show them)
    parts += ["<h2>Counts</h2><details id='tables'><summary>Outcomes per system and config, z3 verdicts "
              "and coverage, as tables</summary>", to_html("\n".join(_md_tables(d))),
              "</details></body></html>\n"]
    return "".join(parts)


def _html_buckets(d: dict[str, Any]) -> list[str]:
    rows = bucket_rows(d)
    if not rows:
        return ["<h2>Buckets</h2><p>No finding.</p>"]
    esc = html.escape
    out = [(f"<h2>{BUCKETS_TITLE}</h2><div class='wide'><table id='buckets'><tr><th>status</th><th>count</th>"
           "<th>first seen</th><th>smallest program</th><th>signature</th><th>configs</th><th>blame</th>"
           "<th>case</th></tr>")]
    for r in rows:
        first = f"{r['first_s']:.1f} s (#{r['first_program']})" if "first_s" in r else "-"
        out.append(f"<tr class='{esc(r['status'])}'><td>{esc(r['status'])}</td><td>{r.get('count', 1)}</td>"
                   f"<td>{esc(first)}</td><td>{esc(str(r.get('n_instrs', '-')))} instrs</td>"
                   f"<td><code>{esc(r['signature'])}</code></td><td>{esc(', '.join(r['configs']))}</td>"
                   f"<td>{esc(r.get('blame', ''))}</td>"
                   f"<td><a href='{esc(_href(r), quote=True)}'>{esc(_href(r))}</a>"
                   "</td></tr>")
    return out + ["</table></div>"]
