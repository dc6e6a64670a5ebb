"""Partitions: documents by shard; chunk assets by plan key (dynamic) x shard.

Partition counts stay constant as the corpus grows: 8 shards, one plan key per live plan.
In a MultiPartitionKey the dimensions sort by name, so keys read ``<plan key>|<shard>``.
"""

from dagster import DynamicPartitionsDefinition, MultiPartitionsDefinition, StaticPartitionsDefinition

from ingest_assets.engine import SHARDS

__all__ = [
    "PLAN_DIMENSION",
    "SHARD_DIMENSION",
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
