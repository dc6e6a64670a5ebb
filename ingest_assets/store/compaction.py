"""Compaction: deleting the rows that newer ones superseded (no Dagster here).

A run's writes only insert (see ``schema.sql``): a changed file record or work pointer leaves its
older row behind, and two shards' writers may store the vector of one text twice. The views never
show those rows; compaction deletes them, in one transaction over the whole store (it runs alone,
so its deletes conflict with no writer). The lake's maintenance job runs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ingest_assets.store.connection import retried

if TYPE_CHECKING:
    from ingest_assets.store.store import IngestStore

__all__ = ["compact"]

# Per table, the DELETE of what newer rows superseded.
_SUPERSEDED_ROWS = (
    (
        "source_rows",
        "DELETE FROM source_rows r USING (SELECT uri, max(seq) AS newest FROM source_rows GROUP BY uri) n "
        "WHERE n.uri = r.uri AND r.seq < n.newest",
    ),
    (
        "member_rows",
        "DELETE FROM member_rows r USING (SELECT plan_key, document_id, role, max(seq) AS newest "
        "FROM member_rows GROUP BY ALL) n "
        "WHERE n.plan_key = r.plan_key AND n.document_id = r.document_id AND n.role = r.role "
        "AND r.seq < n.newest",
    ),
    (
        "vectors",
        "DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM vectors "
        "QUALIFY row_number() OVER (PARTITION BY text_hash, model ORDER BY created_at, rowid) > 1)",
    ),
)


@retried
def compact(store: IngestStore) -> dict[str, int]:
    """Delete source and member rows older than their key's newest, and all but the first of a
    text's vectors under one model. The views show the same rows before and after. Returns the
    rows deleted per table (``<table>_deleted``)."""
    with store.transaction() as con:
        return {f"{table}_deleted": con.execute(sql).fetchone()[0] for table, sql in _SUPERSEDED_ROWS}
