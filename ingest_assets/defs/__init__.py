"""The Dagster side of the project: the only package here that imports dagster.

============  ==============================================================
module        job
============  ==============================================================
``assets``    the six assets, one engine step each
``checks``    asset checks over what the store's views show (in their asset's step)
``sensors``   ``ingest_sensor``: runs for exactly what the store says is pending
``jobs``      one job per partitions definition
``exports``   ``export_job``: ``ingest export`` from the UI
``partitions``  shards; plan keys x shards
``resources`` the store as a resource (one store object per run)
``metadata``  step results as metadata, and back
``launch``    how ``ingest run`` executes the jobs in its own process
``private``   the private Dagster APIs used, each with why
``maintenance``  compaction and snapshot expiry of a lake store (job, schedule)
``verify``    the chunk contract over every stored set (job, nightly schedule)
``shards``    shard runs: the pipeline over some shards, one of many writers
============  ==============================================================
"""

from __future__ import annotations

from dagster import BackfillPolicy, Definitions, MetadataValue, in_process_executor

from ingest_assets.defs import assets, maintenance
from ingest_assets.defs.exports import export_job
from ingest_assets.defs.jobs import chunks_job, documents_job
from ingest_assets.defs.metadata import plans_table
from ingest_assets.defs.resources import DuckDBStore
from ingest_assets.defs.sensors import build_sensors
from ingest_assets.defs.verify import verify_job, verify_schedule
from ingest_assets.settings import Settings

__all__ = ["build_definitions"]


def build_definitions(settings: Settings | None = None) -> Definitions:
    """Return the code location's definitions over one store, inbox and plans file.

    The plans file is validated here, so a bad plan fails the code location at load with a
    message naming the plan, the route and the field.

    Raises:
        PlanError: The plans file is missing or invalid.
    """
    settings = settings or Settings.from_env()
    store = DuckDBStore.from_settings(settings)
    lake = maintenance.lake_definitions() if settings.is_lake else {}
    described = {"plans": MetadataValue.md(plans_table(store.plans()))}  # the plan settings, in the UI
    chunk_assets = [
        asset.map_asset_specs(lambda spec: spec.replace_attributes(metadata={**spec.metadata, **described}))
        for asset in (assets.parent_chunks, assets.child_chunks, assets.graph_nodes, assets.embeddings)
    ]
    every_asset = [assets.sources, assets.documents, *chunk_assets]
    if settings.backfill_shards:  # else each asset's own policy: one run per stretch of shards
        policy = BackfillPolicy.multi_run(settings.backfill_shards)
        every_asset = [asset.with_attributes(backfill_policy=policy) for asset in every_asset]
    return Definitions(
        assets=every_asset,
        jobs=[documents_job, chunks_job, export_job, verify_job, *lake.get("jobs", [])],
        schedules=[verify_schedule, *lake.get("schedules", [])],
        sensors=build_sensors(settings),
        resources={"store": store},
        # Materializations launched from the UI run in one process too (see jobs.py).
        executor=in_process_executor,
    )
