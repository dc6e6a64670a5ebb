"""Stores as older schema versions left them, made from a current store, for migration tests."""

from __future__ import annotations

import duckdb

from ingest_assets.store.schema import schema_sql

# The graph_nodes view of schemas 3 to 7: node texts joined through an OR join.
GRAPH_NODES_7 = """CREATE VIEW graph_nodes AS
SELECT m.plan_key, n.id, n.label,
       CASE WHEN c.text IS NULL THEN n.properties
            ELSE json_merge_patch(n.properties, json_object('text', c.text)) END AS properties
FROM current_members m
JOIN graph_node_rows n ON n.set_key = m.set_key
JOIN graph_sets g ON g.set_key = m.set_key
LEFT JOIN chunks c ON c.id = n.id AND c.set_key IN (g.parent_set_key, g.child_set_key)
WHERE m.role = 'graph'"""


# Schema 8 served what the plans' work pointers pointed at, for plans flagged live.
CURRENT_MEMBERS_8 = """CREATE VIEW current_members AS
WITH live AS (
    SELECT m.*
    FROM plan_members m
    JOIN plans p ON p.plan_key = m.plan_key AND p.live
    JOIN current_documents d ON d.document_id = m.document_id AND d.version_id = m.version_id
),
parents AS (SELECT * FROM live WHERE role = 'parent'),
children AS (
    SELECT c.* FROM live c
    JOIN parents p ON p.plan_key = c.plan_key AND p.document_id = c.document_id AND c.based_on = p.set_key
    WHERE c.role = 'child'
),
graphs AS (
    SELECT g.* FROM live g
    JOIN children c ON c.plan_key = g.plan_key AND c.document_id = g.document_id AND g.based_on = c.set_key
    WHERE g.role = 'graph'
)
SELECT * FROM parents UNION ALL SELECT * FROM children UNION ALL SELECT * FROM graphs"""
CHUNK_VECTORS_8 = """CREATE VIEW chunk_vectors AS
SELECT m.plan_key, c.id, c.document_id, c.version_id, c.parent_id, c."index", c.text, c.heading_path,
       c.content_kind, c.token_count, d.source_uri, e.model, e.text_mode, e.dimension, t.text_hash,
       v.vector
FROM current_members m
JOIN plan_embeddings e ON e.plan_key = m.plan_key
JOIN current_documents d ON d.document_id = m.document_id
JOIN chunks c ON c.set_key = m.set_key
JOIN chunk_texts t ON t.set_key = m.set_key AND t.text_mode = e.text_mode AND t.chunk_id = c.id
JOIN vectors v ON v.text_hash = t.text_hash AND v.model = e.model
WHERE m.role = 'child'"""


# Schema 9 kept sources and plan_members as tables updated in place, and served every vector row.
SOURCES_9 = """CREATE TABLE sources (
    uri VARCHAR PRIMARY KEY, path VARCHAR NOT NULL, document_id UUID NOT NULL, shard VARCHAR NOT NULL,
    content_hash VARCHAR NOT NULL, size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL, ctime_ns BIGINT,
    inode BIGINT, hashed_at_ns BIGINT, deleted BOOLEAN NOT NULL, parse_key VARCHAR, version_id UUID,
    updated_at TIMESTAMP NOT NULL)"""
PLAN_MEMBERS_9 = """CREATE TABLE plan_members (
    plan_key VARCHAR NOT NULL, document_id UUID NOT NULL, role VARCHAR NOT NULL, set_key VARCHAR NOT NULL,
    version_id UUID NOT NULL, based_on VARCHAR NOT NULL, updated_at TIMESTAMP NOT NULL,
    PRIMARY KEY (plan_key, document_id, role))"""


def _current_view(name: str) -> str:
    """The CREATE VIEW of ``name`` in the current schema.sql, without its closing semicolon."""
    schema = schema_sql()
    start = schema.index(f"CREATE VIEW {name} ")
    return schema[start : schema.index(";", start)]


# Schema 9's views as schema 10's, without what 10 added: parse failures cleared by a parse, and
# one vector per chunk.
INGEST_FAILURES_9 = _current_view("ingest_failures").replace(
    " AND NOT (f.stage = 'parse' AND s.version_id IS NOT NULL)", ""
)
CHUNK_VECTORS_9 = _current_view("chunk_vectors").split("\n-- Writers of two shards")[0]


def downgrade_to_schema_10(con: duckdb.DuckDBPyConnection) -> None:
    """Give a current store what schema 10 had: no step_results."""
    con.execute("DROP TABLE step_results")
    con.execute("DELETE FROM schema_version")
    con.execute("INSERT INTO schema_version VALUES (10, now())")


