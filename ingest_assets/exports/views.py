"""What an export reads: one plan's chunks, graph nodes, graph edges and (for a plan that
embeds) its children's vectors, as Arrow tables.

No Dagster here. Each table is read from the store's read-side views (``current_chunks``,
``graph_nodes``, ``graph_edges``, ``chunk_vectors``) in key order, ids as text and JSON as JSON text, with two
columns the export does not write: ``_key`` (a row's identity: a chunk's or node's id, an
edge's ``source_id|target_id|type``) and ``_digest`` (an MD5 of the row's values, so an
incremental export can tell a row that changed under the same key).

The digest leaves out what moves with every version of a document without the chunk changing:
a chunk's ``version_id`` and a chunk node's ``created_at`` (a text chunk's id is the same in
every version whose edit left its span and text alone: ``chunking.Chunk.id_for``). So an edit
exports the chunks it changed, not the whole document, and a row a downstream copy keeps holds
the version and creation time it was first exported with. The Document node's properties
(source, kind, version) are digested whole: an edited document's node is written again.
"""

from __future__ import annotations

import warnings
from typing import Any

import duckdb
import pyarrow as pa

__all__ = ["GRAPH_TABLES", "TABLES", "arrow", "read_view"]

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
    # A child's vector under the plan's current model (a plan embeds with one model at a time,
    # so the chunk id is the key; a model change changes every row's digest). Empty for a plan
    # without an embedding stage.
    "vectors": (
        "id::VARCHAR AS id, model, text_mode, dimension, text_hash, vector",
        "chunk_vectors",
        "id::VARCHAR",
    ),
}
TABLES = tuple(_QUERIES)
# Columns a row's digest reads otherwise than as written: None leaves one out, a text replaces
# it by that expression over the row (``t``). Left out: what moves with the version alone.
_DIGESTED: dict[str, dict[str, str | None]] = {
    "chunks": {"version_id": None},
    "nodes": {"properties": """json_merge_patch(t.properties::JSON, '{"created_at": null}')"""},
}
# The graph formats (graphml, neo4j-csv) carry the graph; vectors go with the tabular ones.
GRAPH_TABLES = ("chunks", "nodes", "edges")
# Columns holding JSON text (written as JSON objects in JSON Lines, as text elsewhere).
JSON_COLUMNS = {
    "chunks": ("provenance", "metadata"),
    "nodes": ("properties",),
    "edges": ("properties",),
    "vectors": (),
}


def arrow(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any], batch_rows: int = 2048) -> pa.Table:
    """The result of ``sql`` as an Arrow table, streamed in batches so DuckDB's buffer pool
    (capped by INGEST_DUCKDB_MEMORY) never holds the whole result: a corpus export is bigger
    than the cap. DuckDB 2.x names the stream ``to_arrow_reader``, 1.x ``fetch_record_batch``;
    DuckDB 2 warns that a DB-API result costs a copy more than a relation, which cannot run on
    the store's shared connection."""
    result = con.execute(sql, params)
    stream = getattr(result, "to_arrow_reader", None) or result.fetch_record_batch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return stream(batch_rows).read_all()


def read_view(con: duckdb.DuckDBPyConnection, table: str, plan_key: str) -> pa.Table:
    """``table`` (``chunks``, ``nodes``, ``edges`` or ``vectors``) of ``plan_key``, with ``_key`` and
    ``_digest``, sorted by key (in Arrow: a sort in DuckDB would hold every row in its pool)."""
    columns, view, key = _QUERIES[table]
    # The digest hashes every value as text, separated and with NULL marked (to_json of the
    # row said the same at twice the cost), but what _DIGESTED leaves out or rewrites.
    names = [part.rsplit(" ", 1)[-1].strip('"') for part in columns.split(", ")]
    digested = _DIGESTED.get(table, {})
    expressions = [digested.get(name, f't."{name}"') for name in names]
    values = ", ".join(f"coalesce(({e})::VARCHAR, chr(0))" for e in expressions if e is not None)
    sql = (
        f"SELECT t.*, md5(concat_ws(chr(31), {values})) AS _digest FROM (SELECT {columns}, {key} AS _key "
        f"FROM {view} WHERE plan_key = ?) t"
    )
    return arrow(con, sql, [plan_key]).sort_by("_key")
