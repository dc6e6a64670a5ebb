"""Which chunk ids enter and leave the current view, recorded by the write that moves them.

No Dagster here. Every store transaction that can change what ``current_chunks`` shows (a
source written, a document version parsed, plan members replaced, plans retired or brought
back) reads the view for the documents (or plans) it touches before and after its writes, in
the same transaction, and appends the difference to ``chunk_changes``: one row per (plan key,
chunk id) that was ``added`` or ``removed``, with the run that did it. Chunks that stay are
never listed, and a write that moves nothing appends nothing. Because the rows are written in
the transaction that moves the view, they can never disagree with it.

Reads (:func:`changes_since`) are what ``ingest changes`` and the exports' ``--since`` use.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb
import pyarrow as pa

from ingest_assets.store.writes import insert

__all__ = [
    "CHANGES",
    "ChunkChange",
    "ViewScope",
    "change_counts",
    "changes_since",
    "local_run_id",
    "record_view_change",
    "tracked",
    "view_ids",
]

CHANGES = pa.schema(
    [
        ("run_id", pa.string()),
        ("plan_key", pa.string()),
        ("chunk_id", pa.string()),
        ("document_id", pa.string()),
        ("level", pa.int8()),
        ("change", pa.string()),
        ("at", pa.timestamp("us")),
    ]
)


def local_run_id() -> str:
    """A run id for writes made outside Dagster (the engine driven alone, tests, benchmarks)."""
    return f"local-{uuid.uuid4().hex[:16]}"


@dataclass(frozen=True)
class ChunkChange:
    """One row of ``chunk_changes``."""

    run_id: str
    plan_key: str
    chunk_id: str
    document_id: str
    level: int
    change: str  # 'added' or 'removed'
    at: datetime


@dataclass(frozen=True)
class ViewScope:
    """What part of the current view one write can move: some documents, or whole plans."""

    document_ids: tuple[str, ...] = ()
    plan_keys: tuple[str, ...] = ()

    @classmethod
    def documents(cls, ids: Iterable[Any]) -> ViewScope:
        return cls(document_ids=tuple(sorted({str(i) for i in ids})))

    @classmethod
    def plans(cls, keys: Iterable[str]) -> ViewScope:
        return cls(plan_keys=tuple(sorted(set(keys))))

    @property
    def empty(self) -> bool:
        return not self.document_ids and not self.plan_keys


_ViewRow = tuple[str, str, str, int]  # plan_key, chunk id, document id, level


def view_ids(con: duckdb.DuckDBPyConnection, scope: ViewScope) -> set[_ViewRow]:
    """The (plan key, chunk id, document id, level) rows ``current_chunks`` shows in ``scope``."""
    if scope.empty:
        return set()
    select = "SELECT plan_key, id::VARCHAR, document_id::VARCHAR, level FROM current_chunks "
    rows: list[tuple[Any, ...]] = []
    if scope.document_ids:
        # A semi-join: DuckDB filters the view's members by document before joining chunks.
        rows += con.execute(
            select + "WHERE document_id IN (SELECT unnest(?::UUID[]))", [list(scope.document_ids)]
        ).fetchall()
    if scope.plan_keys:
        rows += con.execute(
            select + "WHERE plan_key IN (SELECT unnest(?::VARCHAR[]))", [list(scope.plan_keys)]
        ).fetchall()
    return {(p, c, d, int(level)) for p, c, d, level in rows}


def record_view_change(
    con: duckdb.DuckDBPyConnection, run_id: str, before: set[_ViewRow], scope: ViewScope, now: datetime
) -> int:
    """Append to ``chunk_changes`` what moved in ``scope`` since ``before`` (read in the same
    transaction before its writes); returns the number of rows appended."""
    after = view_ids(con, scope)
    rows = [
        {"run_id": run_id, "plan_key": p, "chunk_id": c, "document_id": d, "level": lv, "change": change,
         "at": now}
        for change, moved in (("added", after - before), ("removed", before - after))
        for p, c, d, lv in sorted(moved)
    ]  # fmt: skip
    insert(con, "chunk_changes", rows, CHANGES)
    return len(rows)


@contextmanager
def tracked(con: duckdb.DuckDBPyConnection, run_id: str, scope: ViewScope, now: datetime) -> Iterator[None]:
    """Record in ``chunk_changes`` what the writes inside this block (one transaction) move
    in ``scope`` of the current view."""
    before = view_ids(con, scope)
    yield
    record_view_change(con, run_id, before, scope, now)


def changes_since(
    con: duckdb.DuckDBPyConnection,
    *,
    since: datetime | None = None,
    run_ids: Sequence[str] | None = None,
    plan_key: str | None = None,
) -> list[ChunkChange]:
    """The recorded changes (after ``since``, of ``run_ids``, of ``plan_key``), oldest first."""
    query = (
        'SELECT run_id, plan_key, chunk_id::VARCHAR, document_id::VARCHAR, level, "change", "at" '
        "FROM chunk_changes WHERE TRUE"
    )
    params: list[Any] = []
    if since is not None:
        query += ' AND "at" > ?'
        params.append(since)
    if run_ids is not None:
        query += " AND list_contains(?, run_id)"
        params.append(list(run_ids))
    if plan_key is not None:
        query += " AND plan_key = ?"
        params.append(plan_key)
    query += ' ORDER BY "at", plan_key, "change", chunk_id'
    return [ChunkChange(*row) for row in con.execute(query, params).fetchall()]


def change_counts(
    con: duckdb.DuckDBPyConnection, run_id: str, since: datetime, plan_key: str | None
) -> dict[str, dict[str, int]]:
    """Per shard, how many chunk ids ``run_id`` added to and removed from the current view
    (of ``plan_key``, or every plan) after ``since``: one step's figures for its metadata."""
    rows = con.execute(
        'SELECT s.shard, c."change", count(*) FROM chunk_changes c '
        "JOIN (SELECT DISTINCT document_id, shard FROM sources) s USING (document_id) "
        'WHERE c.run_id = ? AND c."at" >= ? AND (? IS NULL OR c.plan_key = ?) GROUP BY ALL',
        [run_id, since, plan_key, plan_key],
    ).fetchall()
    counts: dict[str, dict[str, int]] = {}
    for shard, change, n in rows:
        counts.setdefault(shard, {"added": 0, "removed": 0})[change] = n
    return counts
