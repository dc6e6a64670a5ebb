"""The five assets. Each calls one engine step over the partitions of its run and reports
the step's stats as metadata; a run over a partition range (single-run backfill) does all of
its shards in one step.
"""

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
    MetadataValue,
    MultiPartitionKey,
    MultiToSingleDimensionPartitionMapping,
    asset,
)

from ingest_assets.partitions import PLAN_DIMENSION, SHARD_DIMENSION, plan_shard_partitions, shard_partitions
from ingest_assets.resources import DuckDBStore

__all__ = ["child_chunks", "documents", "graph_nodes", "parent_chunks", "sources"]

# Single-run backfills and the shard partition mapping are marked beta; they are what makes one
# run cover a whole key range, so they are used on purpose and their warning is noise here.
warnings.filterwarnings("ignore", category=BetaWarning)

# Writers take a slot of this pool; dagster.yaml limits every pool to one slot.
WRITER_POOL = "duckdb_writer"
GROUP = "ingest"
_COMMON: dict[str, Any] = {
    "group_name": GROUP,
    "pool": WRITER_POOL,
    "kinds": {"duckdb"},
    "backfill_policy": BackfillPolicy.single_run(),
}
# Chunk assets follow new or changed documents on their own when the automation sensor is on.
_FOLLOW = AutomationCondition.eager()


def _shards(context: AssetExecutionContext) -> list[str]:
    return sorted(context.partition_keys)


def _plan_shards(context: AssetExecutionContext) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = defaultdict(list)
    for key in context.partition_keys:
        if isinstance(key, MultiPartitionKey):
            dims = key.keys_by_dimension
            grouped[dims[PLAN_DIMENSION]].append(dims[SHARD_DIMENSION])
        else:  # "<plan>|<shard>": dimensions sort by name
            plan, shard = str(key).split("|")
            grouped[plan].append(shard)
    return {plan: sorted(shards) for plan, shards in grouped.items()}


def _metadata(stats: dict[str, Any]) -> dict[str, Any]:
    """Numbers as metadata values, the preview as a Markdown table."""
    metadata: dict[str, Any] = {}
    for name, value in stats.items():
        if name == "preview":
            lines = ["| document | index | tokens | text |", "|---|---|---|---|"]
            for r in value:
                text = r["text"].replace("|", "/").replace("\n", " ")
                lines.append(f"| {r['document']} | {r['index']} | {r['tokens']} | {text} |")
            metadata["preview"] = MetadataValue.md("\n".join(lines))
        elif isinstance(value, dict):
            metadata[name] = MetadataValue.json(value)
        else:
            metadata[name] = value
    return metadata


def _merge(total: dict[str, Any], stats: dict[str, Any]) -> dict[str, Any]:
    for name, value in stats.items():
        if isinstance(value, int | float) and not isinstance(value, bool) and not name.startswith("tokens_"):
            total[name] = total.get(name, 0) + value
        else:
            total.setdefault(name, value)
    return total


@asset(partitions_def=shard_partitions, **_COMMON)
def sources(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Inbox files of the run's shards with content hashes; new, changed and deleted files."""
    stats = store.engine().scan(_shards(context))
    return MaterializeResult(metadata=_metadata(stats))


@asset(deps=[sources], partitions_def=shard_partitions, **_COMMON)
def documents(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Parsed documents (every version kept); parse failures go to ``ingest_failures``."""
    stats = store.engine().parse(_shards(context))
    return MaterializeResult(metadata=_metadata(stats))


_BY_SHARD = MultiToSingleDimensionPartitionMapping(partition_dimension_name=SHARD_DIMENSION)


def _chunk_step(context: AssetExecutionContext, store: DuckDBStore, step: str) -> MaterializeResult:
    engine = store.engine()
    total: dict[str, Any] = {}
    with engine.store.session():  # one connection for the step's plans (each open costs 20 ms)
        if step == "chunk_parents":
            engine.register_plans()  # live plans in the store follow the plans file
        for plan_key, shards in _plan_shards(context).items():
            _merge(total, getattr(engine, step)(plan_key, shards))
    total["chunker_calls"] = engine.chunker_calls
    return MaterializeResult(metadata=_metadata(total))


@asset(
    deps=[AssetDep(documents, partition_mapping=_BY_SHARD)],
    partitions_def=plan_shard_partitions,
    automation_condition=_FOLLOW,
    **_COMMON,
)
def parent_chunks(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Level-1 chunk sets per plan, reused when (document, version, parent fingerprint) is stored."""
    return _chunk_step(context, store, "chunk_parents")


@asset(deps=[parent_chunks], partitions_def=plan_shard_partitions, automation_condition=_FOLLOW, **_COMMON)
def child_chunks(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Level-0 chunk sets cut from the current parents, reused when their key is stored."""
    return _chunk_step(context, store, "chunk_children")


@asset(deps=[child_chunks], partitions_def=plan_shard_partitions, automation_condition=_FOLLOW, **_COMMON)
def graph_nodes(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Graph node and edge records (document, chunks; HAS_CHUNK, PARENT_OF, NEXT) per plan."""
    return _chunk_step(context, store, "build_graph")
