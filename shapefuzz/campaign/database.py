"""Hypothesis example databases for campaigns (Note [shared database] in campaign.py).

`--database redis://HOST:PORT[/DB]` shares shrunk findings between campaigns on several
machines through Redis (Hypothesis's RedisExampleDatabase, package `hypothesis[redis]`);
`--database dir:PATH` (or a plain path) does the same for processes on one machine through a
directory. Entries are namespaced by what the choice sequences mean (program kinds and generator
settings), so campaigns with other generators sharing one server do not replay each other's
examples as garbage."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from shapefuzz import BadInput
from shapefuzz.program import ProgramError
from shapefuzz.program.kinds import load_program

__all__ = ["DatabaseError", "Namespaced", "import_shared", "open_database"]


class DatabaseError(BadInput):
    """The --database value is malformed or its server cannot be reached."""


class Namespaced(ExampleDatabase):
    """Every key prefixed with a namespace: one Redis server, many kinds of campaign."""

    def __init__(self, inner: ExampleDatabase, namespace: bytes):
        super().__init__()
        self.inner, self.prefix = inner, namespace + b":"

    def save(self, key: bytes, value: bytes) -> None:
        self.inner.save(self.prefix + key, value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self.inner.fetch(self.prefix + key)

    def delete(self, key: bytes, value: bytes) -> None:
        self.inner.delete(self.prefix + key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.inner.move(self.prefix + src, self.prefix + dest, value)

    def __repr__(self) -> str:
        return f"Namespaced({self.inner!r}, {self.prefix!r})"


def namespace_of(description: object) -> bytes:
    return hashlib.sha256(json.dumps(description, sort_keys=True).encode()).hexdigest()[:16].encode()


def open_database(url: str, description: object) -> ExampleDatabase:
    """A database for `url`, namespaced by `description` (what the generator produces)."""
    ns = namespace_of(description)
    if url.startswith(("redis://", "rediss://", "unix://")):
        return Namespaced(_redis(url), b"shapefuzz:" + ns)
    path = url.removeprefix("dir:")
    if not path or "://" in path:
        raise DatabaseError(f"--database {url!r}: expected redis://HOST:PORT[/DB] or dir:PATH")
    return Namespaced(DirectoryBasedExampleDatabase(path), ns)


def _redis(url: str) -> ExampleDatabase:
    try:
        import redis
        from hypothesis.extra.redis import RedisExampleDatabase
    except ImportError:
        raise DatabaseError("--database redis://...: the redis client is not installed; "
                            "pip install 'hypothesis[redis]'") from None
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=5)
        client.ping()
    except ValueError as e:
        raise DatabaseError(f"--database {url!r}: {e}") from None
    except redis.RedisError as e:
        raise DatabaseError(f"--database {url!r}: cannot reach Redis ({e}); start redis-server "
                            "there or fix the address") from None
    return RedisExampleDatabase(client, key_prefix=b"shapefuzz-example:")


def import_shared(camp, key: bytes) -> None:
    """Note [shared database] (engine.py): every program another campaign saved under `key` is
    evaluated and its findings recorded as shrunk; one that no longer fails is deleted."""
    db = camp.cfg.database
    for value in sorted(db.fetch(key)):
        try:
            program = load_program(json.loads(value))  # data from elsewhere: validated
        except (ProgramError, ValueError, RecursionError):
            db.delete(key, value)
            continue
        ev = camp.evaluate(program, camp.cfg.targets)
        camp.stats.db_replays += 1
        camp.record(ev, program, shrunk=True)  # shrunk by whichever campaign saved it
        if not ev.findings:
            db.delete(key, value)  # fixed: as Hypothesis drops examples that pass
    camp.save_checkpoint(force=True)
