"""The baseline's observations, kept across A/B campaigns.

Note [baseline cache]: a patch author runs A/B again and again against the same release, and
each run pays for the baseline's half of every program although the baseline never changed. So
each baseline observation is stored under a key of everything that decides it: the baseline's
torch build (version, the file it imports, hashes of the shape files and a digest of the sizes
and mtimes of every .py under torch/, from its probe), the environment variables that can change
what torch or Python does (BUILD_ENV), the .py and .pth files at the top of each PYTHONPATH
folder (a sitecustomize patch), shapefuzz's own source, the torch config and plugins, and the
job itself (program, system, config, input variants). A job found under its key is not sent to
the baseline's workers; the candidate's half still runs. Only outcomes that do not depend on the
machine's load are stored (NOT_STORED: a timeout, a crash, a memory kill, a shapefuzz bug).

A stored observation keeps its timing from the run that made it, which the slowdown oracle
compares like any other: a slowdown is still only a finding after its repro's interleaved timing
confirms it (oracles/ab.py).

The store is one SQLite file (several campaigns on one machine may share it) of pickled
observations, read with an unpickler that builds shapefuzz's own dataclasses and nothing else,
so a damaged or planted file cannot run code; an entry that does not load is a miss."""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import sqlite3
from collections.abc import Mapping
from dataclasses import is_dataclass
from enum import Enum
from pathlib import Path

import shapefuzz

__all__ = ["BUILD_ENV", "BaselineCache", "build_key", "default_path", "source_digest"]

#: prefixes of the environment variables that can change what the baseline observes
BUILD_ENV = ("TORCH", "PYTORCH", "SHAPEFUZZ", "PYTHON", "CUDA", "OMP", "MKL", "LD_")
NOT_STORED = frozenset({"timeout", "crash", "bug"})
_SAFE_BUILTINS = frozenset({"frozenset", "set", "complex", "slice", "range"})


def default_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "shapefuzz" / "baseline-observations.sqlite"


def source_digest() -> str:
    """shapefuzz's own source (the systems that make an observation are part of it)."""
    root = Path(shapefuzz.__file__).resolve().parent
    h = hashlib.sha256()
    for f in sorted([*root.rglob("*.py"), *(root.parent / "strategies").rglob("*.py")]):
        h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()


def _path_files(pythonpath: str) -> list:
    """(file, size, mtime) of the .py and .pth files at the top of each PYTHONPATH folder."""
    out = []
    for d in filter(None, pythonpath.split(os.pathsep)):
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for n in names:
            if n.endswith((".py", ".pth")):
                st = os.stat(os.path.join(d, n))
                out.append([os.path.join(d, n), st.st_size, st.st_mtime_ns])
    return out


def build_key(build: Mapping, env: Mapping[str, str], extra: object) -> str:
    """Note [baseline cache]: `build` is the baseline's probe (campaign/ab_pool.py build_info), `env`
    its environment, `extra` what else decides a job's observation (torch config, plugins)."""
    relevant = sorted((k, v) for k, v in env.items() if k.startswith(BUILD_ENV))
    data = [dict(build), relevant, _path_files(env.get("PYTHONPATH", "")), source_digest(), extra]
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


class _Unpickler(pickle.Unpickler):
    """Builds shapefuzz's dataclasses and Enums (a value looked up among the members, nothing
    run) and a few plain builtins, nothing else."""

    def find_class(self, module: str, name: str):
        if module == "builtins" and name in _SAFE_BUILTINS:
            return super().find_class(module, name)
        if module.startswith("shapefuzz.") and "." not in name:
            cls = super().find_class(module, name)
            if isinstance(cls, type) and (is_dataclass(cls) or issubclass(cls, Enum)):
                return cls
        raise pickle.UnpicklingError(f"{module}.{name} is not a shapefuzz record")


def _loads(blob: bytes):
    return _Unpickler(io.BytesIO(blob)).load()


class BaselineCache:
    """get / put of baseline observations under one build key (Note [baseline cache])."""

    def __init__(self, path: Path, key: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.key, self.path, self.hits, self.misses = key, str(path), 0, 0
        self.db = sqlite3.connect(str(path), timeout=30, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        # no fsync per stored observation: a crash loses the last few, which only run again
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS obs (key TEXT PRIMARY KEY, value BLOB)")

    def _key(self, job) -> str:
        text = "\0".join((self.key, job.system, job.config, job.program_json, job.variants_json))
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, job):
        row = self.db.execute("SELECT value FROM obs WHERE key = ?", (self._key(job),)).fetchone()
        obs = None
        if row is not None:
            try:
                obs = _loads(row[0])
            except Exception:  # a damaged entry is a miss (the job runs and replaces it)
                obs = None
        if obs is None:
            self.misses += 1
        else:
            self.hits += 1
        return obs

    def put(self, job, obs) -> None:
        if obs.outcome.status in NOT_STORED:
            return
        blob = pickle.dumps(obs, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.db.execute("INSERT OR REPLACE INTO obs VALUES (?, ?)", (self._key(job), blob))
        except sqlite3.Error:
            pass  # a full disk or a locked file costs a rerun later, never the campaign

    def write_stats(self, path: Path) -> None:
        """{"file", "hits", "misses"} of this campaign, for its report."""
        path.write_text(json.dumps({"file": self.path, "hits": self.hits, "misses": self.misses}) + "\n")

    def close(self) -> None:
        self.db.close()
