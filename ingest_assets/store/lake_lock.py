"""The write locks of a DuckLake store: Postgres advisory locks in the lake's catalog database.

No Dagster here. Writes of different shards never touch the same rows: every row a shard's
transaction writes belongs to documents of that shard (sources, documents, chunk sets,
members, promotions, failures), and those transactions only insert (see ``schema.sql``), and
DuckLake commits two writers' inserts without a conflict. So a shard's write transaction takes:

* the *store* lock in shared mode, which any number of writers hold at once, and
* its shards' locks in exclusive mode, so two runs of one shard (a backfill and a sensor run)
  take turns: each sees what the other wrote before it decides what to insert.

Writers of different shards hold no lock in common: they write their Parquet files and commit
in parallel. The rare transactions that change what every shard reads (registering plans,
switching a plan live, a plan's embedding stage, compaction) take the store lock in exclusive
mode: they wait for the shard writers in flight and run alone. That exclusive time, and any
time spent waiting, is the serial part of the work (:data:`TIMES`).

Every lock is held by a session of this process, so a process that dies releases its locks with
its connection; they work across machines, since they all reach the same catalog.
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
from ingest_assets.store.shards import SHARDS

__all__ = ["POSTGRES_PREFIX", "LockTimes", "write_lock"]

POSTGRES_PREFIX = "ducklake:postgres:"
# Advisory locks are per database. The store lock is one 63-bit key; a shard's lock is the pair
# (namespace, shard number) in Postgres's two-key form, a namespace of 31 bits from a hash.
_KEY = int.from_bytes(hashlib.sha256(b"fingerprint-ingest store writes").digest()[:8], "big") >> 1
_SHARD_SPACE = int.from_bytes(hashlib.sha256(b"fingerprint-ingest shard writes").digest()[:4], "big") >> 1


@dataclass
class LockTimes:
    """This process's figures: seconds it waited for write locks, held the store lock alone
    (``exclusive``) and held shard locks (``shared``, in parallel with other shards' writers),
    and how many write transactions took locks. Waiting and exclusive time are the serial part
    of the work: what more writers cannot speed up."""

    waited: float = 0.0
    exclusive: float = 0.0
    shared: float = 0.0
    taken: int = 0

    @property
    def serial(self) -> float:
        """Seconds in anything serialized: waiting for a lock, or holding the store lock alone."""
        return self.waited + self.exclusive


TIMES = LockTimes()  # this process's figures (shard runs report them)
_guard = threading.Lock()  # one writer thread of this process at a time (the locks are per session)
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


Statements = list[tuple[str, list[int]]]


def _statements(shards: frozenset[str] | None) -> tuple[Statements, Statements]:
    """The lock and unlock statements of a transaction over ``shards`` (None: the whole store),
    always in one order (store lock, then shards by number), so two writers never deadlock."""
    if shards is None:
        return [("SELECT pg_advisory_lock(%s)", [_KEY])], [("SELECT pg_advisory_unlock(%s)", [_KEY])]
    numbers = sorted(SHARDS.index(s) for s in shards)
    take = [("SELECT pg_advisory_lock_shared(%s)", [_KEY])]
    take += [("SELECT pg_advisory_lock(%s, %s)", [_SHARD_SPACE, n]) for n in numbers]
    free = [("SELECT pg_advisory_unlock(%s, %s)", [_SHARD_SPACE, n]) for n in reversed(numbers)]
    free += [("SELECT pg_advisory_unlock_shared(%s)", [_KEY])]
    return take, free


@contextmanager
def write_lock(location: str, timeout: float, shards: frozenset[str] | None = None) -> Iterator[None]:
    """Hold the write locks of a transaction over ``shards`` for the block: the store lock shared
    and each shard's exclusively, or (``shards`` None) the store lock exclusively. Nothing is
    taken for a catalog that is not Postgres (DuckDB and SQLite catalogs take one writer process
    anyway).

    Raises:
        StoreError: Another writer held a lock longer than ``timeout`` seconds, or the catalog's
            server cannot be reached; the message names the store and what to do.
        ValueError: ``shards`` names a shard that does not exist.
    """
    if not location.startswith(POSTGRES_PREFIX):
        yield
        return
    import psycopg2

    unknown = sorted(set(shards or ()) - set(SHARDS))
    if unknown:
        raise ValueError(f"unknown shards {unknown}: shards are {SHARDS[0]}..{SHARDS[-1]}")
    conninfo = location[len(POSTGRES_PREFIX) :]
    take, free = _statements(shards)
    asked = time.perf_counter()
    with _guard:
        con = None
        held = 0
        try:
            con = _session(conninfo)
            with con.cursor() as cur:
                cur.execute("SET lock_timeout = %s", [f"{max(1, int(timeout * 1000))}ms"])
                for sql, args in take:
                    cur.execute(sql, args)
                    held += 1
        except psycopg2.errors.LockNotAvailable as error:
            _release(con, conninfo, free[len(free) - held :])
            raise StoreError(
                f"{location}: another writer held the store's write lock longer than {timeout:.0f} s "
                "(a long step of another run); wait for it, or raise lock_timeout"
            ) from error
        except psycopg2.Error as error:
            # The session may hold some of the locks: closing it releases them.
            _sessions.pop((os.getpid(), conninfo), None)
            if con is not None:
                con.close()
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
            spent = time.perf_counter() - taken
            if shards is None:
                TIMES.exclusive += spent
            else:
                TIMES.shared += spent
            _release(con, conninfo, free)


def _release(con: Any, conninfo: str, statements: Statements) -> None:
    """Run ``statements`` (unlocks) on ``con``; a session that is gone released its locks with it."""
    import psycopg2

    if con is None or not statements:
        return
    try:
        with con.cursor() as cur:
            for sql, args in statements:
                cur.execute(sql, args)
    except psycopg2.Error:
        # The session is gone, and with it the locks: the next write opens a new one.
        _sessions.pop((os.getpid(), conninfo), None)
        con.close()
