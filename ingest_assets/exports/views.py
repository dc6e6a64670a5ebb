"""What an export reads: one plan's chunks, graph nodes and graph edges, as Arrow tables.

No Dagster here. Each table is read from the store's read-side views (``current_chunks``,
``graph_nodes``, ``graph_edges``) in key order, ids as text and JSON as JSON text, with two
columns the export does not write: ``_key`` (a row's identity: a chunk's or node's id, an
edge's ``source_id|target_id|type``) and ``_digest`` (an MD5 of the row's values, so an
incremental export can tell a row that changed under the same key).
"""

from __future__ import annotations

import warnings
from typing import Any

import duckdb
import pyarrow as pa

__all__ = ["TABLES", "arrow", "read_view"]

# table -> (SELECT list over the view, view, key expression); plan_key is left out: the
# manifest names the plan, and a row that two plan keys share is the same row.
_QUERIES: dict[str, tuple[str, str, str]] = {
    "chunks": (
        "id::VARCHAR AS id, document_id::VARCHAR AS document_id, version_id::VARCHAR AS version_id, "
        'level, "index", '
        "text, chunker, chunker_hash, parent_id::VARCHAR AS parent_id, provenance::VARCHAR AS provenance, "
        "heading_path, content_kind, token_count, metadata::VARCHAR AS metadata",
        "current_chunks",
        "id::VARCHAR",
    ),
    "nodes": ("id, label, properties::VARCHAR AS properties", "graph_nodes", "id"),
    "edges": (
        "source_id, target_id, type, properties::VARCHAR AS properties",
        "graph_edges",
        "source_id || '|' || target_id || '|' || type",
    ),
}
TABLES = tuple(_QUERIES)
# Columns holding JSON text (written as JSON objects in JSON Lines, as text elsewhere).
JSON_COLUMNS = {"chunks": ("provenance", "metadata"), "nodes": ("properties",), "edges": ("properties",)}


def arrow(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> pa.Table:
    """The result of ``sql`` as an Arrow table (DuckDB 2.x names the call ``to_arrow_table``,
    1.x ``fetch_arrow_table``). DuckDB 2 warns that a DB-API result costs one copy of the rows
    more than a relation; a relation cannot run on the store's shared connection, and the copy
    is cheap next to writing the files."""
    result = con.execute(sql, params)
    fetch = getattr(result, "to_arrow_table", None) or result.fetch_arrow_table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fetch()


def read_view(con: duckdb.DuckDBPyConnection, table: str, plan_key: str) -> pa.Table:
    """``table`` (``chunks``, ``nodes`` or ``edges``) of ``plan_key``, with ``_key`` and ``_digest``."""
    columns, view, key = _QUERIES[table]
    sql = (
        f"SELECT t.*, md5(to_json(t)::VARCHAR) AS _digest FROM (SELECT {columns}, {key} AS _key "
        f"FROM {view} WHERE plan_key = ?) t ORDER BY _key"
    )
    return arrow(con, sql, [plan_key])
