"""Builds the Definitions; ``definitions.py`` and the CLI both call :func:`build_definitions`."""

from __future__ import annotations

from dagster import Definitions

from ingest_assets import assets
from ingest_assets.checks import CHECKS
from ingest_assets.jobs import chunks_job, documents_job
from ingest_assets.resources import DuckDBStore
from ingest_assets.schedules import reconcile_schedule
from ingest_assets.sensors import inbox_sensor, plan_sensor

__all__ = ["build_definitions"]


def build_definitions(
    database: str | None = None, inbox: str | None = None, plans_file: str | None = None
) -> Definitions:
    """Return the code location's definitions over one store, inbox and plans file.

    The plans file is validated here, so a bad plan fails the code location at load with a
    message naming the plan, the route and the field.

    Raises:
        PlanError: The plans file is missing or invalid.
    """
    store = DuckDBStore.from_env(database, inbox, plans_file)
    store.plans()
    return Definitions(
        assets=[
            assets.sources,
            assets.documents,
            assets.parent_chunks,
            assets.child_chunks,
            assets.graph_nodes,
        ],
        asset_checks=CHECKS,
        jobs=[documents_job, chunks_job],
        sensors=[inbox_sensor, plan_sensor],
        schedules=[reconcile_schedule],
        resources={"store": store},
    )
