"""The automation: ``plans_sensor`` keeps the plan partitions in step with the plans file, and
``ingest_sensor`` asks the store what is pending and runs exactly that.

``plans_sensor`` (on by default; it only registers, it never launches a run): every tick it
reads the plans file and adds each new plan key as a ``plan`` partition, with the key's
forecast (``ingest plans --diff``) on its partitions, so after an edit of the plans file (and
*Reload*) the new key's partitions are listed as missing within a tick, whatever
``ingest_sensor``'s state: a backfill of them from the UI builds the key. When a key's state in
the store changes (building, live, retired) its partitions get an observation saying so. A key
given up before it ever served (abandoned for another, or removed) loses its partitions; keys
that served keep theirs, with their history.

``ingest_sensor`` (off by default: the one switch), every ``INGEST_SENSOR_SECONDS`` (30):

1. The plans file is read (an invalid one launches nothing and says why) and new keys are
   registered as above.
2. While a run or a backfill this sensor launched is active, nothing more is launched.
3. ``IngestEngine.pending()`` (read-only) says which partitions have work. Document work comes
   first: a run of ``sources`` and ``documents`` per stretch of consecutive shards with new, changed, deleted
   or unparsed files. Without it, chunk work: for a live plan key, a run of the chunk assets per
   stretch of consecutive shards with work (an edit's new version, a catch-up); for a key that
   is not live (a new or returning plan key, building beside the live one) one asset backfill
   of the four chunk assets over its shards with work, listed on the *Backfills* page. Only
   partitions with work are materialized, so each materialization is a partition's own; a
   partition never materialized (a shard no file has landed in yet) counts as work, so a new
   store's first runs cover every shard and no partition stays "missing".
4. Run keys (and backfill tags) derive from the pending work (``Pending.keys``) and the number
   of earlier failed attempts at it: the same work is never launched twice while it succeeds, a
   failed attempt is retried (at most ``MAX_ATTEMPTS`` times, then the tick says so), and any
   change (an edit, a fix, a plan put back) is new work. Nothing pending: no run.
5. A documents run's chunk work is queued in the same tick, when the instance's run queue can
   hold it back: each live plan key gets a run of the chunk assets over the same shards, tagged
   ``ingest/after`` with the documents run's work key, which ``dagster.yaml`` limits to one run
   at a time per value (``tag_concurrency_limits``), and at a lower priority, so the queue starts
   it when the documents run has ended. Its steps ask the store for their work when they run, so
   it chunks what the documents run wrote; without it an edit waited a further tick. On an
   instance without that limit the chunk runs wait for the next tick, as before.

Inbox entries the scan skips (links, pipes and other special files, names that are not UTF-8,
folders that cannot be listed) are no work, so no run names them: the first tick that reads the
pending work after they appear logs them as one warning, and again only when they change (the
sensor's cursor holds a digest of the set it warned about last; empty: none).
"""

import hashlib
import json
from typing import Any

