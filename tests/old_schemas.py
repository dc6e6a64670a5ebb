"""Stores as older schema versions left them, made from a current store, for migration tests."""

from __future__ import annotations

import duckdb

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


def downgrade_to_schema_8(con: duckdb.DuckDBPyConnection) -> None:
    """Give a current store what schema 8 had: a live flag on plans, no plan states or
    promotions, and views over the plans' work pointers."""
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
