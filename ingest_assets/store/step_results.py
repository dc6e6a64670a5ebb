"""``step_results``: what each engine step call did, per shard, under the run's id.

One row per (step, plan key, shard) a step call ran over, with the numbers of its typed result
as JSON (``ingest_assets.engine.results.counts``). Rows are only inserted, in one short
transaction of no document per step call, so writers of different shards never conflict. Run
summaries (``ingest run``, ``ingest shards``, the engine's driver) are read from these rows
(``ingest_assets.engine.summary``), never from Dagster metadata.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ingest_assets.store.connection import retried
from ingest_assets.store.lists import json_list
from ingest_assets.store.rows import utc_now

__all__ = ["StepRecord", "record_step_results", "recorded_step_results"]


@dataclass(frozen=True)
class StepRecord:
    """One row of ``step_results``: a step's result on one shard (and plan) in one run."""

    run_id: str
    step: str
    plan_key: str | None
    shard: str
    counts: dict[str, Any]


@retried
def record_step_results(
    store: Any, step: str, plan_key: str | None, counts_by_shard: Mapping[str, dict[str, Any]]
) -> None:
    """Record under ``store.run_id`` what ``step`` did on each shard (nothing for no shard)."""
    if not counts_by_shard:
        return
    shards = sorted(counts_by_shard)
    counted = [json.dumps(counts_by_shard[shard], sort_keys=True) for shard in shards]
    with store.transaction(()) as con:  # rows of no document, in one statement
        con.execute(
            "INSERT INTO step_results SELECT ?, ?, ?, shard, counts::JSON, ? FROM "
            "(SELECT unnest(?::JSON::VARCHAR[]) AS shard, unnest(?::JSON::VARCHAR[]) AS counts)",
            [store.run_id, step, plan_key, utc_now(), json_list(shards), json_list(counted)],
        )


def recorded_step_results(store: Any, run_ids: Sequence[str]) -> list[StepRecord]:
    """Every row the runs ``run_ids`` recorded, in the order they were written."""
    if not run_ids:
        return []
    rows = store.query(
        "SELECT run_id, step, plan_key, shard, counts::VARCHAR FROM step_results "
        'WHERE run_id IN (SELECT unnest(?::JSON::VARCHAR[])) ORDER BY "at", step, plan_key, shard',
        [json_list(list(run_ids))],
    )
    return [StepRecord(run, step, plan, shard, json.loads(counts)) for run, step, plan, shard, counts in rows]
