"""chunk_changes: each run records exactly the chunk ids that entered and left each plan's
current view (through the engine's driver, ``Pipeline.run_engine``); under Dagster's run ids,
with the steps' metadata counting them, and ``ingest changes`` listing a run (real Dagster runs
through ``run_pipeline``)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from dagster import AssetKey

from ingest_assets.cli import main
from ingest_assets.exports import export_plan, read_tables
from tests.ingest.conftest import Pipeline, plan_spec
from tests.lake.postgres import on_both_backends


def _view(p: Pipeline) -> set[tuple[str, str]]:
    return {(plan, str(i)) for plan, i in p.rows("SELECT plan_key, id FROM current_chunks")}


def _changes(p: Pipeline, after: Any = None) -> list[tuple[str, str, str, str]]:
    rows = p.rows(
        'SELECT run_id, plan_key, chunk_id::VARCHAR, "change" FROM chunk_changes '
        'WHERE ? IS NULL OR "at" > ? ORDER BY "at"',
        after,
        after,
    )
    return [tuple(r) for r in rows]


def _last_at(p: Pipeline) -> Any:
    return p.rows('SELECT max("at") FROM chunk_changes')[0][0]


def _net(changes: list[tuple[str, str, str, str]]) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    added = {(plan, chunk) for _, plan, chunk, change in changes if change == "added"}
    removed = {(plan, chunk) for _, plan, chunk, change in changes if change == "removed"}
    return added, removed


def test_fresh_ingest_records_every_current_chunk_as_added_under_dagster_run_ids(pipeline: Pipeline) -> None:
    pipeline.run()
    changes = _changes(pipeline)
    added, removed = _net(changes)
    assert removed == set()
    assert added == _view(pipeline) and len(changes) == len(added)
    runs = {run_id for run_id, *_ in changes}
    dagster_runs = {r.run_id for r in pipeline.instance.get_runs()}
    assert runs <= dagster_runs and runs


@on_both_backends()
def test_noop_records_nothing_and_an_edit_lists_exactly_that_documents_chunks(pipeline: Pipeline) -> None:
    pipeline.run_engine()
    mark = _last_at(pipeline)
    pipeline.run_engine()
    assert _changes(pipeline, mark) == []
    before = _view(pipeline)
    target = pipeline.inbox / "getting-started.md"
    (doc_id,) = pipeline.rows("SELECT document_id FROM current_documents WHERE path = ?", str(target))[0]
    old_ids = {
        (p, str(i))
        for p, i in pipeline.rows("SELECT plan_key, id FROM current_chunks WHERE document_id = ?", doc_id)
    }
    target.write_text(target.read_text() + "\n\nOne more paragraph about getting started.\n")
    pipeline.run_engine()
    after = _view(pipeline)
    new_ids = {
        (p, str(i))
        for p, i in pipeline.rows("SELECT plan_key, id FROM current_chunks WHERE document_id = ?", doc_id)
    }
    added, removed = _net(_changes(pipeline, mark))
    # Chunk ids leave out the version (issue 31): the edit moves only the ids whose span or text
    # it changed, those the two versions do not share; the document's other chunks stay.
    assert added == after - before == new_ids - old_ids
    assert removed == before - after == old_ids - new_ids
    assert added and removed and old_ids & new_ids
    assert {
        d for (d,) in pipeline.rows('SELECT DISTINCT document_id FROM chunk_changes WHERE "at" > ?', mark)
    } == {doc_id}


# What a chunk row shows a reader, but the version (as an export's row digest).
_ROW = (
    'id::VARCHAR, "index", text, chunker_hash, parent_id::VARCHAR, heading_path::VARCHAR, metadata::VARCHAR'
)


def _rows(p: Pipeline, plan_key: str) -> dict[str, tuple[Any, ...]]:
    return {r[0]: r[1:] for r in p.rows(f"SELECT {_ROW} FROM current_chunks WHERE plan_key = ?", plan_key)}


def _replay(lines: list[dict[str, Any]], start: set[str] | None = None) -> set[str]:
    """What a reader that follows one plan by its name holds after applying ``lines`` in order."""
    held = set(start or ())
    for line in lines:
        if line["change"] == "removed":
            assert line["chunk_id"] in held, line
            held.discard(line["chunk_id"])
        elif line["change"] == "added":
            assert line["chunk_id"] not in held, line
            held.add(line["chunk_id"])
        else:
            assert line["chunk_id"] in held, line
    return held


def test_a_plan_switch_is_recorded_as_what_readers_of_the_plan_name_saw_move(
    pipeline: Pipeline, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    (old_key,) = pipeline.run_engine()["plans"]
    before = _rows(pipeline, old_key)
    first = export_plan(pipeline.store, old_key, "parquet", tmp_path / "before")
    mark = _last_at(pipeline)
    pipeline.write_plans(default=plan_spec(child=150, chat_child=150))
    (new_key,) = pipeline.run_engine()["plans"]
    after = _rows(pipeline, new_key)
    kept = before.keys() & after.keys()
    assert kept and new_key != old_key  # the parents: their settings did not change
    # One switch, recorded under the key that went live as the difference between the keys.
    switch = _changes(pipeline, mark)
    assert {plan for _, plan, _, _ in switch} == {new_key}
    by_change = {c: {i for *_, i, change in switch if change == c} for c in ("added", "removed", "changed")}
    assert by_change["added"] == after.keys() - before.keys()
    assert by_change["removed"] == before.keys() - after.keys()
    assert by_change["changed"] == {i for i in kept if before[i] != after[i]}
    # The same difference as an export of the plan since the export before the switch.
    delta = export_plan(pipeline.store, new_key, "parquet", tmp_path / "delta", since=first.folder)
    assert {r["id"] for r in read_tables(delta.folder)["chunks"]} == by_change["added"] | by_change["changed"]
    removed = [json.loads(line) for line in (delta.folder / "removed.jsonl").read_text().splitlines()]
    assert {r["key"] for r in removed if r["table"] == "chunks"} == by_change["removed"]
    # `ingest changes --plan NAME` follows the name across its keys: replayed from nothing, in
    # the order printed, it gives what the plan serves now; then a deletion leaves it.
    gone = pipeline.inbox / "troubleshooting.md"
    (doc_id,) = pipeline.rows("SELECT document_id FROM current_documents WHERE path = ?", str(gone))[0]
    served = {str(i) for (i,) in pipeline.rows("SELECT id FROM current_chunks WHERE document_id = ?", doc_id)}
    gone.unlink()
    pipeline.run_engine()
    capsys.readouterr()
    assert main(["changes", "--db", str(pipeline.db), "--plan", "default", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {line["plan"] for line in lines} == {"default"}
    assert {line["plan_key"] for line in lines} == {old_key, new_key}
    assert _replay(lines) == set(_rows(pipeline, new_key)) == set(after) - served and served
    # One key alone: its own rows (the old key's, up to the switch).
    assert main(["changes", "--db", str(pipeline.db), "--plan", old_key, "--json"]) == 0
    assert {json.loads(line)["plan_key"] for line in capsys.readouterr().out.splitlines()} == {old_key}


def test_step_metadata_counts_the_chunks_each_partition_moved(pipeline: Pipeline) -> None:
    pipeline.run()
    counts = {"added": 0, "removed": 0}
    # Chunks enter the views when their document is promoted: by the graph step, or by the
    # embeddings step for a plan that embeds.
    for asset in ("parent_chunks", "child_chunks", "graph_nodes", "embeddings"):
        for event in pipeline.instance.fetch_materializations(AssetKey(asset), limit=100).records:
            metadata = event.asset_materialization.metadata
            counts["added"] += metadata["chunks_added"].value
            counts["removed"] += metadata["chunks_removed"].value
    assert counts == {"added": len(_view(pipeline)), "removed": 0}


def test_ingest_changes_lists_a_run_and_refuses_bad_input(
    pipeline: Pipeline, capsys: pytest.CaptureFixture[str]
) -> None:
    pipeline.run_engine()
    mark = _last_at(pipeline)
    target = pipeline.inbox / "field-notes.html"
    target.write_text(target.read_text().replace("</body>", "<p>Late note.</p></body>"))
    pipeline.run()
    # The documents run moves nothing (the old version stays served); the chunks run swaps the
    # old version's chunks for the new ones in one promotion: the last parent grew (removed,
    # added) and its earlier children kept their ids under the new parent (changed).
    runs = pipeline.rows(
        'SELECT run_id, list(DISTINCT "change" ORDER BY "change") FROM chunk_changes WHERE "at" > ? '
        "GROUP BY run_id",
        mark,
    )
    assert [changes for _, changes in runs] == [["added", "changed", "removed"]]
    (edit_run,) = [run for run, _ in runs]
    capsys.readouterr()
    assert main(["changes", "--db", str(pipeline.db), "--run", edit_run, "--chunks"]) == 0
    out = capsys.readouterr().out
    ids = [
        r[0] for r in pipeline.rows("SELECT chunk_id::VARCHAR FROM chunk_changes WHERE run_id = ?", edit_run)
    ]
    assert "field-notes.html" in out and all(i in out for i in ids)
    assert re.search(r"~\d+ child", out) and re.search(r"changed +child", out), out
    assert main(["changes", "--db", str(pipeline.db), "--since", edit_run]) == 0
    assert "no chunk entered or left" in capsys.readouterr().out
    for argv, needle in (
        (["--since", "yesterday"], "--since yesterday: neither a time"),
        (["--plan", "nosuch"], "--plan nosuch: no plan"),
        # Too short to name a run: it selected nothing, silently (a new user's review).
        (["--run", "1234"], "--run 1234: a run is named by its id or 8 or more of its first characters"),
    ):
        assert main(["changes", "--db", str(pipeline.db), *argv]) == 1
        assert needle in capsys.readouterr().err
    assert main(["changes", "--db", str(pipeline.db.parent / "missing.duckdb")]) == 1
    assert "no store file there" in capsys.readouterr().err
