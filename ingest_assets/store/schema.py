"""The store's schema: creating it in a new file and migrating older versions in place.

No Dagster here. ``schema.sql`` holds the tables and the views (the read contract); each
migration brings version N to N + 1 in one transaction, so a failed one leaves the file as it was.
"""

from __future__ import annotations

import contextlib
import re
from importlib import resources
from pathlib import Path

import duckdb

from ingest_assets.store.errors import StoreError
from ingest_assets.store.lake import lake_sql
from ingest_assets.store.rows import PREVIEW_ROWS, utc_now

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "definition", "ensure_schema", "schema_sql"]

SCHEMA_VERSION = 11
# Upgrades from older schema versions: version -> SQL that brings it to version + 1.
MIGRATIONS: dict[int, str] = {
    # 11: each step call records its result per shard, which run summaries are read from.
    # Earlier runs recorded none: the table starts empty.
    10: "{table:step_results}",
    # 10: a file's record and a plan's work pointers become inserted rows (source_rows,
    # member_rows; the views sources and plan_members show the newest), so a run's writes only
    # insert and writers of different shards never conflict. Each stored row becomes the first
    # of its key; every view returns the same rows.
    9: "{table:source_rows} "
    "INSERT INTO source_rows SELECT uri, path, document_id, shard, content_hash, size, mtime_ns, "
    "ctime_ns, inode, hashed_at_ns, deleted, parse_key, version_id, updated_at, 1 FROM sources; "
    "{table:member_rows} "
    "INSERT INTO member_rows SELECT plan_key, document_id, role, set_key, version_id, based_on, "
    "updated_at, 1 FROM plan_members; "
    "DROP TABLE sources; DROP TABLE plan_members; {view:sources} {view:plan_members} "
    "DROP VIEW ingest_failures; {view:ingest_failures} DROP VIEW chunk_vectors; {view:chunk_vectors}",
    # 9: serving by promotion. A plan's state and what it serves of each document become
    # inserted rows (plan_states, promotions) instead of a live flag and the plans' work
    # pointers: each live or retired key starts in that state, and every complete set of members
    # a plan has at a document's current version is promoted as it is (with the embedding its
    # children have vectors under, if any), so the views serve what they served before.
    8: "{table:plan_states} {table:promotions} "
    "INSERT INTO plan_states SELECT plan_key, CASE WHEN live THEN 'live' ELSE 'retired' END, 1, "
    "registered_at FROM plans; "
    "INSERT INTO promotions "
    "SELECT p.plan_key, p.document_id, p.version_id, p.set_key, c.set_key, g.set_key, "
    "  (SELECT e.embedding FROM plan_embeddings e JOIN embedded_sets x ON x.embedding = e.embedding "
    "   WHERE e.plan_key = p.plan_key AND x.set_key = c.set_key LIMIT 1), 1, 'migration-9', now()::TIMESTAMP "
    "FROM plan_members p "
    "JOIN current_documents d ON d.document_id = p.document_id AND d.version_id = p.version_id "
    "JOIN plan_members c ON c.plan_key = p.plan_key AND c.document_id = p.document_id "
    "  AND c.role = 'child' AND c.based_on = p.set_key AND c.version_id = p.version_id "
    "JOIN plan_members g ON g.plan_key = p.plan_key AND g.document_id = p.document_id "
    "  AND g.role = 'graph' AND g.based_on = c.set_key AND g.version_id = p.version_id "
    "WHERE p.role = 'parent'; "
    "DROP VIEW chunk_vectors; DROP VIEW graph_edges; DROP VIEW graph_nodes; DROP VIEW current_chunks; "
    "DROP VIEW current_members; ALTER TABLE plans DROP COLUMN live; "
    "{view:plan_status} {view:staged_members} {view:promoted} {view:current_members} "
    "{view:served_documents} {view:current_chunks} {view:graph_nodes} {view:graph_edges} "
    "{view:chunk_vectors}",
    # 8: graph_nodes joins node texts through two equality joins (the OR join it had ran as a
    # nested loop: seconds per read on a corpus). Same rows.
    7: "DROP VIEW graph_nodes; {view:graph_nodes}",
    # 7: runs record which chunk ids entered and left the current view, and how long their
    # work took (the dry run's estimate). Earlier runs recorded neither: both start empty.
    6: "{table:chunk_changes} {table:step_timings}",
    # 6: embeddings: vectors keyed by text hash and model, each child set's text hashes, the
    # sets fully embedded, each plan's embedding stage, and the chunk_vectors view.
    5: "{table:vectors} {table:chunk_texts} {table:embedded_sets} {table:plan_embeddings} "
    "{view:chunk_vectors}",
    # 5: chunk sets keep a preview of their first chunks, so a step's metadata reads no chunk.
    4: "ALTER TABLE chunk_sets ADD COLUMN preview JSON; "
    "UPDATE chunk_sets SET preview = p.preview "
    'FROM (SELECT set_key, to_json(list(json_array(token_count, "index", left(text, 60)) '
    '      ORDER BY "index")) AS preview FROM chunks WHERE "index" < '
    f"{PREVIEW_ROWS} GROUP BY set_key) p "
    "WHERE chunk_sets.set_key = p.set_key; "
    "UPDATE chunk_sets SET preview = '[]' WHERE preview IS NULL;",
    # 4: sources remember the stat they were hashed under, so a settled, unchanged file is not
    # read again; document bodies move to small parts (a checkpoint after a parse rewrote every
    # body); chunk sets carry their token stats (metadata no longer scans every chunk). Bodies
    # are cut at multiples of 3 bytes through base64, DuckDB having no substring of a BLOB.
    3: "ALTER TABLE sources ADD COLUMN ctime_ns BIGINT; "
    "ALTER TABLE sources ADD COLUMN inode BIGINT; "
    "ALTER TABLE sources ADD COLUMN hashed_at_ns BIGINT; "
    "{table:document_body_parts} "
    "INSERT INTO document_body_parts "
    "SELECT document_id, version_id, i::INTEGER, from_base64(substr(to_base64(body), i * 2664 + 1, 2664)) "
    "FROM (SELECT document_id, version_id, body, "
    "      unnest(range(0, greatest(1, (octet_length(body) + 1997) // 1998))) AS i FROM documents); "
    "ALTER TABLE documents DROP COLUMN body; "
    "ALTER TABLE chunk_sets ADD COLUMN tokens_counted INTEGER; "
    "ALTER TABLE chunk_sets ADD COLUMN tokens_min INTEGER; "
    "ALTER TABLE chunk_sets ADD COLUMN tokens_max INTEGER; "
    "UPDATE chunk_sets SET tokens_counted = a.n, tokens_min = a.low, tokens_max = a.high "
    "FROM (SELECT set_key, count(token_count) AS n, min(token_count) AS low, max(token_count) AS high "
    "      FROM chunks GROUP BY set_key) a WHERE chunk_sets.set_key = a.set_key;",
    # 3: chunk nodes are stored without their text (the chunks table has it) and the
    # graph_nodes view joins it back. Older rows that hold the text get the same text.
    2: "DROP VIEW graph_nodes; {view:graph_nodes}",
    # 2: document bodies become zlib-compressed BLOBs (a body column of JSON text made every
    # batch read scan and cache all of them: memory grew with the corpus). Old bodies stay as
    # plain JSON bytes, which inflate_body tells apart; sets verified once are remembered.
    1: "ALTER TABLE documents ALTER COLUMN body SET DATA TYPE BLOB USING encode(body::VARCHAR); "
    "CREATE TABLE IF NOT EXISTS verified_sets (set_key VARCHAR PRIMARY KEY, verified_at TIMESTAMP NOT NULL);",
}


