"""``ingest run`` launches runs only for partitions with work: ``IngestEngine.pending`` decides,
read-only; Dagster still runs the work itself. Its summary is what the engine's own driver
reports (``Pipeline.run_engine``, which the reuse tests use), after a fresh run and a change."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from chunking import Document
from ingest_assets.defs.resources import DuckDBStore
from ingest_assets.defs.sensors import RANGE_END_TAG, RANGE_START_TAG
from ingest_assets.engine import SHARDS, IngestEngine, shard_of
from ingest_assets.plans import load_plans
from ingest_assets.settings import Settings
from tests.ingest.conftest import Pipeline, plan_spec

ROOT = Path(__file__).resolve().parents[2]
START, END = RANGE_START_TAG, RANGE_END_TAG


def _runs(pipeline: Pipeline) -> list[tuple[str, str, str]]:
    """(job, range start, range end) of every run on the pipeline's instance, oldest first."""
    runs = reversed(pipeline.instance.get_runs())
    return [(r.job_name, r.tags[START], r.tags[END]) for r in runs]


def _counts(summary: dict[str, Any]) -> tuple[Any, ...]:
    return (summary["current"], summary["plans"])


def test_the_resource_defaults_are_the_settings_defaults() -> None:
    """One place holds the defaults: a resource made from default settings is the default resource."""
    assert DuckDBStore.from_settings(Settings.model_construct()) == DuckDBStore()


def test_noop_run_launches_no_run_and_reports_everything_reused(pipeline: Pipeline) -> None:
    first = pipeline.run()
    # A new store: one documents run and one chunks run, each over every shard (a shard no file
    # landed in is materialized too, as empty).
    (key,) = first["plans"]
    low, high = SHARDS[0], SHARDS[-1]
    assert _runs(pipeline) == [("documents_job", low, high), ("chunks_job", f"{key}|{low}", f"{key}|{high}")]
    launched = 2
    assert len(pipeline.instance.get_runs()) == launched == first["runs"]
    before = pipeline.snapshot()
    summary = pipeline.run()
    assert len(pipeline.instance.get_runs()) == launched and summary["runs"] == 0
    assert pipeline.snapshot() == before
    parsed = first["documents"]["parsed"]
    assert summary["documents"] == {"parsed": 0, "unchanged": parsed, "failed": 0, "deleted": 0}
    files = first["sources"]["files"]
    assert summary["sources"] == {"files": files, "new": 0, "changed": 0, "unchanged": files, "deleted": 0}
    for role in ("parent", "child"):
        assert summary["chunk_sets"][role] == {"created": 0, "reused": first["chunk_sets"][role]["created"]}
    assert summary["graph_sets"] == {"created": 0, "reused": first["graph_sets"]["created"]}
    assert summary["chunker_calls"] == 0 and _counts(summary) == _counts(first)


def test_engine_pending_is_empty_after_a_run_and_writes_nothing(pipeline: Pipeline) -> None:
    pipeline.run_engine()
    before = pipeline.snapshot()
    engine = IngestEngine(pipeline.store, pipeline.inbox, load_plans(pipeline.plans_file))
    todo = engine.pending()
    assert todo.documents == [] and todo.chunks == {} and todo.empty
    assert pipeline.snapshot() == before


def test_an_edit_launches_runs_covering_its_shard(pipeline: Pipeline) -> None:
    first = pipeline.run_engine()
    edited = sorted(pipeline.inbox.rglob("*.md"))[0]
    edited.write_text(edited.read_text() + "\n\nOne more paragraph.\n")
    shard = shard_of(Document.node_id_for(edited.as_uri()))
    runs_before = len(pipeline.instance.get_runs())
    summary = pipeline.run()
    runs = _runs(pipeline)[runs_before:]
    assert [job for job, *_ in runs] == ["documents_job", "chunks_job"]
    (_, low, high), (_, plan_low, plan_high) = runs
    assert low <= shard <= high
    assert plan_low.split("|")[1] <= shard <= plan_high.split("|")[1]
    assert summary["documents"]["parsed"] == 1
    assert summary["documents"]["unchanged"] == first["documents"]["parsed"] - 1
    assert summary["chunk_sets"]["parent"]["created"] == 1 and summary["chunk_sets"]["child"]["created"] == 1
    total = first["chunk_sets"]["parent"]["created"]
    assert summary["chunk_sets"]["parent"]["reused"] == total - 1
    assert summary["graph_sets"] == {"created": 1, "reused": total - 1}


