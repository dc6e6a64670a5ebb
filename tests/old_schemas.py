"""Stores as older schema versions left them, made from a current store, for migration tests."""

from __future__ import annotations

import duckdb


def downgrade_to_schema_6(con: duckdb.DuckDBPyConnection) -> None:
    """Give a current store the tables schema 6 had: no chunk_changes, no step_timings."""
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
