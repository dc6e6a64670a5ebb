"""Jobs: one per partitions definition (a run cannot mix them); partitions follow the assets.

Both run their steps in the run's own process (``in_process_executor``): the steps share one
writer pool slot anyway, and a process per step cost seconds of start-up each.
"""

from dagster import AssetSelection, define_asset_job, in_process_executor

from ingest_assets.defs.assets import (
    child_chunks,
    documents,
    embeddings,
    graph_nodes,
    parent_chunks,
    sources,
)

__all__ = ["CHUNK_ASSETS", "DOCUMENT_ASSETS", "chunks_job", "documents_job"]

documents_job = define_asset_job(
    "documents_job", selection=AssetSelection.assets(sources, documents), executor_def=in_process_executor
)
# The document assets (one shard's scan and parse), and the chunk assets, in the order a plan
# key is built (what a backfill of a new key selects).
DOCUMENT_ASSETS = ["sources", "documents"]
CHUNK_ASSETS = ["parent_chunks", "child_chunks", "graph_nodes", "embeddings"]
chunks_job = define_asset_job(
    "chunks_job",
    selection=AssetSelection.assets(parent_chunks, child_chunks, graph_nodes, embeddings),
    executor_def=in_process_executor,
)