from dagster import (
    AssetKey,
    AssetObservation,
    DagsterRunStatus,
    DefaultSensorStatus,
    QueuedRunCoordinator,
    RunRequest,
    RunsFilter,
    SensorDefinition,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from ingest_assets.defs.forecast import forecast_observations
from ingest_assets.defs.jobs import CHUNK_ASSETS, DOCUMENT_ASSETS
from ingest_assets.defs.partitions import PLAN_DIMENSION, never_materialized, plan_partitions
from ingest_assets.defs.private import (
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
    backfill_request,
    backfills_with,
)
from ingest_assets.defs.resources import DuckDBStore
from ingest_assets.engine import SHARDS, IngestEngine
from ingest_assets.engine.keys import chunk_partition, is_chunk_partition, plan_and_shard, stretches
from ingest_assets.engine.scan import SKIPPED_SHOWN
from ingest_assets.plans import Plan, PlanError
from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore, StoreError

__all__ = [
    "AFTER_TAG",
    "AUTOMATION_TAG",
    "MAX_ATTEMPTS",
    "RANGE_END_TAG",
    "RANGE_START_TAG",
    "WORK_TAG",
    "build_sensors",
    "ingest_tick",
    "plans_tick",
    "range_tags",
]

AUTOMATION_TAG, WORK_TAG = "ingest/automation", "ingest/work"
# A documents run and the chunk runs queued behind it share this tag's value (see 5. above).
AFTER_TAG = "ingest/after"
PRIORITY_TAG = "dagster/priority"
MAX_ATTEMPTS = 3
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


def _stretches(partitions: list[str]) -> list[list[str]]:
    """``partitions`` (``<shard>`` or ``<plan>|<shard>``, of one plan) cut into stretches of
    consecutive shards: a run over a stretch materializes exactly its partitions."""
    if not partitions or not is_chunk_partition(partitions[0]):
        return stretches(partitions)
    plan_key = plan_and_shard(partitions[0])[0]
    runs = stretches(plan_and_shard(p)[1] for p in partitions)
    return [[chunk_partition(plan_key, shard) for shard in run] for run in runs]


def _digest(keys: list[str]) -> str:
    return keys[0] if len(keys) == 1 else hashlib.sha256(",".join(keys).encode()).hexdigest()[:16]


# The run tags by which a run covers a partition range (Dagster's own, see .private).
RANGE_START_TAG, RANGE_END_TAG = ASSET_PARTITION_RANGE_START_TAG, ASSET_PARTITION_RANGE_END_TAG


def range_tags(start: str, end: str) -> dict[str, str]:
    """Run tags that make one run cover the partition range ``start``..``end``."""
    return {RANGE_START_TAG: start, RANGE_END_TAG: end}


def _registrations(
    context: SensorEvaluationContext, store: DuckDBStore, plans: list[Plan], kept: set[str] | None
) -> tuple[list[Any], list[Any]]:
    """The dynamic-partition requests that register the plans file's new keys (and, given the
    keys to ``kept`` besides the file's, drop the partitions of the others), and the new keys'
    forecasts."""
    known = set(context.instance.get_dynamic_partitions(PLAN_DIMENSION))
    wanted = {plan.key for plan in plans}
    added = sorted(wanted - known)
    requests = [plan_partitions.build_add_request(added)] if added else []
    if kept is not None:
        dropped = sorted(known - wanted - kept)
        if dropped:
            requests.append(plan_partitions.build_delete_request(dropped))
    # A new plan key's forecast (ingest plans --diff), shown on its partitions before it runs.
    forecasts = _forecasts(store, plans, added) if added else []
    return requests, forecasts


def _states_and_kept(store: DuckDBStore) -> tuple[dict[str, str], set[str]]:
    """Each stored plan key's state, and the keys whose partitions stay: those building or live
    now, and those that served at some time (their history is worth keeping)."""
    view = IngestStore(store.database, lock_timeout=STORE_WAIT_SECONDS, settings=store.settings())
    with view.session():
        states = {key: s.state for key, s in view.plan_states().items()}
        served = {
            key for (key,) in view.query("SELECT DISTINCT plan_key FROM plan_states WHERE state = 'live'")
        }
    return states, served | {key for key, state in states.items() if state != "retired"}


def _state_observations(
    known: set[str], states: dict[str, str], cursor: str | None
) -> list[AssetObservation]:
    """An observation of each chunk asset's partitions of every listed plan key whose state
    changed since the states in ``cursor`` (JSON), so the UI shows a key going live or retiring."""
    seen = json.loads(cursor) if cursor else {}
    return [
        AssetObservation(
            asset_key=asset,
            partition=chunk_partition(key, shard),
            metadata={"plan_state": STATE_TEXT.get(state, state)},
        )
        for key, state in sorted(states.items())
        if key in known and seen.get(key) != state
        for asset in CHUNK_ASSETS
        for shard in SHARDS
    ]


STATE_TEXT = {
    "live": "live",
    "building": "building (the views switch to it when it covers every document)",
    "retired": "retired (stored: putting its settings back serves it again without chunking)",
}


def build_sensors(settings: Settings) -> list[SensorDefinition]:
    """``ingest_sensor`` (the one switch, off by default) and ``plans_sensor`` (on), each
    evaluated every ``settings.sensor_seconds``."""
    every = _minimum_interval(settings.sensor_seconds)
    return [
        sensor(
            name="ingest_sensor",
            # An asset selection rather than jobs: only a sensor that targets assets may launch
            # backfills.
            asset_selection=[*DOCUMENT_ASSETS, *CHUNK_ASSETS],
            minimum_interval_seconds=every,
            default_status=DefaultSensorStatus.STOPPED,
            description="Runs exactly what the store says is pending: new, changed and deleted files, "
            "then their chunks; a new plan key as a backfill; failed work retried.",
        )(ingest_tick),
        sensor(
            name="plans_sensor",
            minimum_interval_seconds=every,
            default_status=DefaultSensorStatus.RUNNING,
            description="Lists each plan key of the plans file as partitions of the chunk assets (within "
            "a tick of a Reload), so a new key can be backfilled from the UI, and observes each key going "
            "live or retiring. Launches nothing.",
        )(plans_tick),
    ]


def _minimum_interval(seconds: int) -> int:
    """The ``minimum_interval_seconds`` that makes a sensor tick every ``seconds``.

    Dagster's sensor daemon looks at the sensors once per loop (every five seconds) and skips a
    sensor whose last tick began less than its minimum interval ago. A tick begins a moment
    after its loop does, so with an interval of exactly a whole number of loops the next due
    loop sees a few milliseconds less and skips it about every other time (an interval of 5
    became 10). One second less keeps the ticks on the loop they are due on (a tick comes at
    most a second early, and only after a loop that overran its five seconds).
    """
    return max(1, seconds - 1)


def plans_tick(context: SensorEvaluationContext, store: DuckDBStore) -> SensorResult | SkipReason:
    """Register the plans file's keys as partitions (see the module docstring)."""
    try:
        plans = store.plans()
    except PlanError as error:
        return SkipReason(f"the plans file is invalid, nothing registered: {error}")
    try:
        states, kept = _states_and_kept(store)
    except StoreError:
        states, kept = {}, None  # the store is busy: prune and observe next time
    requests, forecasts = _registrations(context, store, plans, kept)
    observed: list[AssetObservation] = []
    if kept is not None:
        listed = set(context.instance.get_dynamic_partitions(PLAN_DIMENSION)) & (
            kept | {p.key for p in plans}
        )
        observed = _state_observations(listed, states, context.cursor)
        context.update_cursor(json.dumps(states, sort_keys=True))
    if not requests and not observed:
        return SkipReason("every plan key of the plans file is listed")
    return SensorResult(dynamic_partitions_requests=requests, asset_events=[*forecasts, *observed])


def _warn_skipped(context: SensorEvaluationContext, lines: list[str]) -> None:
    """Log the inbox entries the scan skipped (``Pending.skipped``) as one warning, unless the
    sensor's cursor says the same set was warned about already; the cursor becomes the set's
    digest (empty: none)."""
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16] if lines else ""
    if digest == (context.cursor or ""):
        return
    if lines:
        more = len(lines) - SKIPPED_SHOWN
        context.log.warning(
            f"{len(lines)} inbox entries are skipped and never read (links, pipes and other special "
            "files, names that are not UTF-8, folders that cannot be listed):\n"
            + "\n".join(lines[:SKIPPED_SHOWN])
            + (f"\n... and {more} more" if more > 0 else "")
        )
    context.update_cursor(digest)


