"""The private Dagster APIs this project uses, in one place, each with why.

Dagster 1.13 offers no public call for these; when it does, replace them here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dagster import AssetKey, DagsterInstance, DagsterRun, RunRequest

# The run tags by which one run covers a partition range: Dagster sets them on a single-run
# backfill's runs and reads them to record each partition's materialization; the sensor and
# ``ingest run`` set them on their own range runs. No public name exists for them.
from dagster._core.storage.tags import ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG
from filelock import FileLock

__all__ = [
    "ASSET_PARTITION_RANGE_END_TAG",
    "ASSET_PARTITION_RANGE_START_TAG",
    "backfill_partitions",
    "backfill_request",
    "backfills_with",
    "free_pool_slots",
    "instance_at",
]


# Dagster's compute-log manager that copies nothing (see instance_at).
_NO_CAPTURE = {"module": "dagster._core.storage.noop_compute_log_manager", "class": "NoOpComputeLogManager"}


def instance_at(home: Path, *, capture_output: bool = True) -> DagsterInstance:
    """The instance configured by ``home/dagster.yaml``, without setting ``DAGSTER_HOME`` for the
    whole process (``DagsterInstance.get()`` reads only that variable): ``ingest run --db`` may
    point at another home than the shell's.

    ``capture_output=False`` leaves the steps' stdout and stderr where they go (a terminal):
    Dagster's capture copies them into files under ``home`` for the UI by starting a ``tail``
    and a Python watcher process for each stream of each run (``compute_logs`` replaced by
    its no-op manager for this instance only).

    Two processes opening a new home at once race to create its SQLite tables and to stamp their
    schema version (the loser fails with "table ... already exists" or with a UNIQUE constraint
    on ``alembic_version``): opening holds an exclusive lock on ``home/.instance.lock``, so the
    second process opens what the first one made (``filelock``, which Dagster installs).
    """
    from dagster._core.instance.ref import InstanceRef

    home.mkdir(parents=True, exist_ok=True)
    overrides = None if capture_output else {"compute_logs": _NO_CAPTURE}
    with FileLock(home / ".instance.lock"):
        return DagsterInstance.from_ref(InstanceRef.from_dir(str(home), overrides=overrides))


def free_pool_slots(instance: DagsterInstance, run: DagsterRun) -> None:
    """Free the concurrency-pool slots a killed run still holds. The daemon's run monitoring
    does this for runs it launched; ``ingest run`` executes in its own process, so it frees the
    slots of its killed runs itself before the next run (else the writer pool waits forever)."""
    instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)


def backfill_request(
    asset_graph: Any, assets: list[str], partitions: list[str], tags: dict[str, str]
) -> RunRequest:
    """A sensor's request for one asset backfill of ``assets`` over ``partitions``, which the
    sensor daemon submits as a backfill (listed on the *Backfills* page, as one launched from
    the UI is). ``RunRequest.for_asset_graph_subset`` and ``AssetGraphSubset`` are the only way
    a sensor launches a backfill, and both are marked internal."""
    from dagster._core.definitions.assets.graph.asset_graph_subset import AssetGraphSubset
    from dagster._core.definitions.events import AssetKeyPartitionKey

    wanted = {AssetKeyPartitionKey(AssetKey(asset), p) for asset in assets for p in partitions}
    subset = AssetGraphSubset.from_asset_partition_set(wanted, asset_graph)
    return RunRequest.for_asset_graph_subset(subset, tags)


def backfill_partitions(request: RunRequest) -> list[tuple[str, str]]:
    """The (asset, partition) pairs of a backfill request made by :func:`backfill_request`
    (empty for a run request), sorted."""
    subset = request.asset_graph_subset
    if subset is None:
        return []
    return sorted(
        (ap.asset_key.to_user_string(), str(ap.partition_key)) for ap in subset.iterate_asset_partitions()
    )


def backfills_with(instance: DagsterInstance, tags: dict[str, str], *, active: bool) -> list[Any]:
    """The backfills carrying ``tags`` that are still going (``active``), or that failed or were
    canceled. ``BulkActionsFilter`` and ``BulkActionStatus`` are not exported by dagster."""
    from dagster._core.execution.backfill import BulkActionsFilter, BulkActionStatus

    statuses = (
        [BulkActionStatus.REQUESTED, BulkActionStatus.CANCELING, BulkActionStatus.FAILING]
        if active
        else [BulkActionStatus.FAILED, BulkActionStatus.COMPLETED_FAILED, BulkActionStatus.CANCELED]
    )
    return list(instance.get_backfills(filters=BulkActionsFilter(statuses=statuses, tags=tags)))
