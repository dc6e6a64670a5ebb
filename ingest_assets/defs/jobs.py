"""Jobs: one per partitions definition (a run cannot mix them); partitions follow the assets."""

from dagster import AssetSelection, define_asset_job

from ingest_assets.defs.assets import child_chunks, documents, graph_nodes, parent_chunks, sources

__all__ = ["chunks_job", "documents_job"]

documents_job = define_asset_job("documents_job", selection=AssetSelection.assets(sources, documents))
chunks_job = define_asset_job(
    "chunks_job",
    selection=AssetSelection.assets(parent_chunks, child_chunks, graph_nodes),
)
