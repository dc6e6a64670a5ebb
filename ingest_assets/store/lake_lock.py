"""The write lock of a DuckLake store: a Postgres advisory lock in the lake's catalog database.

No Dagster here. DuckLake commits optimistically: two write transactions that overlap in time
conflict (the store makes sure they do, see ``Connections.transaction``), and the loser is run
again after a backoff. With several shard runs writing at once that is the common case, and
each loss costs the whole transaction plus its wait. So every write transaction of the store
first takes one advisory lock of the catalog database: writers queue in Postgres, which wakes
the next one the moment the lock is released, and the work outside transactions (parsing,
chunking, embedding, reads) stays parallel. The lock is held by a session of this process, so
a process that dies releases it with its connection; it works across machines, since they all
reach the same catalog. A conflict can still happen with a writer that does not take it (the
lake's own maintenance), and is retried as before.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ingest_assets.store.errors import StoreError

__all__ = ["POSTGRES_PREFIX", "LockTimes", "write_lock"]

POSTGRES_PREFIX = "ducklake:postgres:"
# One lock per catalog database (advisory locks are per database): a fixed 63-bit key.
_KEY = int.from_bytes(hashlib.sha256(b"fingerprint-ingest store writes").digest()[:8], "big") >> 1


@dataclass
class LockTimes:
    """Seconds this process waited for the write lock and held it (the serial part of its
    work: what more writers cannot speed up), and how many times it took it."""

    waited: float = 0.0
    held: float = 0.0
    taken: int = 0


TIMES = LockTimes()  # this process's figures (shard runs report them)
_guard = threading.Lock()  # one writer thread of this process at a time (the Postgres lock is per session)
_sessions: dict[tuple[int, str], Any] = {}  # (pid, conninfo) -> the psycopg2 connection holding locks


def _session(conninfo: str) -> Any:
    """This process's lock session on the catalog (made on first use, again after a fork)."""
    import psycopg2  # the lake extra installs it (dagster-postgres needs it too)

    key = (os.getpid(), conninfo)
    con = _sessions.get(key)
    if con is None or con.closed:
        con = psycopg2.connect(conninfo)
        con.autocommit = True
        _sessions[key] = con
    return con


@contextmanager
def write_lock(location: str, timeout: float) -> Iterator[None]:
    """Hold the store's write lock for the block (nothing is taken for a catalog that is not
    Postgres: DuckDB and SQLite catalogs take one writer process anyway).

    Raises:
        StoreError: Another writer held the lock longer than ``timeout`` seconds, or the
            catalog's server cannot be reached; the message names the store and what to do.
    """
    if not location.startswith(POSTGRES_PREFIX):
        yield
        return
    import psycopg2

    conninfo = location[len(POSTGRES_PREFIX) :]
    asked = time.perf_counter()
    with _guard:
        try:
            con = _session(conninfo)
            with con.cursor() as cur:
                cur.execute("SET lock_timeout = %s", [f"{max(1, int(timeout * 1000))}ms"])
                cur.execute("SELECT pg_advisory_lock(%s)", [_KEY])
        except psycopg2.errors.LockNotAvailable as error:
            raise StoreError(
                f"{location}: another writer held the store's write lock longer than {timeout:.0f} s "
                "(a long step of another run); wait for it, or raise lock_timeout"
            ) from error
        except psycopg2.Error as error:
            _sessions.pop((os.getpid(), conninfo), None)
            raise StoreError(
                f"{location}: cannot take the store's write lock ({str(error).strip()}); check that "
                "its Postgres server runs and the conninfo in INGEST_STORE"
            ) from error
        taken = time.perf_counter()
        TIMES.waited += taken - asked
        TIMES.taken += 1
        try:
            yield
        finally:
            TIMES.held += time.perf_counter() - taken
            try:
                with con.cursor() as cur:
                    cur.execute("SELECT pg_advisory_unlock(%s)", [_KEY])
            except psycopg2.Error:
                # The session is gone, and with it the lock: the next write opens a new one.
                _sessions.pop((os.getpid(), conninfo), None)
                con.close()
