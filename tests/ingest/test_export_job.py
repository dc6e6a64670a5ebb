"""``export_job`` through real Dagster execution: the Launchpad config writes the same export
``ingest export`` does, and bad config fails the run with the message naming the fix."""

from __future__ import annotations

from pathlib import Path

from dagster import JobDefinition

from ingest_assets.defs import build_definitions
from ingest_assets.exports import read_tables
from ingest_assets.settings import Settings
from tests.ingest.conftest import Pipeline


def _job(p: Pipeline) -> JobDefinition:
    settings = Settings.from_env(database=str(p.db), inbox=str(p.inbox), plans_file=str(p.plans_file))
    return build_definitions(settings).resolve_job_def("export_job")


def _config(**fields: object) -> dict:
    return {"ops": {"export_plan_op": {"config": fields}}}


def test_export_job_writes_parquet_and_an_increment(pipeline: Pipeline, tmp_path: Path) -> None:
    (plan_key,) = pipeline.run_engine()["plans"]
    job = _job(pipeline)
    full = job.execute_in_process(
        run_config=_config(plan="default", target_folder=str(tmp_path / "full")), instance=pipeline.instance
    )
    assert full.success
    (event,) = [e for e in full.all_events if e.event_type_value == "STEP_OUTPUT"]
    metadata = event.event_specific_data.metadata
    chunks = pipeline.rows("SELECT count(*) FROM current_chunks WHERE plan_key = ?", plan_key)[0][0]
    assert metadata["chunks_written"].value == chunks and metadata["plan"].value == plan_key
    assert len(read_tables(tmp_path / "full")["chunks"]) == chunks
    export_id = metadata["export_id"].value
    again = job.execute_in_process(
        run_config=_config(
            plan=plan_key, format="jsonl", target_folder=str(tmp_path / "inc"), since=export_id
        ),
        instance=pipeline.instance,
    )
    assert again.success
    assert read_tables(tmp_path / "inc") == {"chunks": [], "nodes": [], "edges": [], "vectors": []}


def test_export_job_fails_with_the_fix_for_bad_config(pipeline: Pipeline, tmp_path: Path) -> None:
    pipeline.run_engine()
    job = _job(pipeline)
    for fields, needle in (
        ({"plan": "nosuch", "target_folder": str(tmp_path / "a")}, "plan nosuch: no plan"),
        ({"plan": "default", "format": "csv", "target_folder": str(tmp_path / "b")}, "--format csv: unknown"),
    ):
        result = job.execute_in_process(
            run_config=_config(**fields), instance=pipeline.instance, raise_on_error=False
        )
        assert not result.success
        (failure,) = [e for e in result.all_events if e.is_step_failure]
        assert needle in failure.event_specific_data.error.message