def ingest_tick(context: SensorEvaluationContext, store: DuckDBStore) -> SensorResult | SkipReason:
    """Launch a run for each stretch of partitions the store says has work (see the module
    docstring); warn of skipped inbox entries once per set (:func:`_warn_skipped`)."""
    instance = context.instance
    try:
        plans = store.plans()
    except PlanError as error:
        return SkipReason(f"the plans file is invalid, nothing launched: {error}")
    registrations, forecasts = _registrations(context, store, plans, None)

    def result(reason: str | None = None, requests: list[RunRequest] | None = None) -> SensorResult:
        return SensorResult(
            run_requests=requests or [],
            skip_reason=reason,
            dynamic_partitions_requests=registrations,
            asset_events=forecasts,
        )

    active = instance.get_runs(filters=RunsFilter(statuses=_ACTIVE, tags={AUTOMATION_TAG: "true"}), limit=1)
    if active:
        return result(f"waiting for run {active[0].run_id}")
    backfills = backfills_with(instance, {AUTOMATION_TAG: "true"}, active=True)
    if backfills:
        return result(f"waiting for backfill {backfills[0].backfill_id}")
    settings = store.settings()
    view = IngestStore(store.database, lock_timeout=STORE_WAIT_SECONDS, settings=settings)
    try:
        pending = IngestEngine(view, store.inbox, plans, settings).pending()
        _warn_skipped(context, pending.skipped)
        states = {key: state.state for key, state in view.plan_states().items()}
    except StoreError as error:
        return result(f"store busy, trying next tick: {error}")
    requests, exhausted = _requests(context, pending, plans, states, chain=queues_after(instance))
    if requests:
        return result(requests=requests)
    reason = "nothing pending"
    if exhausted:
        shown = ", ".join(exhausted[:4])
        reason = (
            f"{len(exhausted)} partitions failed {MAX_ATTEMPTS} times with the same work ({shown}): "
            "see those runs and fix the cause (a changed file or plan is new work), or launch them "
            "from the UI"
        )
    return result(reason)


def queues_after(instance: Any) -> bool:
    """Whether ``instance``'s run queue starts at most one run at a time per value of
    :data:`AFTER_TAG`, which holding chunk runs back behind their documents run needs."""
    if not isinstance(instance.run_coordinator, QueuedRunCoordinator):
        return False  # runs start when launched: no queue holds them back
    queue = instance.get_concurrency_config().run_queue_config
    return any(
        limit.get("key") == AFTER_TAG
        and limit.get("value") == {"applyLimitPerUniqueValue": True}
        and limit.get("limit") == 1
        for limit in (queue.tag_concurrency_limits if queue else ())
    )


