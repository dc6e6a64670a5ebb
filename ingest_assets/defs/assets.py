"""The six assets, each one step of the engine's sequence (``ingest_assets.engine.STEPS``).

A run covers one partition (what the automation sensor and the UI's backfills launch) or a
range of them (``ingest run``); either way each partition gets the metadata of its own shard
(and plan), and a data version that digests what the store serves there
(:mod:`ingest_assets.engine.versions`), so Dagster's staleness follows the store. Nothing is
automated here: the automation sensor asks the store what is pending (see
:mod:`ingest_assets.defs.sensors`).
"""

import hashlib
import warnings
from collections import defaultdict
from typing import Any

from dagster import (
    AssetDep,
    AssetExecutionContext,
    BackfillPolicy,
    BetaWarning,
    DataVersion,
    MaterializeResult,
    MultiPartitionKey,
    MultiToSingleDimensionPartitionMapping,
    asset,
)

from ingest_assets.defs.checks import CHECK_SPECS, evaluate
from ingest_assets.defs.metadata import result_metadata
from ingest_assets.defs.partitions import (
    PLAN_DIMENSION,
    SHARD_DIMENSION,
    plan_shard_partitions,
    shard_partitions,
)
from ingest_assets.defs.resources import DuckDBStore
from ingest_assets.engine import RESULT_OF_STEP
from ingest_assets.engine.keys import is_chunk_partition, plan_and_shard
from ingest_assets.engine.versions import partition_versions
from ingest_assets.store.changes import change_counts
from ingest_assets.store.rows import utc_now

__all__ = [
    "WRITER_POOL",
    "child_chunks",
    "documents",
    "embeddings",
    "graph_nodes",
    "parent_chunks",
    "sources",
]

# Marked beta by Dagster: the shard mapping (a chunk partition depends on its shard) and
# backfill policies (a backfill of many partitions is one run over their range).
warnings.filterwarnings("ignore", category=BetaWarning)

# Writers take a slot of this pool; dagster.yaml limits every pool to one slot.
WRITER_POOL = "duckdb_writer"
_COMMON: dict[str, Any] = {
    "group_name": "ingest",
    "pool": WRITER_POOL,
    "kinds": {"duckdb"},
    # A backfill is one run per range of partitions, not one per partition: each run costs a
    # process and the code location's import, and the engine spreads a range's work over its
    # own workers anyway.
    "backfill_policy": BackfillPolicy.single_run(),
}


def _partitions(context: AssetExecutionContext) -> dict[str | None, dict[str, Any]]:
    """The run's partition keys by plan key (None for the shard-partitioned assets) and shard."""
    grouped: dict[str | None, dict[str, Any]] = defaultdict(dict)
    for key in context.partition_keys:
        if isinstance(key, MultiPartitionKey):
            dims = key.keys_by_dimension
            grouped[dims[PLAN_DIMENSION]][dims[SHARD_DIMENSION]] = key
        elif is_chunk_partition(str(key)):
            plan, shard = plan_and_shard(str(key))
            grouped[plan][shard] = key
        else:
            grouped[None][str(key)] = key
    return grouped


