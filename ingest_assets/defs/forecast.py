"""A new plan key's forecast in the UI: when ``ingest_sensor`` first sees a plan key, it reports
``ingest plans --diff``'s figures for it as an observation of ``parent_chunks`` on each of the
key's ``plan|shard`` partitions (runless events the sensor hands to Dagster; the asset's Events
tab and each partition's page show them), so what the plan will cost is there before it runs.
"""

from dagster import AssetKey, AssetObservation, MetadataValue, MultiPartitionKey

from ingest_assets.defs.partitions import PLAN_DIMENSION, SHARD_DIMENSION
from ingest_assets.engine import SHARDS
from ingest_assets.engine.forecast import ROLES, Forecast, KindForecast, PlanForecast, forecast, rates_text
from ingest_assets.plans import Plan
from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore

__all__ = ["forecast_metadata", "forecast_observations"]


def forecast_metadata(work: KindForecast, plan: PlanForecast, whole: Forecast) -> dict:
    """The figures of one partition's (or plan's) forecast as metadata entries."""
    metadata: dict = {"forecast_documents": work.documents}
    for role in ROLES:
        for action, name in (("create", "created"), ("reuse", "reused")):
            metadata[f"forecast_{role}_sets_{name}"] = len(work.sets[role][action])
    # Plain text (new / reused per role), which the event list shows in full; a Markdown
    # table showed blank there.
    metadata["forecast_plan"] = MetadataValue.text(
        "; ".join(
            f"{kind} {k.documents} docs: "
            + ", ".join(
                f"{r} {len(k.sets[r]['create'])} new / {len(k.sets[r]['reuse'])} reused" for r in ROLES
            )
            for kind, k in sorted(plan.kinds.items())
        )
    )
    metadata["forecast_plan_seconds"] = -1.0 if plan.seconds is None else round(plan.seconds, 3)
    metadata["forecast_basis"] = rates_text(whole.rates) or "no step timings stored yet"
    return metadata


def forecast_observations(
    database: str, inbox: str, plans: list[Plan], added: list[str], settings: Settings, lock_timeout: float
) -> list[AssetObservation]:
    """One observation per (new plan key, shard) with that partition's forecast."""
    store = IngestStore(database, lock_timeout=lock_timeout, settings=settings)
    whole = forecast(store, inbox, plans, settings)
    events = []
    for plan in whole.plans:
        if plan.key not in added:
            continue
        for shard in SHARDS:
            work = plan.shards.get(shard, KindForecast())
            events.append(
                AssetObservation(
                    asset_key=AssetKey("parent_chunks"),
                    partition=MultiPartitionKey({PLAN_DIMENSION: plan.key, SHARD_DIMENSION: shard}),
                    metadata=forecast_metadata(work, plan, whole),
                    description=f"ingest plans --diff for new plan key {plan.key}",
                )
            )
    return events
