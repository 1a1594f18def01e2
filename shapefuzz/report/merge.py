"""`shapefuzz report --merge DIR [DIR ...] --out MERGED`: one fleet report from the report.json
of several campaigns (the machines of one Redis-shared campaign, Note [shared database]).

Note [fleet report]: the merged report.json is a campaign report of schema 1 (load_report reads
it, the same writers render it, `shapefuzz report MERGED` re-renders it) plus a `campaigns` list,
one row per merged campaign. Its invariants:
- one finding per signature: counts summed over the campaigns that met it, the earliest
  `first_s` (with `first_campaign`), `campaigns` (the folders that met it, confirmed or not),
  confirmed if some campaign confirmed it (then it is a finding and not an unconfirmed entry),
  new if some campaign found it new (known only when known everywhere), pre-existing only when
  every campaign's baseline showed it; the report's buckets group these rows by root cause
  as a campaign's do (Note [buckets up to the config]);
- the case is the original folder (`case_dir`, absolute), never a copy: a campaign's report
  links its own findings/ folder and copies nothing, and a fleet's cases are already on disk;
  `case_href` is the link from the merged report to it;
- additive counters (programs, wall, campaign and CPU seconds, outcomes, ops, z3 verdicts, the
  time split ...) are summed; what is one campaign's alone (timeline, torch coverage,
  program_set, the A/B section, the generation stop) is left out of the fleet totals and the
  per-campaign facts are in `campaigns`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shapefuzz import BadInput
from shapefuzz.report import load_report, write_report

__all__ = ["CampaignReport", "MergeError", "load_campaigns", "merge", "write_merged"]

#: top-level numbers that add up over campaigns (seconds summed are machine-seconds)
ADDITIVE = ("elapsed_s", "campaign_s", "budget_s", "programs", "valid_programs", "shrink_runs",
            "db_replays")
#: nested {key: ... number} tables that add up key by key
NESTED_ADDITIVE = ("outcomes", "error_messages", "ops", "decisions", "op_families", "z3",
                   "z3_verdicts", "time_split")
#: what the writers read from each finding row (a row without one would fail while rendering)
FINDING_KEYS = ("signature", "oracle", "severity", "system", "config", "summary", "detail",
                "case_dir", "program")


class MergeError(BadInput):
    """The campaigns cannot be merged; the message says which folder and what to do."""


@dataclass(frozen=True, slots=True)
class CampaignReport:
    """One campaign's report.json, read and checked."""

    folder: Path  # the folder holding report.json (its findings/ holds the cases)
    label: str  # the folder as the user named it: how the fleet report names this campaign
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One campaign's row for a signature (from its findings or its unconfirmed list)."""

    campaign: str
    row: dict[str, Any]
    confirmed: bool


# ---- reading -----------------------------------------------------------------------------------
def load_campaigns(folders: Iterable[str | Path]) -> tuple[CampaignReport, ...]:
    """Each folder's report, checked; MergeError (a BadInput: one line, exit 2) when there is
    none, one cannot be read or merged, or a campaign is given twice."""
    folders = [Path(f) for f in folders]
    if not folders:
        raise MergeError("--merge: no campaign folder given; usage: shapefuzz report --merge DIR "
                         "[DIR ...] --out MERGED")
    out = tuple(_load_one(f) for f in folders)
    seen: dict[Path, str] = {}
    for c in out:
        if c.folder.resolve() in seen:  # its counts would be summed twice
            raise MergeError(f"--merge: {seen[c.folder.resolve()]} and {c.label} are the same "
                             "campaign folder; give each campaign once")
        seen[c.folder.resolve()] = c.label
    _same_torch(out)
    return out


def _load_one(path: Path) -> CampaignReport:
    data = load_report(path)  # ReportError (a BadInput) for a missing, unreadable or bad file
    folder = path if path.is_dir() else path.parent
    if "campaigns" in data:  # its campaigns, merged with one of them again, would count twice
        raise MergeError(f"{path}: a merged report; merge the campaign folders it lists instead")
    bad = next((k for k in ADDITIVE if not _is_number(data.get(k, 0))), None)
    if bad:
        raise MergeError(f"{path}: malformed report ({bad} is {data[bad]!r}, expected a number)")
    for key in ("findings", "unconfirmed"):
        for row in data.get(key) or []:
            _check_row(path, key, row)
    return CampaignReport(folder, str(path), data)


