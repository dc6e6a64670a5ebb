"""The one automation: ``ingest_sensor`` asks the store what is pending and runs exactly that.

Each tick (every ``INGEST_SENSOR_SECONDS``, default 30):

1. The plans file is read; an invalid one launches nothing and says why (the tick's skip
   reason); its keys are added as ``plan`` partitions (a retired key keeps its partition and
   history; the store's views serve live plans only).
2. While a run this sensor launched is queued or running, nothing more is launched: the store
   is about to change.
3. ``IngestEngine.pending()`` (read-only) says which partitions have work. Document work comes
   first: a ``documents_job`` run for the shards with new, changed, deleted or unparsed files.
   Without it, a ``chunks_job`` run per plan for its shards with sets to chunk or relink (a new
   or returning plan key, an edit's new version, a catch-up after the sensor was off). A run
   covers one partition, or the range of them when more than ``RANGE_FROM`` have work (a new
   plan key: its start-up is paid once); each partition gets its own metadata either way.
4. Run keys derive from the pending work (``Pending.keys``) and the number of earlier failed
   attempts at it, so the same work is never launched twice while it succeeds, a failed run is
   retried (at most ``MAX_ATTEMPTS`` times, then the tick says so), and any change (an edit, a
   fix, a plan put back) is new work. Nothing pending: no run.
"""

import hashlib
from typing import Any