def schema_sql() -> str:
    """The SQL that creates a new store (schema.sql)."""
    return resources.files("ingest_assets.store").joinpath("schema.sql").read_text()


def _with_views(sql: str) -> str:
    """``sql`` with each ``{view:<name>}`` / ``{table:<name>}`` replaced by that view's or
    table's definition in schema.sql (so a migration creates exactly what a new store has)."""
    schema = schema_sql()
    return re.sub(r"\{(view|table):(\w+)\}", lambda m: definition(schema, m[1], m[2]), sql)


def definition(schema: str, kind: str, name: str) -> str:
    """The ``CREATE <kind> <name>`` statement of ``schema``: up to the first line whose code
    (what precedes a ``--`` comment) ends in ``;``, so a ``;`` in a comment does not end it."""
    start = schema.index(f"CREATE {kind.upper()} {name} ")
    end = start
    for line in schema[start:].splitlines(keepends=True):
        code = line.split("--", 1)[0].rstrip()
        end += len(line)
        if code.endswith(";"):
            return schema[start : end - len(line)] + code
    raise ValueError(f"schema.sql: CREATE {kind.upper()} {name} has no ';' ending it")


def ensure_schema(con: duckdb.DuckDBPyConnection, path: Path | str, *, lake: bool = False) -> None:
    """Create the schema in an empty file, or migrate an older one to :data:`SCHEMA_VERSION`.

    With ``lake``, the SQL is the DuckLake form (:func:`~ingest_assets.store.lake.lake_sql`:
    no key constraints) of the same schema.sql and migrations.

    Raises:
        StoreError: The file holds tables of something else, a newer schema, or a version with
            no migration; or a migration failed (rolled back). The message names ``path``.
    """
    try:
        # The usual case in one cheap query: listing the tables first made DuckDB load every
        # table's metadata on each connection.
        version = con.execute("SELECT max(version) FROM schema_version").fetchone()[0]
    except duckdb.CatalogException:
        tables = "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()"
        if con.execute(tables).fetchone()[0]:
            raise StoreError(
                f"{path}: holds tables but no schema_version table, so it was not written by "
                "ingest_assets; point --db / INGEST_DUCKDB at another file"
            ) from None
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(lake_sql(schema_sql()) if lake else schema_sql())
            con.execute("INSERT INTO schema_version VALUES (?, ?)", [SCHEMA_VERSION, utc_now()])
            con.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):  # a refused COMMIT leaves none open
                con.execute("ROLLBACK")
            raise
        return
    if version is None or version > SCHEMA_VERSION:
        raise StoreError(
            f"{path}: schema version {version} is unknown to this code (it knows "
            f"{SCHEMA_VERSION}); upgrade the project or use another database file"
        )
    while version < SCHEMA_VERSION:
        if version not in MIGRATIONS:
            raise StoreError(
                f"{path}: schema version {version} has no migration to "
                f"{SCHEMA_VERSION}; re-ingest into a new database file"
            )
        con.execute("BEGIN TRANSACTION")
        try:
            migration = _with_views(MIGRATIONS[version])
            con.execute(lake_sql(migration) if lake else migration)
            con.execute("INSERT INTO schema_version VALUES (?, ?)", [version + 1, utc_now()])
            con.execute("COMMIT")
        except duckdb.Error as error:
            con.execute("ROLLBACK")
            raise StoreError(
                f"{path}: the migration from schema version {version} to {version + 1} "
                f"failed ({error}); it was rolled back and the file is unchanged: report it, "
                "or re-ingest into a new database file"
            ) from error
        version += 1