def test_a_plan_change_launches_the_chunk_job_of_that_plan_only(pipeline: Pipeline) -> None:
    pipeline.write_plans(small=plan_spec(child=120), large=plan_spec(child=300))
    pipeline.run_engine()
    runs_before = len(pipeline.instance.get_runs())
    pipeline.write_plans(small=plan_spec(child=120), large=plan_spec(child=250))
    summary = pipeline.run()
    runs = _runs(pipeline)[runs_before:]
    large = next(key for key in summary["plans"] if key.startswith("large-"))
    # The new key's partitions were never materialized: one run over every shard.
    assert runs == [("chunks_job", f"{large}|{SHARDS[0]}", f"{large}|{SHARDS[-1]}")]
    assert summary["chunk_sets"]["parent"]["created"] == 0


def test_retiring_a_plan_still_takes_it_out_of_the_views(pipeline: Pipeline) -> None:
    pipeline.write_plans(small=plan_spec(child=120), large=plan_spec(child=300))
    pipeline.run_engine()
    pipeline.write_plans(small=plan_spec(child=120))
    summary = pipeline.run_engine()
    assert summary["runs"] == 1
    live = {key for (key,) in pipeline.rows("SELECT DISTINCT plan_key FROM current_chunks")}
    assert live == set(summary["plans"])


def test_noop_run_imports_no_dagster(pipeline: Pipeline, tmp_path: Path) -> None:
    pipeline.run_engine()
    code = (
        "import sys; from ingest_assets.cli import main; "
        f"code = main(['run', '--inbox', {str(pipeline.inbox)!r}, '--db', {str(pipeline.db)!r}, "
        f"'--plans', {str(pipeline.plans_file)!r}, '--json']); "
        "assert code == 0; assert 'dagster' not in sys.modules, 'dagster imported'"
    )
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"runs": 0' in done.stdout


def test_ingest_run_reports_what_the_engine_driver_reports(pipeline: Pipeline, tmp_path: Path) -> None:
    """``ingest run`` (Dagster) and the engine's driver, each on its own store over one inbox,
    report the same summary after each change: the tests that check reuse through
    ``Pipeline.run_engine`` check what ``ingest run`` does."""
    through_dagster = pipeline.db
    through_engine = tmp_path / "engine.duckdb"

    def both() -> tuple[dict[str, Any], dict[str, Any]]:
        pipeline.db = through_dagster
        dagster = pipeline.run()
        pipeline.db = through_engine
        engine = pipeline.run_engine()
        for summary in (dagster, engine):
            summary.pop("wall_seconds", None)
            summary.pop("database", None)
            summary.pop("run_ids", None)  # Dagster's runs against the driver's one run id
        return dagster, engine

    dagster, engine = both()
    assert dagster == engine and dagster["runs"] > 0 and dagster["chunker_calls"] > 0
    edited = pipeline.inbox / "getting-started.md"
    edited.write_text(edited.read_text() + "\n\nOne more paragraph.\n")
    (pipeline.inbox / "troubleshooting.md").unlink()
    pipeline.write_plans(default=plan_spec(child=150, chat_child=150))
    dagster, engine = both()
    assert dagster == engine and dagster["documents"]["deleted"] == 1 and dagster["documents"]["parsed"] == 1
    dagster, engine = both()
    assert dagster == engine and dagster["runs"] == 0
