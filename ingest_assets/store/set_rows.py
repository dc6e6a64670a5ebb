"""Reading the chunk rows of stored sets, grouped by set (no Dagster here).

The store's ``chunk_rows_many`` and ``graph_rows`` read through :func:`rows_by_set`; the
column lists are SQL written in this module, never input.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import duckdb

from ingest_assets.store.lists import json_list

__all__ = ["CHUNK_COLUMNS", "EMBED_COLUMNS", "GRAPH_COLUMNS", "chunk_dicts", "rows_by_set"]

# What a Chunk-shaped dict needs of each row, JSON still text.
CHUNK_COLUMNS = (
    'id, document_id, "index", text, provenance, heading_path, content_kind, chunker, '
    "chunker_hash, level, parent_id, metadata, created_at"
)
# What an embedded text needs of each row (``IngestStore.embedding_rows``): the id as text (a
# uuid.UUID object per id cost more than the rest of the row) and what contextual text reads.
EMBED_COLUMNS = "id::VARCHAR, text, heading_path, metadata::VARCHAR"
# What graph records need of each row (GRAPH_ROW_COLUMNS), ids as text and JSON undecoded.
GRAPH_COLUMNS = (
    'id::VARCHAR, document_id::VARCHAR, "index", provenance::VARCHAR, heading_path, '
    "content_kind, chunker, chunker_hash, level, parent_id::VARCHAR, metadata::VARCHAR, created_at"
)


def rows_by_set(
    con: duckdb.DuckDBPyConnection, columns: str, set_keys: Iterable[str]
) -> tuple[list[str], dict[str, list[tuple[Any, ...]]]]:
    """The column names and, per set (every requested key present), its chunk rows in index
    order; ``columns`` is one of this module's column lists."""
    keys = sorted(set(set_keys))
    if not keys:
        return [], {}
    cursor = con.execute(
        # A semi-join, not list_contains: DuckDB then fetches the other columns of the
        # matching rows only.
        "SELECT set_key, " + columns + " FROM chunks WHERE set_key IN (SELECT unnest(?::JSON::VARCHAR[])) "
        'ORDER BY set_key, "index"',
        [json_list(keys)],
    )
    names = [d[0] for d in cursor.description][1:]
    grouped: dict[str, list[tuple[Any, ...]]] = {key: [] for key in keys}
    for row in cursor.fetchall():
        grouped[row[0]].append(row[1:])
    return names, grouped


def chunk_dicts(names: list[str], rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Rows of :data:`CHUNK_COLUMNS` as ``Chunk``-shaped dicts, JSON decoded."""
    result = []
    for values in rows:
        row = dict(zip(names, values, strict=True))
        row["provenance"] = json.loads(row["provenance"])
        row["metadata"] = json.loads(row["metadata"])
        result.append(row)
    return result
