"""Partitions: documents by shard; chunk assets by plan key (dynamic) x shard.

Partition counts stay constant as the corpus grows: 8 shards, one plan key per live plan.
In a MultiPartitionKey the dimensions sort by name, so keys read ``<plan key>|<shard>``.
"""

from typing import Any

from dagster import (
    AssetKey,
    DynamicPartitionsDefinition,
    MultiPartitionsDefinition,
    StaticPartitionsDefinition,
)

from ingest_assets.engine import SHARDS
from ingest_assets.engine.keys import chunk_partition

__all__ = [
    "PLAN_DIMENSION",
    "SHARD_DIMENSION",
    "never_materialized",
    "plan_partitions",
    "plan_shard_partitions",
    "shard_partitions",
]

PLAN_DIMENSION = "plan"
SHARD_DIMENSION = "shard"

shard_partitions = StaticPartitionsDefinition(list(SHARDS))
plan_partitions = DynamicPartitionsDefinition(name=PLAN_DIMENSION)
plan_shard_partitions = MultiPartitionsDefinition(
    {PLAN_DIMENSION: plan_partitions, SHARD_DIMENSION: shard_partitions}
)


def never_materialized(instance: Any, plan_key: str | None = None) -> list[str]:
    """The partitions of the documents assets (``plan_key`` None) or of ``plan_key``'s chunk
    assets that have no materialization at all: a shard no file has landed in yet.

    A run with work in a partitions definition covers these too. Their first materialization
    is their own work (it records that the shard holds nothing), every partition then shows
    what the store holds there instead of "missing", and the stretches of shards with work
    join up into fewer runs (on a new store: one per partitions definition).
    """
    if plan_key is None:
        asset, every = "documents", list(SHARDS)
    else:  # the last chunk asset: a partition whose graph nodes were made was made whole
        asset, every = "graph_nodes", [chunk_partition(plan_key, shard) for shard in SHARDS]
    made = instance.get_materialized_partitions(AssetKey(asset))
    return [partition for partition in every if partition not in made]
