"""A merged report's own sections (Note [fleet report] in merge.py): the campaigns merged, and
which of them met each root cause. Rendered by the report writers (report/__init__.py), which
merge.py calls to write the merged report: so these sit below both."""

from __future__ import annotations

from typing import Any

from shapefuzz.report.buckets import bucket_rows, root_key
from shapefuzz.report.markdown import to_html

__all__ = ["fleet_html", "fleet_md"]


def fleet_md(d: dict[str, Any]) -> list[str]:
    """report.md's section of a merged report: the campaigns, and which met each root cause."""
    if not d.get("campaigns"):
        return []
    out = [f"## Campaigns merged ({len(d['campaigns'])})", "",
           "| campaign | seed | torch | programs | valid | wall s | CPU s | findings | new | unconfirmed |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for c in d["campaigns"]:
        cpu = "-" if c.get("cpu_s") is None else f"{c['cpu_s']:.1f}"
        out.append(f"| {c['folder']} | {c['seed']} | {c['torch_version']} | {c['programs']} | "
                   f"{c['valid_programs']} | {c['elapsed_s']:.1f} | {cpu} | {c['findings']} | "
                   f"{c.get('new_findings', '-')} | {c['unconfirmed']} |")
    return out + [""] + _met_by(d)


def _met_by(d: dict[str, Any]) -> list[str]:
    """One line per bucket (in the bucket table's order): the campaigns that met it."""
    met: dict[str, list[str]] = {}
    for f in d["findings"]:
        names = met.setdefault(root_key(f), [])
        names += [c for c in f.get("campaigns", []) if c not in names]
    if not met:
        return []
    return (["Root causes by campaign:", ""]
            + [f"- `{r['signature']}`: {', '.join(met[r['signature']])}" for r in bucket_rows(d)] + [""])


def fleet_html(d: dict[str, Any]) -> list[str]:
    return [to_html("\n".join(fleet_md(d)))] if d.get("campaigns") else []
