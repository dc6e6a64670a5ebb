"""The DuckDB store of the pipeline (no Dagster here).

=================  ==========================================================================
module             job
=================  ==========================================================================
``store``          :class:`IngestStore`, the facade: every method one read or one transaction
``rows``           row types (dataclasses, NamedTuples) and the Arrow schemas of the tables
``writes``         batched inserts, replaced pointer rows, document body parts
``summaries``      token-size stats and previews of chunk sets (no I/O)
``connection``     opening a file: lock retry, schema check, sessions, transactions
``lists``          many keys as one JSON statement parameter (never a Python list)
``schema``         creating and migrating the schema (``schema.sql``)
``host``           one in-memory DuckDB per process that store files are attached to
``recent``         content-addressed memory of bodies and sets just written or read
``invariants``     the chunk-contract checks over what the views show
=================  ==========================================================================
"""

from ingest_assets.store.errors import StoreError
from ingest_assets.store.rows import (
    PREVIEW_ROWS,
    ChunkSetWrite,
    CurrentDocument,
    DocumentWrite,
    FailureWrite,
    GraphSetWrite,
    MemberWrite,
    SetSummary,
    SourceRow,
)
from ingest_assets.store.schema import SCHEMA_VERSION
from ingest_assets.store.store import IngestStore
from ingest_assets.store.summaries import PreviewChunk, SizeStats, summarize
from ingest_assets.store.writes import deflate_body, inflate_body

__all__ = [
    "PREVIEW_ROWS",
    "SCHEMA_VERSION",
    "ChunkSetWrite",
    "CurrentDocument",
    "DocumentWrite",
    "FailureWrite",
    "GraphSetWrite",
    "IngestStore",
    "MemberWrite",
    "PreviewChunk",
    "SetSummary",
    "SizeStats",
    "SourceRow",
    "StoreError",
    "deflate_body",
    "inflate_body",
    "summarize",
]
