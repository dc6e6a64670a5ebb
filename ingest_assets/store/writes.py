"""How rows go into the store's tables: batched inserts, superseding rows, body parts.

No Dagster here. Every value is a bound parameter or an Arrow column, never SQL text. The SQL
is what DuckLake runs too: no ``INSERT OR REPLACE`` / ``ON CONFLICT``, no UPDATE or DELETE in a
run's writes, and no reliance on a PRIMARY KEY for correctness (a changed pointer is a newer
row of its key; a write skips keys already stored by asking first, inside its transaction,
under its shards' write lock).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import duckdb

from ingest_assets.store.arrow import ArrowSchema, arrow_table
from ingest_assets.store.lists import json_list
from ingest_assets.store.rows import (
    MEMBERS,
    SOURCES,
    ChunkSetWrite,
    DocumentWrite,
    GraphSetWrite,
    MemberWrite,
    SetSummary,
    SourceRow,
)

__all__ = [
    "BODY_PART_BYTES",
    "body_parts",
    "chunk_set_rows",
    "compressed_body",
    "deflate_body",
    "document_rows",
    "graph_set_rows",
    "inflate_body",
    "insert",
    "member_rows",
    "source_rows",
    "stored_keys",
    "supersede",
]

# Inserts of at most this many rows go in as one VALUES list of parameters: building and
# scanning an Arrow table costs more than a handful of rows themselves.
VALUES_ROWS = 4

# The largest body part: DuckDB keeps strings this small inline in its segments (bigger parts
# go to overflow blocks and make checkpoints slower). A multiple of 3, as the schema 4
# migration cuts through base64.
BODY_PART_BYTES = 1998


def deflate_body(body: str) -> bytes:
    """Compress a document body for the store (level 1: fast, and JSON text shrinks about 8x)."""
    return zlib.compress(body.encode("utf-8"), 1)


def inflate_body(blob: bytes) -> str:
    """Return a stored body as text: zlib data, or plain JSON written before schema 2."""
    data = bytes(blob)
    return (zlib.decompress(data) if data[:1] != b"{" else data).decode("utf-8")


def compressed_body(document: DocumentWrite) -> bytes:
    """A document's body as the store keeps it (see :func:`deflate_body`)."""
    return document.body if isinstance(document.body, bytes) else deflate_body(document.body)


def body_parts(documents: Sequence[DocumentWrite]) -> list[dict[str, Any]]:
    """The ``document_body_parts`` rows of ``documents``: each compressed body in order."""
    rows = []
    for d in documents:
        body = compressed_body(d)
        document_id, version_id = str(d.document_id), str(d.version_id)
        for part, start in enumerate(range(0, max(len(body), 1), BODY_PART_BYTES)):
            rows.append(
                {
                    "document_id": document_id,
                    "version_id": version_id,
                    "part": part,
                    "bytes": body[start : start + BODY_PART_BYTES],
                }
            )
    return rows


def source_rows(rows: Sequence[SourceRow], now: datetime) -> list[dict[str, Any]]:
    """The ``sources`` rows of ``rows``, written at ``now``."""
    return [
        {
            **r.__dict__,
            "document_id": str(r.document_id),
            "version_id": str(r.version_id) if r.version_id else None,
            "updated_at": now,
        }
        for r in rows
    ]


def document_rows(documents: Sequence[DocumentWrite], now: datetime) -> list[dict[str, Any]]:
    """The ``documents`` rows of ``documents``, parsed at ``now``."""
    return [
        {
            "document_id": str(d.document_id),
            "version_id": str(d.version_id),
            "source_uri": d.uri,
            "kind": d.kind,
            "title": d.title,
            "text_length": d.text_length,
            "parsed_at": now,
        }
        for d in documents
    ]


def chunk_set_rows(sets: Sequence[ChunkSetWrite], now: datetime) -> list[dict[str, Any]]:
    """The ``chunk_sets`` rows of ``sets`` (with their summaries), made at ``now``."""
    return [
        {
            "set_key": s.set_key,
            "document_id": str(s.document_id),
            "version_id": str(s.version_id),
            "level": s.level,
            "fingerprint": s.fingerprint,
            "parent_fingerprint": s.parent_fingerprint,
            **SetSummary.of_rows(s.rows).columns(),
            "created_at": now,
        }
        for s in sets
    ]