def _check_row(path: Path, key: str, row: Any) -> None:
    missing = [k for k in FINDING_KEYS if not isinstance(row, dict) or not isinstance(row.get(k), str)]
    if missing:
        raise MergeError(f"{path}: malformed report (a row of {key} lacks {', '.join(missing)})")


def _same_torch(campaigns: tuple[CampaignReport, ...]) -> None:
    """A fleet campaign fuzzes one torch. Campaigns of two torch builds are not merged: a bucket
    would not say which torch has the bug, and a finding's known / regressed status depends on
    the torch it ran on (Note [known versions]). Merge each torch's campaigns on their own."""
    versions = {c.data["torch_version"]: c.label for c in campaigns}
    if len(versions) > 1:
        listed = ", ".join(f"{label}: torch {v}" for v, label in versions.items())
        raise MergeError(f"--merge: the campaigns ran on different torch versions ({listed}); "
                         "merge the campaigns of each torch separately")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# ---- merging -----------------------------------------------------------------------------------
def merge(campaigns: tuple[CampaignReport, ...], out: Path) -> dict[str, Any]:
    """The fleet report's data (Note [fleet report]); `out` is where it will be written (the
    case links are relative to it)."""
    data: dict[str, Any] = {"torch_version": campaigns[0].data["torch_version"],
                            "seed": [c.data["seed"] for c in campaigns]}
    for key in ADDITIVE:
        data[key] = sum(c.data.get(key, 0) for c in campaigns)
    for key in NESTED_ADDITIVE:
        tables = [(c.label, c.data[key]) for c in campaigns if c.data.get(key)]
        if tables:
            data[key] = _add_tables(key, tables)
    data.update(_rates(data), **_unions(campaigns))
    data["findings"], data["unconfirmed"] = _merge_findings(campaigns, out)
    data["new_findings"] = sum(not f["known"] and not f["pre_existing"] for f in data["findings"])
    data["shapefuzz_bugs"] = [dict(b, campaign=c.label) for c in campaigns
                              for b in c.data.get("shapefuzz_bugs") or []]
    data["campaigns"] = [_campaign_row(c) for c in campaigns]
    return data


def _rates(d: dict[str, Any]) -> dict[str, float]:
    """Over the summed wall seconds: programs per machine-second, whatever ran concurrently."""
    return {"valid_fraction": d["valid_programs"] / d["programs"] if d["programs"] else 0.0,
            "throughput": d["programs"] / d["elapsed_s"] if d["elapsed_s"] else 0.0}


def _add_tables(key: str, tables: list[tuple[str, Any]]) -> Any:
    total: dict[str, Any] = {}
    for label, table in tables:
        _check_table(table, f"{label}: {key}")
        total = _add(total, table, f"{label}: {key}")
    return total


def _add(a: Any, b: Any, where: str) -> Any:
    """a + b, key by key for dicts (a key one side lacks counts 0)."""
    if _is_number(a) and _is_number(b):
        return a + b
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: _add(a[k], b[k], f"{where}.{k}") if k in a and k in b else a.get(k, b.get(k))
                for k in sorted(a.keys() | b.keys())}
    raise MergeError(f"{where}: malformed report (a {type(b).__name__} where another campaign "
                     f"has a {type(a).__name__})")


def _check_table(table: Any, where: str) -> None:
    """A table of counts: a dict whose leaves are numbers (else its report is malformed)."""
    if not isinstance(table, dict):
        raise MergeError(f"{where}: malformed report ({table!r} is not a table of counts)")
    for k, v in table.items():
        if not _is_number(v):
            _check_table(v, f"{where}.{k}")


def _unions(campaigns: tuple[CampaignReport, ...]) -> dict[str, Any]:
    """What ran anywhere, and the versions when every campaign had the same ones."""
    out: dict[str, Any] = {
        "systems": sorted({s for c in campaigns for s in c.data.get("systems") or []}),
        "targets": [list(t) for t in sorted({tuple(t) for c in campaigns for t in c.data.get("targets") or []})],
        "skipped_configs": _unique([k for c in campaigns for k in c.data.get("skipped_configs") or []]),
        "resumed": any(c.data.get("resumed") for c in campaigns)}
    versions = {json.dumps(c.data.get("versions"), sort_keys=True) for c in campaigns}
    if len(versions) == 1 and campaigns[0].data.get("versions"):
        out["versions"] = campaigns[0].data["versions"]
    return out


def _unique(items: list[Any]) -> list[Any]:
    seen = {json.dumps(x, sort_keys=True): x for x in items}
    return [seen[k] for k in sorted(seen)]


