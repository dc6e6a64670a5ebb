"""Lake maintenance: compaction and snapshot expiry of a DuckLake store, as a job on a schedule.

Defined only on the lake backend (``INGEST_STORE=ducklake:...``): every commit of a lake writes
Parquet files of its own and keeps a snapshot, so files and snapshots pile up until they are
merged and expired. The schedule is STOPPED by default, as the sensor is: turn it on in the UI
(Automation) or with ``dagster schedule start lake_maintenance_schedule``.
"""

from dagster import (
    Config,
    DefaultScheduleStatus,
    OpExecutionContext,
    ScheduleDefinition,
    job,
    op,
)

from ingest_assets.defs.resources import DuckDBStore

__all__ = ["lake_maintenance_job", "lake_maintenance_schedule"]


class MaintenanceConfig(Config):
    """How much history to keep: snapshots and unreferenced files younger than this stay."""

    keep_hours: float = 24.0


@op(description="Merge adjacent Parquet files, expire old snapshots, delete unreferenced files.")
def maintain_lake(context: OpExecutionContext, config: MaintenanceConfig, store: DuckDBStore) -> dict:
    counts = store.store().maintain_lake(config.keep_hours)
    context.add_output_metadata(dict(counts))
    context.log.info(f"lake maintenance: {counts}")
    return counts


@job(description="Compaction and snapshot expiry of the DuckLake store (see docs/scale-out.md).")
def lake_maintenance_job() -> None:
    maintain_lake()


# Nightly, when shard runs are least likely; merging while they write only costs a retry.
lake_maintenance_schedule = ScheduleDefinition(
    name="lake_maintenance_schedule",
    job=lake_maintenance_job,
    cron_schedule="0 3 * * *",
    default_status=DefaultScheduleStatus.STOPPED,
)


def lake_definitions() -> dict[str, list]:
    """The job and schedule, for ``build_definitions`` on the lake backend."""
    return {"jobs": [lake_maintenance_job], "schedules": [lake_maintenance_schedule]}
