"""report.json, report.md and report.html for a campaign (schema in README)."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from shapefuzz.corpus import atomic_write

__all__ = ["write_report", "REPORT_SCHEMA"]

REPORT_SCHEMA = 1


def write_report(out: Path, data: dict[str, Any]) -> None:
    data = {"schema": REPORT_SCHEMA, **data}
    atomic_write(out / "report.json", json.dumps(data, indent=1, sort_keys=True))
    atomic_write(out / "report.md", render_md(data))
    atomic_write(out / "report.html", render_html(data))


def render_md(d: dict[str, Any]) -> str:
    lines = [
        "# shapefuzz campaign report", "",
        f"torch {d['torch_version']}, seed {d['seed']}, {d['elapsed_s']:.1f} s, "
        f"{d['programs']} programs ({d['valid_programs']} valid in eager, "
        f"{100 * d['valid_fraction']:.0f}%), {d['throughput']:.2f} programs/s", "",
        "## Findings", "",
    ]
    if not d["findings"]:
        lines.append("No confirmed finding.")
    for f in d["findings"]:
        known = f" (known upstream: {f['known_note']})" if f.get("known") else ""
        lines += [f"### [{f['severity']}] {f['summary']}{known}", "",
                  f"- oracle `{f['oracle']}`, system `{f['system']}`, config `{f['config']}`, "
                  f"seen {f['count']}x, shrunk: {f['shrunk']}, confirmed by repro.py: {f['confirmed']}",
                  f"- signature `{f['signature']}`",
                  f"- case: `{f['case_dir']}`; replay: `shapefuzz replay {f['case_dir']}`; "
                  f"repro: `python {f['case_dir']}/repro.py`", "", "```", f["program"], "```", "",
                  f["detail"], ""]
    if d.get("unconfirmed"):
        lines += ["## Unconfirmed (repro.py did not reproduce; not counted)", ""]
        lines += [f"- `{u['signature']}`: {u['summary']} ({u['case_dir']})" for u in d["unconfirmed"]]
        lines.append("")
    lines += ["## Outcomes per system and config", "", "| system | config | outcome | programs |",
              "|---|---|---|---|"]
    for system, cfgs in sorted(d["outcomes"].items()):
        for cfg, kinds in sorted(cfgs.items()):
            for kind, n in sorted(kinds.items()):
                lines.append(f"| {system} | {cfg} | {kind} | {n} |")
    lines += ["", "## Coverage", "", "ops: " + ", ".join(f"{k} {v}" for k, v in d["ops"].items()),
              "", "decisions: " + ", ".join(f"{k} {v}" for k, v in d["decisions"].items()), ""]
    return "\n".join(lines)


def render_html(d: dict[str, Any]) -> str:
    body = html.escape(render_md(d))
    return ("<!doctype html><html><head><meta charset='utf-8'><title>shapefuzz report</title>"
            "</head><body><pre>" + body + "</pre></body></html>\n")
