"""The five assets, each one step of the engine's sequence (``ingest_assets.engine.STEPS``)
over the partitions of its run; a run over a partition range (single-run backfill) does all of
its shards in one step."""

import warnings
from collections import defaultdict
from typing import Any

from dagster import (
    AssetDep,
    AssetExecutionContext,
    AutomationCondition,
    BackfillPolicy,
    BetaWarning,
    MaterializeResult,
    MultiPartitionKey,
    MultiToSingleDimensionPartitionMapping,
    asset,
)

from ingest_assets.defs.metadata import result_metadata
from ingest_assets.defs.partitions import (
    PLAN_DIMENSION,
    SHARD_DIMENSION,
    plan_shard_partitions,
    shard_partitions,
)
from ingest_assets.defs.resources import DuckDBStore
from ingest_assets.engine import ChunkResult, GraphResult, ParseResult, ScanResult, StepResult, combined

__all__ = ["WRITER_POOL", "child_chunks", "documents", "graph_nodes", "parent_chunks", "sources"]

# Single-run backfills and the shard partition mapping are marked beta; they are what makes one
# run cover a whole key range, so they are used on purpose and their warning is noise here.
warnings.filterwarnings("ignore", category=BetaWarning)

# Writers take a slot of this pool; dagster.yaml limits every pool to one slot.
WRITER_POOL = "duckdb_writer"
_COMMON: dict[str, Any] = {
    "group_name": "ingest",
    "pool": WRITER_POOL,
    "kinds": {"duckdb"},
    "backfill_policy": BackfillPolicy.single_run(),
}
# Chunk assets follow new or changed documents on their own when the automation sensor is on.
_FOLLOW = AutomationCondition.eager()
_EMPTY: dict[str, StepResult] = {
    "sources": ScanResult(),
    "documents": ParseResult(),
    "parent_chunks": ChunkResult("parent"),
    "child_chunks": ChunkResult("child"),
    "graph_nodes": GraphResult(),
}


def _plan_shards(context: AssetExecutionContext) -> dict[str | None, list[str]]:
    """The run's shards by plan key (None for the shard-partitioned assets)."""
    grouped: dict[str | None, list[str]] = defaultdict(list)
    for key in context.partition_keys:
        if isinstance(key, MultiPartitionKey):
            dims = key.keys_by_dimension
            grouped[dims[PLAN_DIMENSION]].append(dims[SHARD_DIMENSION])
        elif "|" in str(key):  # "<plan>|<shard>": dimensions sort by name
            plan, shard = str(key).split("|")
            grouped[plan].append(shard)
        else:
            grouped[None].append(str(key))
    return grouped


def _materialize(context: AssetExecutionContext, store: DuckDBStore, step: str) -> MaterializeResult:
    engine = store.engine()
    results: list[StepResult] = []
    for plan_key, shards in _plan_shards(context).items():
        results.append(engine.run(step, shards, plan_key).total)
    return MaterializeResult(metadata=result_metadata(combined(results, _EMPTY[step])))


@asset(partitions_def=shard_partitions, **_COMMON)
def sources(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Inbox files of the run's shards with content hashes; new, changed and deleted files."""
    return _materialize(context, store, "sources")


@asset(deps=[sources], partitions_def=shard_partitions, **_COMMON)
def documents(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Parsed documents (every version kept); parse failures go to ``ingest_failures``."""
    return _materialize(context, store, "documents")


_BY_SHARD = MultiToSingleDimensionPartitionMapping(partition_dimension_name=SHARD_DIMENSION)


@asset(
    deps=[AssetDep(documents, partition_mapping=_BY_SHARD)],
    partitions_def=plan_shard_partitions,
    automation_condition=_FOLLOW,
    **_COMMON,
)
def parent_chunks(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Level-1 chunk sets per plan, reused when (document, version, parent fingerprint) is stored."""
    return _materialize(context, store, "parent_chunks")


@asset(deps=[parent_chunks], partitions_def=plan_shard_partitions, automation_condition=_FOLLOW, **_COMMON)
def child_chunks(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Level-0 chunk sets cut from the current parents, reused when their key is stored."""
    return _materialize(context, store, "child_chunks")


@asset(deps=[child_chunks], partitions_def=plan_shard_partitions, automation_condition=_FOLLOW, **_COMMON)
def graph_nodes(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Graph node and edge records (document, chunks; HAS_CHUNK, PARENT_OF, NEXT) per plan."""
    return _materialize(context, store, "graph_nodes")
