"""The lake maintenance job, run for real on a lake a pipeline wrote: superseded rows dropped,
files merged, snapshots expired, unreferenced files deleted, and the views show exactly what
they showed before."""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import DagsterInstance, DefaultScheduleStatus

from ingest_assets.defs import build_definitions
from ingest_assets.settings import Settings
from ingest_assets.store import StoreError, invariants
from tests.ingest.conftest import Pipeline, plan_spec
from tests.lake.postgres import Backend

VIEWS = ("current_documents", "current_chunks", "graph_nodes", "graph_edges", "ingest_failures")


def _views(p: Pipeline) -> dict[str, list[tuple]]:
    return {view: sorted(map(str, p.rows(f"SELECT * FROM {view}"))) for view in VIEWS}


def _files(p: Pipeline) -> int:
    return p.rows("SELECT count(*) FROM ducklake_list_files(current_database(), 'chunks')")[0][0]


@pytest.mark.slow  # the maintenance job through Dagster on a lake with three versions of the sample
@pytest.mark.parametrize("backend", ["lake"], indirect=True)
def test_maintenance_job_compacts_and_expires_and_keeps_the_views(backend: Backend, tmp_path: Path) -> None:
    pipeline = Pipeline(tmp_path, backend.location)
    pipeline.run_engine()
    pipeline.write_plans(default=plan_spec(child=150, chat_child=150))
    pipeline.run_engine()  # every child set again: more files and snapshots
    edited = sorted(pipeline.inbox.glob("*.md"))[0]
    edited.write_text(edited.read_text() + "\n\nOne more paragraph.\n")
    pipeline.run_engine()  # the edited file's record and pointers: newer rows of their keys
    before, files_before = _views(pipeline), _files(pipeline)
    superseded = pipeline.rows(
        "SELECT (SELECT count(*) FROM member_rows) - (SELECT count(*) FROM plan_members)"
    )[0][0]
    assert superseded > 0
    settings = Settings(
        database=str(backend.location), inbox=str(pipeline.inbox), plans_file=str(pipeline.plans_file)
    )
    defs = build_definitions(settings)
    schedule = defs.resolve_schedule_def("lake_maintenance_schedule")
    assert schedule.default_status == DefaultScheduleStatus.STOPPED
    result = defs.resolve_job_def("lake_maintenance_job").execute_in_process(
        instance=DagsterInstance.ephemeral(),
        run_config={"ops": {"maintain_lake": {"config": {"keep_hours": 0.0}}}},
    )
    assert result.success
    counts = result.output_for_node("maintain_lake")
    assert counts["files_merged"] > counts["files_created"] > 0
    assert counts["snapshots_expired"] > 0 and counts["files_deleted"] > 0
    assert counts["member_rows_deleted"] == superseded
    members = "SELECT (SELECT count(*) FROM member_rows) = (SELECT count(*) FROM plan_members)"
    assert pipeline.rows(members) == [(True,)]
    assert _files(pipeline) < files_before
    assert _views(pipeline) == before
    assert invariants.all_violations(pipeline.store) == []
    # The next run over the compacted lake reuses everything.
    summary = pipeline.run()
    assert summary["chunk_sets"]["child"]["created"] == 0


def test_maintenance_is_defined_on_the_lake_only(tmp_path: Path) -> None:
    pipeline = Pipeline(tmp_path)
    on_file = Settings(database=str(pipeline.db), plans_file=str(pipeline.plans_file))
    names = {job.name for job in build_definitions(on_file).resolve_all_job_defs()}
    assert "lake_maintenance_job" not in names
    with pytest.raises(StoreError, match="is a DuckDB file"):
        from ingest_assets.store import IngestStore

        IngestStore(pipeline.db).maintain_lake()
