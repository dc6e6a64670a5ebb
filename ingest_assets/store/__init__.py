"""The store of the pipeline: a DuckDB file or a DuckLake lake (no Dagster here).

=================  ==========================================================================
module             job
=================  ==========================================================================
``store``          :class:`IngestStore`, the facade: every method one read or one transaction
``rows``           row types (dataclasses, NamedTuples) and the Arrow schemas of the tables
``writes``         batched inserts, superseding rows (a newer row per key), document body parts
``set_rows``       reading the chunk rows of stored sets, grouped by set
``summaries``      token-size stats and previews of chunk sets (no I/O)
``plan_serving``   the store's plan methods: register keys, promote documents, switch keys live
``serving``        plan states and promotions: what the views serve, as inserted rows (the SQL)
``compaction``     deleting the rows newer ones superseded (maintenance)
``changes``        which chunk ids enter and leave the views, recorded by the write that moves them
``step_results``   what each step call did per shard, under its run id (run summaries read it)
``plan_names``     a plan name or key as a user gives it, resolved against the stored plans
``vectors``        the embedding tables: vectors, text hashes, embedded sets, plans' stages
``invariants``     the chunk-contract checks over what the views show
``connection``     opening a store: lock retry, schema check, sessions, transactions, conflict retry
``host``           one in-memory DuckDB per process that store files are attached to
``lake``           the DuckLake backend: its schema form, extensions, attach, maintenance
``lake_lock``      a lake's write locks: the store lock (shared or alone) and one per shard
``shards``         the shard of a document (the engine's unit of work, the lake's lock)
``schema``         creating and migrating the schema (``schema.sql``)
``lists``          many keys as one JSON statement parameter (never a Python list)
``recent``         content-addressed memory of bodies and sets just written or read
``errors``         the store's error type
=================  ==========================================================================
"""

from ingest_assets.store.errors import StoreError
from ingest_assets.store.rows import (
    PREVIEW_ROWS,
    ChunkSetWrite,
    CurrentDocument,
    DocumentWrite,
    FailureWrite,
    GraphRow,
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
    "GraphRow",
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