def graph_set_rows(sets: Sequence[GraphSetWrite], now: datetime) -> list[dict[str, Any]]:
    """The ``graph_sets`` rows of ``sets``, made at ``now``."""
    return [
        {
            "set_key": s.set_key,
            "document_id": str(s.document_id),
            "version_id": str(s.version_id),
            "parent_set_key": s.parent_set_key,
            "child_set_key": s.child_set_key,
            "node_count": len(s.nodes),
            "edge_count": len(s.edges),
            "created_at": now,
        }
        for s in sets
    ]


def member_rows(members: Sequence[MemberWrite], now: datetime) -> list[dict[str, Any]]:
    """The ``plan_members`` rows of ``members``, updated at ``now``."""
    return [
        {
            "plan_key": m.plan_key,
            "document_id": str(m.document_id),
            "role": m.role,
            "set_key": m.set_key,
            "version_id": str(m.version_id),
            "based_on": m.based_on,
            "updated_at": now,
        }
        for m in members
    ]


def insert(
    con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[dict[str, Any]], schema: ArrowSchema
) -> None:
    """Insert ``rows`` through one Arrow table, or a handful as one VALUES list of bound
    parameters; an empty batch is a no-op. ``table`` and ``schema`` are this package's, never input."""
    if not rows:
        return
    columns = ", ".join(f'"{name}"' for name in schema.names)
    if len(rows) <= VALUES_ROWS:
        # The insert casts each value to its column's type, as it casts the Arrow columns.
        marks = "(" + ", ".join("?" for _ in schema.names) + ")"
        placeholders = ", ".join(marks for _ in rows)
        con.execute(
            f"INSERT INTO {table} ({columns}) VALUES {placeholders}",
            [row.get(name) for row in rows for name in schema.names],
        )
        return
    _batch = arrow_table(rows, schema)  # read by name in the SQL below
    # DuckDB finds the local Arrow table by its name (a replacement scan): cheaper than
    # registering and unregistering a view for each of many small writes.
    con.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM _batch")


def stored_keys(con: duckdb.DuckDBPyConnection, table: str, keys: Sequence[str]) -> set[str]:
    """Which of ``keys`` ``table`` (``chunk_sets`` or ``graph_sets``) holds already."""
    if not keys:
        return set()
    rows = con.execute(
        f"SELECT set_key FROM {table} WHERE list_contains(?::JSON::VARCHAR[], set_key)", [json_list(keys)]
    ).fetchall()
    return {r[0] for r in rows}


_UUID_COLUMNS = frozenset({"document_id", "version_id"})
# Per superseded table: its key columns and the schema of its rows (without ``seq``).
_SUPERSEDED: dict[str, tuple[tuple[str, ...], ArrowSchema]] = {
    "member_rows": (("plan_key", "document_id", "role"), MEMBERS),
    "source_rows": (("uri",), SOURCES),
}


def supersede(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[dict[str, Any]]) -> None:
    """Insert ``rows`` into ``table`` (``member_rows`` or ``source_rows``), each as the newest
    row of its key: ``seq`` one more than the key's newest stored (1 for a new key). Nothing is
    updated or deleted, so this commutes with other writers' inserts; the caller holds the
    write lock of the rows' shards, so no one else adds a row of the same key meanwhile.

    Raises:
        ValueError: Two of ``rows`` have the same key (which would be newest is undefined).
    """
    if not rows:
        return
    key_columns, schema = _SUPERSEDED[table]
    keys = [tuple(str(row[c]) for c in key_columns) for row in rows]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{table}: rows with the same key in one write")
    _batch = arrow_table(rows, schema)  # read by name below
    columns = ", ".join(f'"{name}"' for name in schema.names)
    # Ids travel as text (see rows._UUID): cast them so keys compare with the stored UUIDs.
    typed_columns = ", ".join(
        f'"{n}"::UUID AS "{n}"' if n in _UUID_COLUMNS else f'"{n}"' for n in schema.names
    )
    key_list = ", ".join(key_columns)
    key_match = " AND ".join(f"p.{c} = b.{c}" for c in key_columns)
    con.execute(
        f"WITH b AS (SELECT {typed_columns} FROM _batch) "
        f"INSERT INTO {table} ({columns}, seq) SELECT b.*, coalesce(p.seq, 0) + 1 FROM b "
        f"LEFT JOIN (SELECT {key_list}, max(t.seq) AS seq FROM {table} t "
        f"  SEMI JOIN b USING ({key_list}) GROUP BY {key_list}) p ON {key_match}"
    )
