"""The DuckDB store of the pipeline (no Dagster here); see :mod:`ingest_assets.store.store`."""

from ingest_assets.store.store import (
    PREVIEW_ROWS,
    SCHEMA_VERSION,
    ChunkSetWrite,
    DocumentWrite,
    FailureWrite,
    GraphSetWrite,
    IngestStore,
    MemberWrite,
    SetSummary,
    SourceRow,
    StoreError,
    deflate_body,
    inflate_body,
)

__all__ = [
    "PREVIEW_ROWS",
    "SCHEMA_VERSION",
    "ChunkSetWrite",
    "DocumentWrite",
    "FailureWrite",
    "GraphSetWrite",
    "IngestStore",
    "MemberWrite",
    "SetSummary",
    "SourceRow",
    "StoreError",
    "deflate_body",
    "inflate_body",
]
