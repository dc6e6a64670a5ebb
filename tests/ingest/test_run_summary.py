"""The summary of ``ingest run`` is read from what the store recorded of the runs it launched
(``step_results`` per step and shard, under each Dagster run's id; ``step_timings``;
``chunk_changes``), not from Dagster metadata: it equals those records, it is the summary the
engine's own driver gives for the same work, and it is one typed, frozen value."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from ingest_assets.cli import run_pipeline
from ingest_assets.engine import IngestEngine
from ingest_assets.engine.summary import RunSummary, read_step_results
from tests.ingest.conftest import Pipeline, plan_spec

KEYS = {
    "documents",
    "sources",
    "chunk_sets",
    "graph_sets",
    "chunk_failures",
    "chunker_calls",
    "skipped",
    "failures",
    "still_failing",
    "still_failing_count",
    "failed_checks",
    "embeddings",
    "plans",
    "runs",
    "run_ids",
    "current",
    "database",
    "wall_seconds",
}


ADDED = """SELECT count(*) FROM chunk_changes WHERE "change" = 'added' AND run_id IN ({runs})"""


def _recorded(pipeline: Pipeline, run_ids: list[str], sql: str) -> int:
    marks = ", ".join("?" for _ in run_ids)
    (value,) = pipeline.rows(sql.format(runs=marks), *run_ids)[0]
    return int(value or 0)


def _count(pipeline: Pipeline, run_ids: list[str], step: str, field: str, plan_key: str | None = None) -> int:
    """A field of one step's results, summed straight from the ``step_results`` rows."""
    plan = "" if plan_key is None else f" AND plan_key = '{plan_key}'"
    sql = (
        f"SELECT sum((counts->>'{field}')::BIGINT) FROM step_results "
        f"WHERE step = '{step}' AND run_id IN ({{runs}}){plan}"
    )
    return _recorded(pipeline, run_ids, sql)


def _check_against_the_store(pipeline: Pipeline, summary: dict[str, Any], run_ids: list[str]) -> None:
    """Every figure of ``summary`` that a run did (not what idle shards reused) is a record of
    the store about ``run_ids``."""
    documents, sets = summary["documents"], summary["chunk_sets"]
    assert documents["parsed"] == _count(pipeline, run_ids, "documents", "parsed")
    assert documents["failed"] == _count(pipeline, run_ids, "documents", "failed")
    assert summary["sources"]["new"] == _count(pipeline, run_ids, "sources", "new")
    assert summary["sources"]["changed"] == _count(pipeline, run_ids, "sources", "changed")
    for step, role in (("parent_chunks", "parent"), ("child_chunks", "child")):
        assert sets[role]["created"] == _count(pipeline, run_ids, step, "created")
    assert summary["graph_sets"]["created"] == _count(pipeline, run_ids, "graph_nodes", "created")
    assert summary["chunker_calls"] == sum(
        _count(pipeline, run_ids, step, "chunker_calls") for step in ("parent_chunks", "child_chunks")
    )
    # The same runs, as step_timings and chunk_changes have them.
    timed = "SELECT sum(items) FROM step_timings WHERE step = '{step}' AND run_id IN ({{runs}})"
    parsed = _recorded(pipeline, run_ids, timed.format(step="parse"))
    assert documents["parsed"] + documents["failed"] == parsed
    assert sets["child"]["created"] + summary["chunk_failures"] >= _recorded(
        pipeline, run_ids, timed.format(step="child")
    )
    assert summary["graph_sets"]["created"] == _recorded(pipeline, run_ids, timed.format(step="graph"))


def _new_runs(pipeline: Pipeline, before: set[str]) -> list[str]:
    return sorted({run.run_id for run in pipeline.instance.get_runs()} - before)


def test_the_summary_of_dagster_runs_is_what_the_store_recorded(pipeline: Pipeline, tmp_path: Path) -> None:
    first = pipeline.run()
    run_ids = _new_runs(pipeline, set())
    assert set(first) == KEYS and len(run_ids) == first["runs"] > 0
    # The summary names its Dagster runs (it said only how many: `ingest changes --run` needs
    # an id; a new user's review).
    assert sorted(first["run_ids"]) == run_ids
    recorded = {run_id for (run_id,) in pipeline.rows("SELECT DISTINCT run_id FROM step_results")}
    assert recorded == set(run_ids)  # every step of every run, under Dagster's run id
    _check_against_the_store(pipeline, first, run_ids)
    added = _recorded(pipeline, run_ids, ADDED)
    assert added == first["current"]["chunks"] > 0  # a first run adds every current chunk

    edited = pipeline.inbox / "troubleshooting.md"
    edited.write_text(edited.read_text() + "\n\nOne more tip, for the summary test.\n")
    before = {run.run_id for run in pipeline.instance.get_runs()}
    second = pipeline.run()
    run_ids = _new_runs(pipeline, before)
    _check_against_the_store(pipeline, second, run_ids)
    assert second["documents"]["parsed"] == 1 and second["chunk_sets"]["parent"]["created"] == 1
    # Shards without work are reported as reused: the whole corpus is accounted for.
    assert (
        second["chunk_sets"]["child"]["created"] + second["chunk_sets"]["child"]["reused"]
        == (first["chunk_sets"]["child"]["created"])
    )


def test_a_summary_is_one_frozen_typed_value(pipeline: Pipeline) -> None:
    store = pipeline.store
    (key,) = [plan.key for plan in pipeline.plans()]
    report = IngestEngine(store, pipeline.inbox, pipeline.plans()).run_pending()
    recorded = read_step_results(store, [store.run_id])  # what the engine's steps recorded
    assert recorded["documents"][None].parsed == report.documents["documents"].total.parsed > 0
    assert recorded["child_chunks"][key].created == report.chunks["child_chunks"][key].total.created > 0
    summary = RunSummary.of_runs(store, [store.run_id], report.pending, [key], runs=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        summary.runs = 3  # type: ignore[misc]
    assert set(summary.to_json()) == KEYS and json.loads(json.dumps(summary.to_json())) == summary.to_json()
    assert summary.child_sets.created == report.chunks["child_chunks"][key].total.created
    assert summary.lines()[0].startswith(f"documents: {summary.documents.parsed} parsed, ")


def test_a_no_op_says_its_embedding_sets_were_reused(pipeline: Pipeline) -> None:
    # The line read "embeddings: 0 texts embedded, 0 reused" after a no-op, as if nothing
    # were embedded, where --json said every set was reused.
    pipeline.write_plans(default={**plan_spec(), "embedding": {"model": "wordllama:l2_supercat_256"}})
    first = pipeline.run()
    summary = run_pipeline(
        inbox=str(pipeline.inbox),
        database=str(pipeline.db),
        plans_file=str(pipeline.plans_file),
        instance=pipeline.instance,
    )
    assert summary.runs == 0
    sets = first["embeddings"]["sets_embedded"]
    assert sets > 0 and summary.embeddings.sets_reused == sets
    assert f"embedding sets: 0 created, {sets} reused (0 texts embedded, 0 found stored)" in summary.lines()