from dagster import (
    AssetKey,
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from ingest_assets.defs.forecast import forecast_observations
from ingest_assets.defs.jobs import chunks_job, documents_job
from ingest_assets.defs.partitions import PLAN_DIMENSION, plan_partitions
from ingest_assets.defs.resources import DuckDBStore
from ingest_assets.engine import SHARDS, IngestEngine
from ingest_assets.plans import PlanError
from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore, StoreError

__all__ = ["AUTOMATION_TAG", "MAX_ATTEMPTS", "WORK_TAG", "ingest_sensor", "range_tags"]

AUTOMATION_TAG, WORK_TAG = "ingest/automation", "ingest/work"
MAX_ATTEMPTS = 3
# Above this many partitions of one plan (or of documents) with work, one range run does them.
RANGE_FROM = 2
# A tick must not wait long for a store another process writes: it skips and tries next time.
STORE_WAIT_SECONDS = 5.0
_ACTIVE = [
    DagsterRunStatus.QUEUED,
    DagsterRunStatus.NOT_STARTED,
    DagsterRunStatus.STARTING,
    DagsterRunStatus.STARTED,
    DagsterRunStatus.CANCELING,
]
_FAILED = [DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED]


def _batched(work: list[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    """The runs for ``work`` (job, partition), in order: one per partition, except that a plan (or
    the documents) with more than :data:`RANGE_FROM` partitions of work gets one run over their
    range (a new plan key: every shard), whose start-up is paid once. Each partition still gets
    its own metadata; its data version is then the range's."""
    groups: dict[tuple[str, str], list[str]] = {}
    for job, partition in work:
        groups.setdefault((job, partition.rpartition("|")[0]), []).append(partition)
    runs: list[tuple[str, list[str]]] = []
    for (job, _), partitions in groups.items():
        if len(partitions) > RANGE_FROM:
            runs.append((job, sorted(partitions)))
        else:
            runs += [(job, [p]) for p in partitions]
    return runs


def _digest(keys: list[str]) -> str:
    return keys[0] if len(keys) == 1 else hashlib.sha256(",".join(keys).encode()).hexdigest()[:16]


def _never_materialized(instance: Any, asset: str, partitions: list[str]) -> list[str]:
    """Which of ``partitions`` of ``asset`` have no materialization at all."""
    made = instance.get_materialized_partitions(AssetKey(asset))
    return [p for p in partitions if p not in made]


def range_tags(start: str, end: str) -> dict[str, str]:
    """Run tags that make one run cover the partition range ``start``..``end``."""
    return {"dagster/asset_partition_range_start": start, "dagster/asset_partition_range_end": end}


@sensor(
    jobs=[documents_job, chunks_job],
    minimum_interval_seconds=Settings.from_env().sensor_seconds,
    default_status=DefaultSensorStatus.STOPPED,
)
def ingest_sensor(context: SensorEvaluationContext, store: DuckDBStore) -> SensorResult | SkipReason:
    """Launch a run for each partition the store says has work (see the module docstring)."""
    instance = context.instance
    try:
        plans = store.plans()
    except PlanError as error:
        return SkipReason(f"the plans file is invalid, nothing launched: {error}")
    known = set(instance.get_dynamic_partitions(PLAN_DIMENSION))
    added = [plan.key for plan in plans if plan.key not in known]
    registrations = [plan_partitions.build_add_request(added)] if added else []
    # A new plan key's forecast (ingest plans --diff), shown on its partitions before it runs.
    forecasts = _forecasts(store, plans, added) if added else []
    active = instance.get_runs(filters=RunsFilter(statuses=_ACTIVE, tags={AUTOMATION_TAG: "true"}), limit=1)
    if active:
        return SensorResult(
            skip_reason=f"waiting for run {active[0].run_id}",
            dynamic_partitions_requests=registrations,
            asset_events=forecasts,
        )
    view = IngestStore(store.database, lock_timeout=STORE_WAIT_SECONDS)
    try:
        pending = IngestEngine(view, store.inbox, plans, store.settings().limits).pending()
    except StoreError as error:
        return SensorResult(
            skip_reason=f"store busy, trying next tick: {error}",
            dynamic_partitions_requests=registrations,
            asset_events=forecasts,
        )
    # Partitions never materialized (a shard with no file yet) get a run too, so every partition
    # shows what the store holds there, not "missing".
    unmade = _never_materialized(instance, "documents", list(SHARDS))
    if pending.documents or unmade:
        work = [(documents_job.name, shard) for shard in sorted({*pending.documents, *unmade})]
    else:
        chunk_work = {f"{key}|{shard}" for key, shards in pending.chunks.items() for shard in shards}
        every = [f"{plan.key}|{shard}" for plan in plans for shard in SHARDS]
        work = [
            (chunks_job.name, p)
            for p in sorted(chunk_work | set(_never_materialized(instance, "graph_nodes", every)))
        ]
    requests, exhausted = [], []
    for job, batch in _batched(work):
        key = _digest([pending.keys.get(p, f"unmaterialized-{p}") for p in batch])
        failed = instance.get_runs_count(RunsFilter(statuses=_FAILED, tags={WORK_TAG: key}))
        if failed >= MAX_ATTEMPTS:
            exhausted += batch
            continue
        first, last = batch[0], batch[-1]
        requests.append(
            RunRequest(
                run_key=f"{job}:{first}..{last}:{key}:{failed}",
                job_name=job,
                partition_key=first if len(batch) == 1 else None,
                tags={
                    AUTOMATION_TAG: "true",
                    WORK_TAG: key,
                    **({} if len(batch) == 1 else range_tags(first, last)),
                },
            )
        )
    if requests:
        return SensorResult(
            run_requests=requests, dynamic_partitions_requests=registrations, asset_events=forecasts
        )
    reason = "nothing pending"
    if exhausted:
        shown = ", ".join(exhausted[:4])
        reason = (
            f"{len(exhausted)} partitions failed {MAX_ATTEMPTS} times with the same work ({shown}): "
            "see those runs and fix the cause (a changed file or plan is new work), or launch them "
            "from the UI"
        )
    return SensorResult(skip_reason=reason, dynamic_partitions_requests=registrations, asset_events=forecasts)


def _forecasts(store: DuckDBStore, plans: list, added: list[str]) -> list:
    """The forecast observations of the ``added`` plan keys; none while the store is busy or
    the inbox missing (the figures are a help: the tick goes on without them)."""
    try:
        return forecast_observations(
            store.database, store.inbox, plans, added, store.settings(), STORE_WAIT_SECONDS
        )
    except (StoreError, FileNotFoundError):
        return []
