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


def downgrade_to_schema_7(con: duckdb.DuckDBPyConnection) -> None:
    """Give a current store the views schema 7 had: graph_nodes with its OR join."""
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
