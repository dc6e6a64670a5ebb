"""Older stores full of data are migrated in place, with nothing redone afterwards: schema 3 to
4 (bodies, token stats and the sources' stat columns), schema 4 to 5 (set previews), schema 5 to
6 (chunk_changes and step_timings, empty until the next write), schema 7 to 8 (graph_nodes
without its OR join, same rows), schema 8 to 9 (serving by promotion, same rows), schema 9 to 10
(insert-only pointers, same rows), schema 10 to 11 (step_results, empty until the next write)."""

from __future__ import annotations

import json
from collections.abc import Callable
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
    downgrade_to_schema_9,
    downgrade_to_schema_10,
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


def _migrated_with_the_same_rows(
    pipeline: Pipeline, downgrade: Callable[[duckdb.DuckDBPyConnection], None], views: dict[str, str]
) -> IngestStore:
    """Run the pipeline, take its store down to an older schema with ``downgrade`` (the views
    show the same rows there), migrate it back: the views show the same rows again, and the
    next run does nothing. Returns the migrated store."""
    _engine(pipeline).run_pending()
    before = {name: IngestStore(pipeline.db).query(sql) for name, sql in views.items()}
    assert all(before.values()), [name for name, rows in before.items() if not rows]
    with duckdb.connect(str(pipeline.db)) as con:
        downgrade(con)
        assert {name: con.execute(sql).fetchall() for name, sql in views.items()} == before
    migrated = IngestStore(pipeline.db)
    migrated.check()
    assert migrated.query("SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)]
    assert {name: migrated.query(sql) for name, sql in views.items()} == before
    _assert_nothing_is_redone(pipeline)
    return migrated


def test_schema_8_store_serves_the_same_rows_through_promotions(pipeline: Pipeline) -> None:
    """Schema 9 serves by promotion: a schema 8 store's live plans become live keys and what
    they served becomes their promotions, so every view shows the same rows and nothing runs."""
    views = {
        "current_chunks": "SELECT plan_key, id, text FROM current_chunks ORDER BY ALL",
        "graph_nodes": "SELECT plan_key, id, label FROM graph_nodes ORDER BY ALL",
        "graph_edges": "SELECT plan_key, source_id, target_id, type FROM graph_edges ORDER BY ALL",
    }
    migrated = _migrated_with_the_same_rows(pipeline, downgrade_to_schema_8, views)
    assert {s.state for s in migrated.plan_states().values()} == {"live"}


def test_schema_9_store_keeps_its_rows_as_the_first_of_each_key(pipeline: Pipeline) -> None:
    """Schema 10 records sources and work pointers as inserted rows: a schema 9 store's rows
    become the first row of each key, so every view shows the same rows and nothing runs."""
    views = {
        "sources": "SELECT * EXCLUDE (updated_at) FROM sources ORDER BY ALL",
        "plan_members": "SELECT * EXCLUDE (updated_at) FROM plan_members ORDER BY ALL",
        "current_documents": "SELECT * FROM current_documents ORDER BY ALL",
        "current_chunks": "SELECT plan_key, id, text FROM current_chunks ORDER BY ALL",
    }
    migrated = _migrated_with_the_same_rows(pipeline, downgrade_to_schema_9, views)
    assert migrated.query(
        "SELECT DISTINCT seq FROM source_rows UNION SELECT DISTINCT seq FROM member_rows"
    ) == [(1,)]


def test_schema_10_store_gets_an_empty_step_results_table_the_next_edit_fills(pipeline: Pipeline) -> None:
    """Schema 11 records each step's results (run summaries are read from them): a schema 10
    store gets the table empty, serves the same rows, and its next run records its steps."""
    views = {"current_chunks": "SELECT plan_key, id, text FROM current_chunks ORDER BY ALL"}
    migrated = _migrated_with_the_same_rows(pipeline, downgrade_to_schema_10, views)
    assert migrated.query("SELECT count(*) FROM step_results") == [(0,)]
    edited = pipeline.inbox / "troubleshooting.md"
    edited.write_text(edited.read_text() + "\n\nOne more line.\n")
    _engine(pipeline).run_pending()
    steps = {step for (step,) in migrated.query("SELECT DISTINCT step FROM step_results")}
    assert steps == {"sources", "documents", "parent_chunks", "child_chunks", "graph_nodes", "embeddings"}


def test_a_definition_ends_at_its_statement_not_at_a_semicolon_in_a_comment() -> None:
    """Migrations copy a table's or view's definition out of schema.sql; a ``;`` in a column's
    comment ended it there, and every migration through that table failed to parse."""
    import re

    import duckdb

    from ingest_assets.store.schema import definition, schema_sql

    schema = "CREATE TABLE t (\n    a INT,  -- one; two\n    b INT\n);  -- done\nCREATE VIEW v AS SELECT 1;\n"
    assert definition(schema, "table", "t") == "CREATE TABLE t (\n    a INT,  -- one; two\n    b INT\n);"
    assert definition(schema, "view", "v") == "CREATE VIEW v AS SELECT 1;"
    # Every definition of the real schema, copied out in order, builds the schema.
    real = schema_sql()
    con = duckdb.connect()
    for kind, name in re.findall(r"^CREATE (TABLE|VIEW) (\w+) ", real, flags=re.MULTILINE):
        con.execute(definition(real, kind, name))
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert {"step_timings", "chunk_changes", "current_chunks"} <= tables