def _materialize(context: AssetExecutionContext, store: DuckDBStore, step: str) -> MaterializeResult:
    engine = store.engine()
    versions: list[str] = []
    for plan_key, keys in _partitions(context).items():
        started = utc_now()
        results = engine.run(step, keys, plan_key)
        # What the step left, read over one connection (a DuckDB file is attached once, not
        # three times; the session ends before the next step).
        with engine.store.session() as con:
            found = partition_versions(engine.store, step, keys, plan_key)
            moved = change_counts(con, engine.store.run_id, started, plan_key)
            state = _plan_state(engine, plan_key)
        for shard, partition_key in keys.items():
            result = results.get(shard) or RESULT_OF_STEP[step]()
            metadata = result_metadata(result)
            metadata["data_version"] = found[shard]
            # Chunk ids this step moved in or out of the current views (ingest changes lists them).
            counted = moved.get(shard, {})
            metadata["chunks_added"] = counted.get("added", 0)
            metadata["chunks_removed"] = counted.get("removed", 0)
            metadata["chunks_changed"] = counted.get("changed", 0)
            if plan_key is not None:
                metadata["plan"] = plan_key
                metadata["plan_state"] = state
            context.add_asset_metadata(metadata, partition_key=partition_key)
            for failure in getattr(result, "failures", ()):
                context.log.warning(f"{step} {partition_key}: {failure.message}")
            for skipped in getattr(result, "skipped_files", ()):
                context.log.warning(f"{step} {partition_key}: skipped {skipped}")
            versions.append(found[shard])
    # One version per run: a partition's own in a one-partition run, else a digest of the range's.
    version = (
        versions[0] if len(versions) == 1 else hashlib.sha256("".join(versions).encode()).hexdigest()[:16]
    )
    # The asset's checks, in this step (see ingest_assets.defs.checks).
    return MaterializeResult(data_version=DataVersion(version), check_results=evaluate(context, store, step))


def _plan_state(engine: Any, plan_key: str | None) -> str:
    """The plan key's state as people read it: ``live``, ``building: 7 of 10 documents ready``
    (the views switch to it when all are), or ``retired``."""
    if plan_key is None:
        return ""
    known = engine.store.plan_states().get(plan_key)
    if known is None or known.state != "building":
        return known.state if known else "not registered"
    # Counting what is ready reads every routed document's coverage: only a building key has it.
    _, ready, total = engine.store.plan_progress(plan_key, engine.plans[plan_key].kinds)
    return f"building: {ready} of {total} documents ready (it serves when all are)"


@asset(partitions_def=shard_partitions, **_COMMON)
def sources(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Inbox files of the run's shards with content hashes; new, changed and deleted files."""
    return _materialize(context, store, "sources")


@asset(deps=[sources], partitions_def=shard_partitions, check_specs=CHECK_SPECS["documents"], **_COMMON)
def documents(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Parsed documents (every version kept); parse failures go to ``ingest_failures``."""
    return _materialize(context, store, "documents")


# The shard mapping is what lets a chunk partition depend on its shard.
_BY_SHARD = MultiToSingleDimensionPartitionMapping(partition_dimension_name=SHARD_DIMENSION)


@asset(
    deps=[AssetDep(documents, partition_mapping=_BY_SHARD)],
    partitions_def=plan_shard_partitions,
    check_specs=CHECK_SPECS["parent_chunks"],
    **_COMMON,
)
def parent_chunks(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Level-1 chunk sets per plan, reused when (document, version, parent fingerprint) is stored."""
    return _materialize(context, store, "parent_chunks")


@asset(
    deps=[parent_chunks],
    partitions_def=plan_shard_partitions,
    check_specs=CHECK_SPECS["child_chunks"],
    **_COMMON,
)
def child_chunks(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Level-0 chunk sets cut from the current parents, reused when their key is stored."""
    return _materialize(context, store, "child_chunks")


@asset(
    deps=[child_chunks],
    partitions_def=plan_shard_partitions,
    check_specs=CHECK_SPECS["graph_nodes"],
    **_COMMON,
)
def graph_nodes(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Graph node and edge records (document, chunks; HAS_CHUNK, PARENT_OF, NEXT) per plan."""
    return _materialize(context, store, "graph_nodes")


# After graph_nodes too, though it reads only children: for a plan that embeds, the embeddings
# step is the last one, where a document is promoted and a key switches, so its metadata shows
# the key's state after the run.
@asset(
    deps=[child_chunks, graph_nodes],
    partitions_def=plan_shard_partitions,
    check_specs=CHECK_SPECS["embeddings"],
    **_COMMON,
)
def embeddings(context: AssetExecutionContext, store: DuckDBStore) -> MaterializeResult:
    """Vectors of the current children of plans with ``embedding``; only never-embedded texts
    go to the model (a vector is keyed by text hash and model fingerprint)."""
    return _materialize(context, store, "embeddings")
