"""A JSON-lines file of one row per mutant id: what makes the benchmark resumable. A row is
appended and flushed to disk as soon as it is known, so a run killed at any point loses at most
the mutant it was working on; on reading, the last row of an id wins and a torn last line (the
kill came mid-write) is skipped."""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["JsonlStore"]


class JsonlStore:
    """Rows keyed by their "id", restricted to those whose `key` fields equal `match` (a row
    measured under another torch, budget or seed is not this run's: it is kept in the file,
    and not resumed)."""

    def __init__(self, path: Path, match: dict | None = None, since: tuple[str, ...] = ()) -> None:
        """`since`: fields of `match` that rows written before the field existed lack; such a
        row matches on the other fields."""
        self.path, self.match, self.since = Path(path), dict(match or {}), since
        self.rows: dict[str, dict] = {}
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(row, dict) and "id" in row and self._ours(row):
                    self.rows[row["id"]] = row

    def _ours(self, row: dict) -> bool:
        return all(row.get(k, v if k in self.since else None) == v for k, v in self.match.items())

    def __contains__(self, mutant_id: str) -> bool:
        return mutant_id in self.rows

    def get(self, mutant_id: str) -> dict | None:
        return self.rows.get(mutant_id)

    def add(self, row: dict) -> None:
        row = {**row, **self.match}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        torn = self.path.exists() and self.path.stat().st_size > 0 \
            and not self.path.read_bytes().endswith(b"\n")
        with open(self.path, "a") as fh:
            fh.write(("\n" if torn else "") + json.dumps(row, sort_keys=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self.rows[row["id"]] = row