def _campaign_row(c: CampaignReport) -> dict[str, Any]:
    d = c.data
    cpu = ((d.get("time_split") or {}).get("cpu_s") or {}).get("total")
    return {"folder": c.label, "path": str(c.folder.resolve()), "seed": d["seed"],
            "torch_version": d["torch_version"], "programs": d["programs"],
            "valid_programs": d["valid_programs"], "elapsed_s": d["elapsed_s"], "cpu_s": cpu,
            "findings": len(d["findings"]), "new_findings": d.get("new_findings"),
            "unconfirmed": len(d.get("unconfirmed") or []), "db_replays": d.get("db_replays", 0),
            "command": d.get("command", ""), "program_set": d.get("program_set", "")}


# ---- findings ----------------------------------------------------------------------------------
def _merge_findings(campaigns: tuple[CampaignReport, ...], out: Path) -> tuple[list, list]:
    """(findings, unconfirmed), one row per signature (Note [fleet report])."""
    by_sig: dict[str, list[Occurrence]] = {}
    for c in campaigns:
        for key, confirmed in (("findings", True), ("unconfirmed", False)):
            for row in c.data.get(key) or []:
                row = dict(row, case_dir=_case_path(c.folder, row["case_dir"]))
                by_sig.setdefault(row["signature"], []).append(Occurrence(c.label, row, confirmed))
    rows = [_merged_row(occ, out) for occ in by_sig.values()]
    rows.sort(key=lambda r: (r["known"], -r["count"], r["signature"]))  # what fails a run first
    return [r for r in rows if r["confirmed"]], [r for r in rows if not r["confirmed"]]


def _case_path(folder: Path, case_dir: str) -> str:
    """Where the case is now: a campaign writes DIR/findings/<name> and records it as named then
    (relative to where it ran, or on another machine); the folder given here is DIR today."""
    p = Path(case_dir)
    if p.parent.name == "findings":
        return str(folder.resolve() / "findings" / p.name)
    return case_dir


def _merged_row(occ: list[Occurrence], out: Path) -> dict[str, Any]:
    confirmed = [o for o in occ if o.confirmed]
    # the case to look at: the smallest program among those a repro.py confirmed
    best = min(confirmed or occ, key=lambda o: o.row.get("n_instrs", 1 << 30)).row
    first = min(occ, key=lambda o: o.row.get("first_s", float("inf")))
    known = [o.row for o in occ if o.row.get("known")]
    row = dict(best, count=sum(o.row.get("count", 1) for o in occ),
               campaigns=sorted({o.campaign for o in occ}, key=[o.campaign for o in occ].index),
               confirmed=bool(confirmed), known=len(known) == len(occ),
               known_note=known[0].get("known_note", "") if len(known) == len(occ) else "",
               regressed_fix=next((o.row["regressed_fix"] for o in occ if o.row.get("regressed_fix")), ""),
               pre_existing=all(o.row.get("pre_existing") for o in occ),
               shrunk=any(o.row.get("shrunk") for o in occ),
               case_href=os.path.relpath(best["case_dir"], out.resolve()))
    if "first_s" in first.row:
        row.update(first_s=first.row["first_s"], first_program=first.row.get("first_program"),
                   first_campaign=first.campaign)
    return row


# ---- writing and rendering ---------------------------------------------------------------------
def write_merged(folders: Iterable[str | Path], out: str | Path) -> Path:
    """Merge the campaigns in `folders` into `out` (report.json, report.md, report.html)."""
    out = Path(out)
    campaigns = load_campaigns(folders)
    _check_out(out, campaigns)
    data = merge(campaigns, out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise MergeError(f"--out {out}: cannot create it ({e.strerror or e}); give another --out") from None
    write_report(out, data)
    return out


def _check_out(out: Path, campaigns: tuple[CampaignReport, ...]) -> None:
    """--out must not hold a campaign's report: writing there would replace that campaign's
    report.json (a merged report there is replaced: merging again is how a fleet report is
    brought up to date)."""
    if any(out.resolve() == c.folder.resolve() for c in campaigns):
        raise MergeError(f"--out {out} is one of the campaigns merged; give a new folder")
    try:
        held = json.loads((out / "report.json").read_text())
    except (OSError, ValueError):
        return  # no report there (or not a readable one, which no campaign could use either)
    if not isinstance(held, dict) or "campaigns" not in held:
        raise MergeError(f"--out {out} holds a campaign's report.json; give a new folder")