def _requests(
    context: SensorEvaluationContext,
    pending: Any,
    plans: list[Plan],
    states: dict[str, str],
    chain: bool = False,
) -> tuple[list[RunRequest], list[str]]:
    """The runs and backfills for ``pending``, and the partitions given up on; with ``chain``,
    a documents run's chunk runs queued behind it."""
    instance = context.instance
    # A never-materialized partition (a shard no file has landed in yet) is work of its
    # definition's next run (partitions.never_materialized): documents first, then chunks.
    unmade = never_materialized(instance)
    if pending.documents or unmade:
        groups: dict[str | None, list[str]] = {None: sorted({*pending.documents, *unmade})}
        job, assets = "documents", DOCUMENT_ASSETS
    else:
        job, assets = "chunks", CHUNK_ASSETS
        known = set(instance.get_dynamic_partitions(PLAN_DIMENSION))
        groups = {}
        for plan in plans:
            if plan.key not in known:
                continue  # registered first
            shards = pending.chunks.get(plan.key, [])
            # A key being built covers its empty shards only with its own work: alone they
            # would build nothing.
            if shards or states.get(plan.key) == "live":
                partitions = {chunk_partition(plan.key, shard) for shard in shards}
                partitions |= set(never_materialized(instance, plan.key))
                if partitions:
                    groups[plan.key] = sorted(partitions)
    requests, exhausted = [], []
    for plan_key, partitions in groups.items():
        if plan_key is not None and states.get(plan_key) != "live":
            # A key that does not serve yet: one backfill builds it, listed on the Backfills page.
            key = _digest([pending.keys.get(p, f"unmaterialized-{p}") for p in partitions])
            failed = len(backfills_with(instance, {WORK_TAG: key}, active=False))
            if failed >= MAX_ATTEMPTS:
                exhausted += partitions
                continue
            tags = {AUTOMATION_TAG: "true", WORK_TAG: key}
            requests.append(
                backfill_request(context.repository_def.asset_graph, CHUNK_ASSETS, partitions, tags)
            )
            continue
        for batch in _stretches(partitions):
            key = _digest([pending.keys.get(p, f"unmaterialized-{p}") for p in batch])
            failed = instance.get_runs_count(RunsFilter(statuses=_FAILED, tags={WORK_TAG: key}))
            if failed >= MAX_ATTEMPTS:
                exhausted += batch
                continue
            after = {AFTER_TAG: f"{key}:{failed}"} if chain and plan_key is None else {}
            followers = _chunk_runs_after(instance, plans, states, batch, after) if after else []
            # Tagged only when runs queue behind it (a new store has no live key yet).
            requests.append(_run_request(job, assets, batch, key, failed, after if followers else {}))
            requests += followers
    return requests, exhausted


def _run_request(
    job: str, assets: list[str], batch: list[str], key: str, failed: int, extra: dict[str, str]
) -> RunRequest:
    """One run of ``assets`` over the stretch ``batch`` for the work ``key`` (``failed``
    attempts at it before), with ``extra`` tags."""
    first, last = batch[0], batch[-1]
    return RunRequest(
        run_key=f"{job}:{first}..{last}:{key}:{failed}",
        asset_selection=[AssetKey(asset) for asset in assets],
        partition_key=first if len(batch) == 1 else None,
        tags={
            AUTOMATION_TAG: "true",
            WORK_TAG: key,
            **({} if len(batch) == 1 else range_tags(first, last)),
            **extra,
        },
    )


def _chunk_runs_after(
    instance: Any, plans: list[Plan], states: dict[str, str], shards: list[str], after: dict[str, str]
) -> list[RunRequest]:
    """A run of the chunk assets over ``shards`` for each live, registered plan key, queued
    behind the documents run tagged ``after`` (module docstring, 5.). Each is asked for once,
    with its documents run: one that fails leaves its work pending, and the ticks after launch
    that as any chunk work, with its retries."""
    known = set(instance.get_dynamic_partitions(PLAN_DIMENSION))
    tags = {**after, PRIORITY_TAG: "-1"}
    return [
        _run_request(
            "chunks",
            CHUNK_ASSETS,
            [chunk_partition(plan.key, shard) for shard in shards],
            _digest(["after", after[AFTER_TAG], plan.key]),
            0,
            tags,
        )
        for plan in plans
        if states.get(plan.key) == "live" and plan.key in known
    ]


def _forecasts(store: DuckDBStore, plans: list, added: list[str]) -> list:
    """The forecast observations of the ``added`` plan keys; none while the store is busy or
    the inbox missing (the figures are a help: the tick goes on without them)."""
    try:
        return forecast_observations(
            store.database, store.inbox, plans, added, store.settings(), STORE_WAIT_SECONDS
        )
    except (StoreError, FileNotFoundError):
        return []
