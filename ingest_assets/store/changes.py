"""Which chunk ids enter and leave the current view, recorded by the write that moves them.

No Dagster here. Every store transaction that can change what ``current_chunks`` shows (a
source written, a document version parsed, plan members replaced, plans retired or brought
back) reads the view for the documents (or plans) it touches before and after its writes, in
the same transaction, and appends the difference to ``chunk_changes``: one row per (plan key,
chunk id) that was ``added``, ``removed`` or ``changed``, with the run that did it. Chunks that
stay as they were are never listed, and a write that moves nothing appends nothing. Because the
rows are written in the transaction that moves the view, they can never disagree with it.

A text chunk's id names its document, level and text (and the text's occurrence), not the
document's version or offsets (``chunking.Chunk.id_for``), so a new version of a document shares
the ids of every chunk whose text an edit left alone: those are neither added nor removed. A
chunk whose text changed has a new id (the old one ``removed``, the new one ``added``). A kept
id whose row moved all the same (new offsets, parent, index, heading path or metadata) is
``changed``: a consumer re-reads its row, never its text, which the id fixes. What is compared
is what an export's row digest covers (``exports.views``): every column but the version id.

A plan is followed by its name: when a new key of the name goes live, the switch is recorded
under that key as the move from the old key's sets to the new key's (:func:`record_switch`), so
the rows of all the name's keys, in order, replay to what the name serves. Rows of one write are
read removals first.

Reads (:func:`changes_since`) are what ``ingest changes`` uses.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

from ingest_assets.store.arrow import ArrowSchema
from ingest_assets.store.lists import json_list, keys_filter
from ingest_assets.store.writes import insert

__all__ = [
    "CHANGES",
    "ChunkChange",
    "Place",
    "ViewScope",
    "change_counts",
    "changes_since",
    "local_run_id",
    "record_moves",
    "record_switch",
    "record_view_change",
    "tracked",
    "view_sets",
]

CHANGES = ArrowSchema(
    [
        ("run_id", "string"),
        ("plan_key", "string"),
        ("chunk_id", "string"),
        ("document_id", "string"),
        ("level", "int8"),
        ("change", "string"),
        ("at", "timestamp"),
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
    change: str  # 'added', 'removed' or 'changed' (a kept id whose row moved)
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


# (plan key, document id, role): a place of the current view, where it shows one set.
Place = tuple[str, str, str]
# Each place -> the set the current view shows there.
ViewSets = dict[Place, str]


def view_sets(con: duckdb.DuckDBPyConnection, scope: ViewScope) -> ViewSets:
    """The parent and child sets ``current_members`` shows in ``scope``, by plan, document and role.

    The view shows one set per (plan, document, role), so two states of it differ in chunks
    only where they differ in sets: reading the sets (a few rows a document) instead of every
    chunk keeps this cheap inside the write transaction, which on a lake holds the write lock.
    """
    if scope.empty:
        return {}
    # ``promoted`` directly, one row a document: ``current_members`` unions it three times,
    # and planning that view costs more than running it on a batch.
    select = (
        "SELECT plan_key, document_id::VARCHAR, parent_set, child_set FROM promoted WHERE state = 'live' AND "
    )
    rows: list[tuple[Any, ...]] = []
    if scope.document_ids:
        rows += con.execute(
            select + "document_id IN (SELECT unnest(?::JSON::UUID[]))", [json_list(scope.document_ids)]
        ).fetchall()
    if scope.plan_keys:
        rows += con.execute(
            select + "plan_key IN (SELECT unnest(?::JSON::VARCHAR[]))", [json_list(scope.plan_keys)]
        ).fetchall()
    sets: ViewSets = {}
    for plan, document, parent_set, child_set in rows:
        sets[(plan, document, "parent")] = parent_set
        sets[(plan, document, "child")] = child_set
    return sets


def _chunk_ids(con: duckdb.DuckDBPyConnection, set_keys: set[str]) -> dict[str, tuple[set[str], int]]:
    """The chunk ids and level of each of ``set_keys`` (a set's chunks share one level)."""
    found: dict[str, tuple[set[str], int]] = {}
    if not set_keys:
        return found
    for set_key, chunk_id, level in con.execute(
        "SELECT set_key, id::VARCHAR, level FROM chunks WHERE set_key IN (SELECT unnest(?::JSON::VARCHAR[]))",
        [json_list(sorted(set_keys))],
    ).fetchall():
        found.setdefault(set_key, (set(), int(level)))[0].add(chunk_id)
    return found


def record_view_change(
    con: duckdb.DuckDBPyConnection, run_id: str, before: ViewSets, scope: ViewScope, now: datetime
) -> int:
    """Append to ``chunk_changes`` what moved in ``scope`` since ``before`` (read in the same
    transaction before its writes, by :func:`view_sets`); returns the number of rows appended.

    Only places whose set changed are read: their old set's chunks that the new set lacks are
    ``removed``, the new set's that the old lacked ``added`` (chunk ids that stay are kept).
    """
    after = view_sets(con, scope)
    moves = {
        p: (before.get(p), after.get(p))
        for p in before.keys() | after.keys()
        if before.get(p) != after.get(p)
    }
    return record_moves(con, run_id, moves, now)


def record_switch(
    con: duckdb.DuckDBPyConnection, run_id: str, new_key: str, before: ViewSets, now: datetime
) -> int:
    """Append to ``chunk_changes`` what readers of a plan name saw move when ``new_key`` took
    over from the name's live key: ``before`` holds that key's sets (read in the same
    transaction before the switch), and every place is recorded under ``new_key``, as the move
    from the old key's set to the new key's there; returns the rows appended.

    So a chunk both keys serve is no ``removed`` and ``added`` pair (a consumer that follows the
    plan by its name would drop it), but nothing or, where its row differs, ``changed``: the
    same difference an export of the plan since one made before the switch writes.
    """
    after = view_sets(con, ViewScope.plans([new_key]))
    old = {(document, role): key for (_, document, role), key in before.items()}
    new = {(document, role): key for (_, document, role), key in after.items()}
    moves = {
        (new_key, *place): (old.get(place), new.get(place))
        for place in old.keys() | new.keys()
        if old.get(place) != new.get(place)
    }
    return record_moves(con, run_id, moves, now)


def record_moves(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    moves: dict[Place, tuple[str | None, str | None]],
    now: datetime,
) -> int:
    """Append to ``chunk_changes`` what the current view gained, lost and saw move where the set
    it shows moved (place -> (old set, new set), None: no set there); returns the rows appended.

    The old set's chunks that the new set lacks are ``removed``, the new set's that the old
    lacked ``added``; ids in both whose rows differ (but for the version) are ``changed``.
    """
    chunks = _chunk_ids(con, {k for pair in moves.values() for k in pair if k})
    moved = _moved_rows(con, [pair for pair in moves.values() if pair[0] and pair[1]])  # type: ignore[misc]
    nothing: tuple[set[str], int] = (set(), 0)
    rows = []
    for place in sorted(moves):
        plan, document, _ = place
        before, after = moves[place]
        old, old_level = chunks.get(before or "", nothing)
        new, new_level = chunks.get(after or "", nothing)
        changed = moved.get((before, after), set()) if before and after else set()
        for change, ids, level in (
            ("added", new - old, new_level),
            ("removed", old - new, old_level),
            ("changed", changed, new_level),
        ):
            rows += [
                {"run_id": run_id, "plan_key": plan, "chunk_id": c, "document_id": document, "level": level,
                 "change": change, "at": now}
                for c in sorted(ids)
            ]  # fmt: skip
    insert(con, "chunk_changes", rows, CHANGES)
    return len(rows)


# The columns of a chunk row that a kept id can change: every one ``current_chunks`` shows but
# the ids and the version (text and provenance are fixed by a text chunk's id, compared all the
# same: a page chunk's id does not fix them). The same columns as an export's row digest.
_ROW_COLUMNS = (
    '"index", text, chunker, chunker_hash, parent_id, provenance::VARCHAR, heading_path, '
    "content_kind, token_count, metadata::VARCHAR"
)


def _moved_rows_sql(keys: int) -> str:
    """The statement of :func:`_moved_rows` for ``keys`` set keys: the two sides' rows are read
    by a filter in the chunks scan, since a join on the pairs reads every stored chunk's columns
    and so costs in proportion to the store, not to the change."""
    return (
        "WITH pairs AS (SELECT p[1] AS old_set, p[2] AS new_set "
        "  FROM (SELECT unnest(?::JSON::VARCHAR[][]) AS p)), "
        "rows AS MATERIALIZED (SELECT set_key, id, row(" + _ROW_COLUMNS + ") AS content FROM chunks "
        "  WHERE " + keys_filter("set_key", keys) + ") "
        "SELECT pairs.old_set, pairs.new_set, n.id::VARCHAR FROM pairs "
        "JOIN rows o ON o.set_key = pairs.old_set "
        "JOIN rows n ON n.set_key = pairs.new_set AND n.id = o.id "
        "WHERE o.content IS DISTINCT FROM n.content"
    )


def _moved_rows(
    con: duckdb.DuckDBPyConnection, pairs: list[tuple[str, str]]
) -> dict[tuple[str, str], set[str]]:
    """For each (old set, new set), the ids both hold whose rows differ in :data:`_ROW_COLUMNS`."""
    found: dict[tuple[str, str], set[str]] = {}
    pairs = sorted({pair for pair in pairs if pair[0] != pair[1]})
    if not pairs:
        return found
    keys = sorted({key for pair in pairs for key in pair})
    for old_set, new_set, chunk_id in con.execute(
        _moved_rows_sql(len(keys)),
        [json.dumps(pairs), json_list(keys)],  # pairs of keys: a JSON text, as json_list makes for one list
    ).fetchall():
        found.setdefault((old_set, new_set), set()).add(chunk_id)
    return found


@contextmanager
def tracked(con: duckdb.DuckDBPyConnection, run_id: str, scope: ViewScope, now: datetime) -> Iterator[None]:
    """Record in ``chunk_changes`` what the writes inside this block (one transaction) move
    in ``scope`` of the current view."""
    before = view_sets(con, scope)
    yield
    record_view_change(con, run_id, before, scope, now)


def changes_since(
    con: duckdb.DuckDBPyConnection,
    *,
    since: datetime | None = None,
    run_ids: Sequence[str] | None = None,
    plan_keys: Sequence[str] | None = None,
) -> list[ChunkChange]:
    """The recorded changes (after ``since``, of ``run_ids``, under ``plan_keys``), oldest
    first, and of one write (one time) removals first: replayed in this order by chunk id,
    they give what the view shows."""
    query = (
        'SELECT run_id, plan_key, chunk_id::VARCHAR, document_id::VARCHAR, level, "change", "at" '
        "FROM chunk_changes WHERE TRUE"
    )
    params: list[Any] = []
    if since is not None:
        query += ' AND "at" > ?'
        params.append(since)
    if run_ids is not None:
        query += " AND list_contains(?::JSON::VARCHAR[], run_id)"
        params.append(json_list(run_ids))
    if plan_keys is not None:
        query += " AND list_contains(?::JSON::VARCHAR[], plan_key)"
        params.append(json_list(plan_keys))
    query += """ ORDER BY "at", "change" <> 'removed', plan_key, "change", chunk_id"""
    return [ChunkChange(*row) for row in con.execute(query, params).fetchall()]


def change_counts(
    con: duckdb.DuckDBPyConnection, run_id: str, since: datetime, plan_key: str | None
) -> dict[str, dict[str, int]]:
    """Per shard, how many chunk ids ``run_id`` added to, removed from and changed in the current view
    (of ``plan_key``, or every plan) after ``since``: one step's figures for its metadata."""
    rows = con.execute(
        'SELECT s.shard, c."change", count(*) FROM chunk_changes c '
        "JOIN (SELECT DISTINCT document_id, shard FROM sources) s USING (document_id) "
        'WHERE c.run_id = ? AND c."at" >= ? AND (? IS NULL OR c.plan_key = ?) GROUP BY ALL',
        [run_id, since, plan_key, plan_key],
    ).fetchall()
    counts: dict[str, dict[str, int]] = {}
    for shard, change, n in rows:
        counts.setdefault(shard, {"added": 0, "removed": 0, "changed": 0})[change] = n
    return counts
