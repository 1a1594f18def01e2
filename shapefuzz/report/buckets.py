"""The bucket table's rows: a report's findings grouped by root cause (Note [buckets up to the
config]), read by the campaign report's writers and by the fleet report (merge.py, fleet.py)."""

from __future__ import annotations

from typing import Any

from shapefuzz.oracles.signature import Signature

__all__ = ["BUCKETS_TITLE", "bucket_rows", "root_key"]

#: the bucket table's heading (Note [buckets up to the config])
BUCKETS_TITLE = "Buckets (one line per root cause: a signature up to its config)"


def bucket_rows(d: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per root cause: the confirmed findings whose signatures differ only in the config
    they were met under (Note [buckets up to the config]), with their counts summed, when the
    first was met, the smallest program and its case. Unconfirmed findings are never bucket rows:
    their repro.py did not show them, so they get their own collapsed section
    (`unconfirmed_section`).

    Note [buckets up to the config]: a signature holds its config (Note [signature]), so one
    torch bug met under four compile configs is four signatures, each with its case and known
    entry; but it is one thing to act on. The table groups them and lists the configs. A config
    differential's config is its guilty toggle, a root cause of its own: never grouped."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for f in d["findings"]:
        groups.setdefault(root_key(f), []).append(f)
    rows = []
    for key, fs in groups.items():
        best = min(fs, key=lambda f: (f.get("n_instrs", 1 << 30), f["signature"]))
        first = min(fs, key=lambda f: f.get("first_s", float("inf")))
        rows.append(dict(best, signature=key, status=_status(fs),
                         count=sum(f.get("count", 1) for f in fs),
                         configs=sorted({f.get("config", "") for f in fs}),
                         **{k: first[k] for k in ("first_s", "first_program") if k in first}))
    # what fails the run first: new and regressed buckets, then known ones
    return sorted(rows, key=lambda r: (r["status"] == "known", -r.get("count", 1), r["signature"]))


def _status(fs: list[dict[str, Any]]) -> str:
    """A bucket's status: "regressed" when a finding's known entry is fixed in the running torch
    (Note [known versions]), else "new" when any finding is not known, else "known"."""
    if any(f.get("regressed_fix") for f in fs):
        return "regressed"
    return "new" if any(not f.get("known") for f in fs) else "known"


def root_key(f: dict[str, Any]) -> str:
    """A finding's signature with its config as `*` (Note [buckets up to the config]): read
    back with Signature.from_key and its bucket (Signature.bucket, which keeps a config
    differential, a front-end pair and a key that does not render back whole)."""
    config = f.get("config", "")
    sig = Signature.from_key(f["signature"], (config,)) if config else None
    return sig.bucket() if sig is not None and sig.config == config else f["signature"]