def downgrade_to_schema_9(con: duckdb.DuckDBPyConnection) -> None:
    """Give a current store what schema 9 had: sources and plan_members as tables holding each
    key's newest row, the views of schema 9."""
    downgrade_to_schema_10(con)
    con.execute("CREATE TEMP TABLE newest_sources AS SELECT * FROM sources")
    con.execute("CREATE TEMP TABLE newest_members AS SELECT * FROM plan_members")
    con.execute("DROP VIEW ingest_failures")
    con.execute("DROP VIEW chunk_vectors")
    con.execute("DROP VIEW sources")
    con.execute("DROP VIEW plan_members")
    con.execute("DROP TABLE source_rows")
    con.execute("DROP TABLE member_rows")
    con.execute(SOURCES_9)
    con.execute("INSERT INTO sources SELECT * FROM newest_sources")
    con.execute(PLAN_MEMBERS_9)
    con.execute("INSERT INTO plan_members SELECT * FROM newest_members")
    con.execute(INGEST_FAILURES_9)
    con.execute(CHUNK_VECTORS_9)
    con.execute("DELETE FROM schema_version")
    con.execute("INSERT INTO schema_version VALUES (9, now())")


def downgrade_to_schema_8(con: duckdb.DuckDBPyConnection) -> None:
    """Give a current store what schema 8 had: a live flag on plans, no plan states or
    promotions, and views over the plans' work pointers."""
    downgrade_to_schema_9(con)
    for view in ("served_documents", "chunk_vectors", "current_members", "promoted", "staged_members"):
        con.execute(f"DROP VIEW {view}")
    con.execute("DROP VIEW plan_status")
    con.execute("ALTER TABLE plans ADD COLUMN live BOOLEAN")
    con.execute(
        "UPDATE plans SET live = s.state = 'live' FROM (SELECT plan_key, arg_max(state, seq) AS state "
        "FROM plan_states GROUP BY plan_key) s WHERE s.plan_key = plans.plan_key"
    )
    con.execute("DROP TABLE plan_states")
    con.execute("DROP TABLE promotions")
    con.execute(CURRENT_MEMBERS_8)
    con.execute(CHUNK_VECTORS_8)
    con.execute("DELETE FROM schema_version")
    con.execute("INSERT INTO schema_version VALUES (8, now())")


def downgrade_to_schema_7(con: duckdb.DuckDBPyConnection) -> None:
    """Give a current store the views schema 7 had: graph_nodes with its OR join."""
    downgrade_to_schema_8(con)
    con.execute("DROP VIEW graph_nodes")
    con.execute(GRAPH_NODES_7)
    con.execute("DELETE FROM schema_version")
    con.execute("INSERT INTO schema_version VALUES (7, now())")


def downgrade_to_schema_6(con: duckdb.DuckDBPyConnection) -> None:
    """Give a current store the tables schema 6 had: no chunk_changes, no step_timings."""
    downgrade_to_schema_7(con)
    con.execute("DROP TABLE chunk_changes")
    con.execute("DROP TABLE step_timings")
    con.execute("DELETE FROM schema_version")
    con.execute("INSERT INTO schema_version VALUES (6, now())")


def downgrade_to_schema_5(con: duckdb.DuckDBPyConnection) -> None:
    """Give a current store the tables schema 5 had: no embedding tables either."""
    downgrade_to_schema_6(con)
    con.execute("DROP VIEW chunk_vectors")
    for table in ("vectors", "chunk_texts", "embedded_sets", "plan_embeddings"):
        con.execute(f"DROP TABLE {table}")
    con.execute("DELETE FROM schema_version")
    con.execute("INSERT INTO schema_version VALUES (5, now())")


def downgrade_to_schema_4(con: duckdb.DuckDBPyConnection) -> None:
    """Give a current store the tables schema 4 had: chunk sets without their preview."""
    downgrade_to_schema_5(con)
    con.execute("ALTER TABLE chunk_sets DROP COLUMN preview")
    con.execute("DELETE FROM schema_version")
    con.execute("INSERT INTO schema_version VALUES (4, now())")


def downgrade_to_schema_3(con: duckdb.DuckDBPyConnection) -> None:
    """Give a current store the tables schema 3 had, bodies and all (every later change undone)."""
    downgrade_to_schema_4(con)
    bodies: dict[tuple[str, str], list[bytes]] = {}
    for document_id, version_id, part in con.execute(
        "SELECT document_id::VARCHAR, version_id::VARCHAR, bytes FROM document_body_parts "
        "ORDER BY document_id, version_id, part"
    ).fetchall():
        bodies.setdefault((document_id, version_id), []).append(part)
    con.execute("ALTER TABLE documents ADD COLUMN body BLOB")
    for (document_id, version_id), parts in bodies.items():
        con.execute(
            "UPDATE documents SET body = ? WHERE document_id = ? AND version_id = ?",
            [b"".join(parts), document_id, version_id],
        )
    con.execute("DROP TABLE document_body_parts")
    for table, column in (
        ("sources", "ctime_ns"),
        ("sources", "inode"),
        ("sources", "hashed_at_ns"),
        ("chunk_sets", "tokens_counted"),
        ("chunk_sets", "tokens_min"),
        ("chunk_sets", "tokens_max"),
    ):
        con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    con.execute("DELETE FROM schema_version")
    con.execute("INSERT INTO schema_version VALUES (3, now())")
