"""Full verification: the chunk contract over every stored set, as a job on a nightly schedule.

A run's asset checks (``contract``) verify the sets it wrote and remember them, so a no-op run
checks nothing; a row changed afterwards (by hand, by another tool, by a bad disk) would never be
looked at again. ``verify_job`` checks every set building and live plans hold, verified or not,
as ``ingest verify`` does, and fails listing the violations. The schedule is STOPPED by default,
as the sensor is: turn it on in the UI (Automation) or with ``dagster schedule start
verify_schedule``.
"""

from dagster import (
    DefaultScheduleStatus,
    Failure,
    MetadataValue,
    OpExecutionContext,
    ScheduleDefinition,
    job,
    op,
)

from ingest_assets.defs.resources import DuckDBStore
from ingest_assets.store import invariants

__all__ = ["verify_job", "verify_schedule"]


@op(description="Every chunk invariant over every stored set of building and live plans.")
def verify_store(context: OpExecutionContext, store: DuckDBStore) -> dict:
    found = invariants.full_verification(store.store())
    counts = {rule: len(violations) for rule, violations in found.items()}
    context.add_output_metadata(dict(counts))
    bad = {rule: violations for rule, violations in found.items() if violations}
    if bad:
        listed = "\n".join(f"- {rule}: {v}" for rule, violations in bad.items() for v in violations)
        raise Failure(
            description=f"{sum(counts.values())} chunk contract violation(s) in the store",
            metadata={"violations": MetadataValue.md(listed), **counts},
        )
    context.log.info(f"verified: {counts}")
    return counts


@job(description="The chunk contract over every stored set (see ingest verify).")
def verify_job() -> None:
    verify_store()


verify_schedule = ScheduleDefinition(
    name="verify_schedule",
    job=verify_job,
    cron_schedule="0 4 * * *",
    default_status=DefaultScheduleStatus.STOPPED,
)
