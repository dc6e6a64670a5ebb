"""Older stores full of data are migrated in place, with nothing redone afterwards: schema 3 to
4 (bodies, token stats and the sources' stat columns), schema 4 to 5 (set previews), schema 5 to
6 (chunk_changes and step_timings, empty until the next write), schema 7 to 8 (graph_nodes
without its OR join, same rows), schema 8 to 9 (serving by promotion, same rows)."""

from __future__ import annotations

import json
from typing import Any

import duckdb

from ingest_assets.engine import IngestEngine
from ingest_assets.plans import load_plans
from ingest_assets.store import SCHEMA_VERSION, IngestStore
from ingest_assets.store.writes import BODY_PART_BYTES
from tests.ingest.conftest import Pipeline
from tests.old_schemas import (
    downgrade_to_schema_3,
    downgrade_to_schema_4,
    downgrade_to_schema_6,
    downgrade_to_schema_7,
    downgrade_to_schema_8,
)


def _engine(pipeline: Pipeline) -> IngestEngine:
    return IngestEngine(IngestStore(pipeline.db), pipeline.inbox, load_plans(str(pipeline.plans_file)))


def _token_stats(store: IngestStore) -> dict[str, tuple[Any, ...]]:
    """Every set's summary columns, the preview parsed (JSON text of any spelling)."""
    return {
        key: (*numbers, json.loads(preview))
        for key, *numbers, preview in store.query(
            "SELECT set_key, chunk_count, token_total, tokens_counted, tokens_min, tokens_max, preview "
            "FROM chunk_sets"
        )
    }


def _assert_nothing_is_redone(pipeline: Pipeline) -> None:
    engine = _engine(pipeline)
    before = pipeline.snapshot()
    report = engine.run_pending()
    assert report.pending.empty and not report.documents and not report.chunks
    assert report.chunker_calls == 0 and pipeline.snapshot() == before


def test_schema_3_store_is_migrated_and_nothing_is_redone(pipeline: Pipeline) -> None:
    _engine(pipeline).run_pending()
    store = IngestStore(pipeline.db)
    keys = store.query("SELECT document_id, version_id FROM documents")
    bodies = store.document_bodies(keys, compressed=True)
    stats = _token_stats(store)
    assert len(bodies) == len(keys) and all(low is not None for _, _, _, low, _, _ in stats.values())
    with duckdb.connect(str(pipeline.db)) as con:
        downgrade_to_schema_3(con)

    migrated = IngestStore(pipeline.db)
    migrated.check()
    assert migrated.query("SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)]
    assert migrated.document_bodies(keys, compressed=True) == bodies
    assert migrated.query("SELECT max(octet_length(bytes)) FROM document_body_parts")[0][0] <= BODY_PART_BYTES
    assert _token_stats(migrated) == stats
    # Sources lost their stat, so each file is read once more; it is unchanged, so nothing runs.
    _assert_nothing_is_redone(pipeline)


def test_schema_4_store_gets_the_previews_new_sets_are_written_with(pipeline: Pipeline) -> None:
    _engine(pipeline).run_pending()
    stats = _token_stats(IngestStore(pipeline.db))
    assert all(preview for count, *_, preview in stats.values() if count)
    with duckdb.connect(str(pipeline.db)) as con:
        downgrade_to_schema_4(con)

    migrated = IngestStore(pipeline.db)
    migrated.check()
    assert migrated.query("SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)]
    assert _token_stats(migrated) == stats
    _assert_nothing_is_redone(pipeline)


def test_schema_6_store_gets_empty_change_and_timing_tables_the_next_edit_fills(pipeline: Pipeline) -> None:
    _engine(pipeline).run_pending()
    with duckdb.connect(str(pipeline.db)) as con:
        downgrade_to_schema_6(con)
    migrated = IngestStore(pipeline.db)
    migrated.check()
    assert migrated.query("SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)]
    assert migrated.query("SELECT count(*) FROM chunk_changes") == [(0,)]
    _assert_nothing_is_redone(pipeline)
    edited = pipeline.inbox / "troubleshooting.md"
    edited.write_text(edited.read_text() + "\n\nOne more tip.\n")
    _engine(pipeline).run_pending()
    moved = dict(migrated.query('SELECT "change", count(*) FROM chunk_changes GROUP BY ALL'))
    assert moved["added"] > 0 and moved["removed"] > 0
    assert {step for (step,) in migrated.query("SELECT DISTINCT step FROM step_timings")} == {
        "parse", "parent", "child", "graph",
    }  # fmt: skip


def test_schema_7_store_gets_the_graph_nodes_view_with_the_same_rows(pipeline: Pipeline) -> None:
    _engine(pipeline).run_pending()
    query = "SELECT plan_key, id, label, properties::VARCHAR FROM graph_nodes ORDER BY ALL"
    nodes = IngestStore(pipeline.db).query(query)
    assert nodes and any('"text"' in properties for *_, properties in nodes)
    with duckdb.connect(str(pipeline.db)) as con:
        downgrade_to_schema_7(con)
        assert (
            "set_key IN"
            in con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'graph_nodes'").fetchone()[0]
        )
        assert con.execute(query).fetchall() == nodes
    migrated = IngestStore(pipeline.db)
    migrated.check()
    assert migrated.query("SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)]
    view = migrated.query("SELECT sql FROM duckdb_views() WHERE view_name = 'graph_nodes'")[0][0]
    assert "graph_chunks" in view and "set_key IN" not in view
    assert migrated.query(query) == nodes
    _assert_nothing_is_redone(pipeline)


def test_schema_8_store_serves_the_same_rows_through_promotions(pipeline: Pipeline) -> None:
    """Schema 9 serves by promotion: a schema 8 store's live plans become live keys and what
    they served becomes their promotions, so every view shows the same rows and nothing runs."""
    _engine(pipeline).run_pending()
    views = {
        "current_chunks": "SELECT plan_key, id, text FROM current_chunks ORDER BY ALL",
        "graph_nodes": "SELECT plan_key, id, label FROM graph_nodes ORDER BY ALL",
        "graph_edges": "SELECT plan_key, source_id, target_id, type FROM graph_edges ORDER BY ALL",
        "chunk_vectors": "SELECT plan_key, id, source_uri, text_hash FROM chunk_vectors ORDER BY ALL",
    }
    before = {name: IngestStore(pipeline.db).query(sql) for name, sql in views.items()}
    assert before["current_chunks"] and before["graph_nodes"] and before["graph_edges"]
    with duckdb.connect(str(pipeline.db)) as con:
        downgrade_to_schema_8(con)
        assert {name: con.execute(sql).fetchall() for name, sql in views.items()} == before
    migrated = IngestStore(pipeline.db)
    migrated.check()
    assert migrated.query("SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)]
    assert {name: migrated.query(sql) for name, sql in views.items()} == before
    assert {s.state for s in migrated.plan_states().values()} == {"live"}
    _assert_nothing_is_redone(pipeline)
