"""Sensors: the inbox sensor (files changed) and the plan sensor (plans file changed).

The inbox sensor reads only file names, sizes and mtimes (cheap, no hashing, no DuckDB) and
keeps one digest per shard in its cursor; a shard whose digest moved gets a documents run,
and the chunk assets follow through their eager automation condition. The plan sensor keeps
the dynamic ``plan`` partitions equal to the plans file and launches one single-run backfill
over all shards of each new plan key.
"""

import hashlib
import json
from pathlib import Path

from dagster import (
    DefaultSensorStatus,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from chunking import Document
from ingest_assets.defs.jobs import chunks_job, documents_job
from ingest_assets.defs.partitions import PLAN_DIMENSION, plan_partitions
from ingest_assets.defs.resources import DuckDBStore
from ingest_assets.engine import SHARDS, shard_of
from ingest_assets.inbox import walk_inbox
from ingest_assets.plans import PlanError

__all__ = ["inbox_sensor", "plan_sensor", "range_tags"]

INBOX_INTERVAL_SECONDS = 60
PLAN_INTERVAL_SECONDS = 30


def range_tags(start: str, end: str) -> dict[str, str]:
    """Run tags that make one run cover the partition range ``start``..``end``."""
    return {"dagster/asset_partition_range_start": start, "dagster/asset_partition_range_end": end}


def shard_digests(inbox: str | Path) -> dict[str, str]:
    """Return a digest per shard of the inbox listing (path, size, mtime), from the same walk as
    the scan (links and special files skipped).

    Raises:
        FileNotFoundError: The inbox is not a folder.
    """
    hashes = {shard: hashlib.sha256() for shard in SHARDS}
    for found in walk_inbox(inbox).files:
        shard = shard_of(Document.node_id_for(found.uri))
        hashes[shard].update(f"{found.path}\x1f{found.stat.st_size}\x1f{found.stat.st_mtime_ns}\n".encode())
    return {shard: digest.hexdigest()[:16] for shard, digest in hashes.items()}


@sensor(
    job=documents_job,
    minimum_interval_seconds=INBOX_INTERVAL_SECONDS,
    default_status=DefaultSensorStatus.STOPPED,
)
def inbox_sensor(context: SensorEvaluationContext, store: DuckDBStore) -> SensorResult | SkipReason:
    """Request a documents run for each shard whose files were added, changed or deleted."""
    if not Path(store.inbox).is_dir():
        return SkipReason(f"inbox {store.inbox} is not a folder; set INGEST_INBOX")
    before = json.loads(context.cursor) if context.cursor else {}
    now = shard_digests(store.inbox)
    changed = [shard for shard in SHARDS if before.get(shard) != now[shard]]
    requests = [RunRequest(run_key=f"inbox:{shard}:{now[shard]}", partition_key=shard) for shard in changed]
    return SensorResult(run_requests=requests, cursor=json.dumps(now, sort_keys=True))


@sensor(
    job=chunks_job,
    minimum_interval_seconds=PLAN_INTERVAL_SECONDS,
    default_status=DefaultSensorStatus.STOPPED,
)
def plan_sensor(context: SensorEvaluationContext, store: DuckDBStore) -> SensorResult | SkipReason:
    """Register new plan keys as ``plan`` partitions, drop retired ones, backfill the new ones."""
    try:
        current = sorted(plan.key for plan in store.plans())
    except PlanError as error:
        return SkipReason(f"plans file is invalid, nothing registered: {error}")
    known = set(context.instance.get_dynamic_partitions(PLAN_DIMENSION))
    added = [key for key in current if key not in known]
    retired = sorted(known - set(current))
    requests = [
        RunRequest(run_key=f"plan:{key}", tags=range_tags(f"{key}|{SHARDS[0]}", f"{key}|{SHARDS[-1]}"))
        for key in added
    ]
    partition_requests = []
    if added:
        partition_requests.append(plan_partitions.build_add_request(added))
    if retired:
        partition_requests.append(plan_partitions.build_delete_request(retired))
    return SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=partition_requests,
        cursor=json.dumps(current),
    )
