"""The store on its own: schema versions, atomic writes, reuse keys."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from uuid import uuid4

import duckdb
import pytest

from ingest_assets.engine import IngestEngine, child_set_key, parent_set_key, shard_of
from ingest_assets.plans import load_plans
from ingest_assets.store import (
    PREVIEW_ROWS,
    SCHEMA_VERSION,
    ChunkSetWrite,
    DocumentWrite,
    FailureWrite,
    GraphSetWrite,
    IngestStore,
    MemberWrite,
    SourceRow,
    StoreError,
    connection,
    host,
    summarize,
)
from ingest_assets.store.lists import json_list
from tests.ingest.conftest import Pipeline
from tests.lake.postgres import Backend, on_both_backends


def _chunk_sizes(store: IngestStore, set_keys: list[str]) -> list[tuple[int | None, str, int, str]]:
    """(token_count, source_uri, index, first 60 characters) of every chunk of the sets: a scan
    of the chunks themselves, to compare with what the sets' own rows sum up."""
    return store.query(
        'SELECT c.token_count, d.source_uri, c."index", left(c.text, 60) FROM chunks c '
        "JOIN documents d ON d.document_id = c.document_id AND d.version_id = c.version_id "
        'WHERE list_contains(?, c.set_key) ORDER BY d.source_uri, c."index"',
        [set_keys],
    )


def test_new_store_records_its_schema_version(tmp_path: Path) -> None:
    store = IngestStore(tmp_path / "s.duckdb")
    assert store.query("SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)]
    views = {r[0] for r in store.query("SELECT view_name FROM duckdb_views() WHERE NOT internal")}
    assert {"current_documents", "current_chunks", "graph_nodes", "graph_edges", "ingest_failures"} <= views


def test_newer_schema_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    IngestStore(path).table_counts()
    with duckdb.connect(str(path)) as con:
        con.execute("INSERT INTO schema_version VALUES (?, now())", [SCHEMA_VERSION + 1])
    with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1} is unknown"):
        IngestStore(path).table_counts()


def _opens_in_another_process(path: Path) -> bool:
    code = "import duckdb, sys; duckdb.connect(sys.argv[1]).close()"
    return subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True).returncode == 0


def test_a_file_in_use_stays_attached_until_its_last_session_ends(tmp_path: Path) -> None:
    """Sessions of two store objects on one file share the process's attachment of it: the
    inner one ending leaves the outer one working, and the file is free for another process
    only once both have ended."""
    path = tmp_path / "s.duckdb"
    first, second = IngestStore(path), IngestStore(path)
    with first.session() as outer:
        with second.session() as inner:
            inner.execute("INSERT INTO plans VALUES ('k', 'n', 'fp', '{}', now())")
        assert outer.execute("SELECT plan_key FROM plans").fetchall() == [("k",)]
        assert not _opens_in_another_process(path)
    assert _opens_in_another_process(path)
    with duckdb.connect(str(path)) as con:  # written to the file, not to the process
        assert con.execute("SELECT plan_key FROM plans").fetchall() == [("k",)]


@on_both_backends()
def test_reads_inside_a_snapshot_see_one_state_and_hold_no_lock(backend: Backend) -> None:
    """A plan registered by another thread while a snapshot is open commits without waiting
    (no lock is held), and the snapshot's later reads still see the store as it was; a read
    after the block sees it. Writing inside the block fails."""
    store = IngestStore(backend.location)
    count = "SELECT count(*) FROM plans"
    with store.snapshot():
        before = store.query(count)

        def register() -> None:
            with store.transaction() as con:
                con.execute("INSERT INTO plans VALUES ('k', 'n', 'fp', '{}', now())")

        writer = threading.Thread(target=register)
        writer.start()
        writer.join(timeout=60)
        assert not writer.is_alive()
        assert store.query(count) == before == [(0,)]
        with pytest.raises(duckdb.Error, match="transaction"), store.transaction():
            pass
    assert store.query(count) == [(1,)]


def test_a_store_spills_beside_its_file_with_the_memory_cap_and_threads_of_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a file's own DuckDB database would: temp files in ``<file>.tmp``, not in the working
    folder; the cap from INGEST_DUCKDB_MEMORY and the threads from INGEST_DUCKDB_THREADS (one
    unless set) at each open, though the process's host database is older."""
    # A host of its own: the process's host holds what earlier tests left in its buffer pool,
    # and DuckDB refuses a cap below what its pool holds.
    for name, value in (("_host", None), ("_settings", {}), ("_attached", {})):
        monkeypatch.setattr(host, name, value)
    monkeypatch.delenv("INGEST_DUCKDB_THREADS", raising=False)
    for path, cap, threads in ((tmp_path / "a.duckdb", "100MB", None), (tmp_path / "b.duckdb", "200MB", "2")):
        monkeypatch.setenv("INGEST_DUCKDB_MEMORY", cap)
        if threads:
            monkeypatch.setenv("INGEST_DUCKDB_THREADS", threads)
        with IngestStore(path).session() as con:
            query = (
                "SELECT current_setting('temp_directory'), current_setting('memory_limit'), "
                "current_setting('threads')"
            )
            directory, limit, used = con.execute(query).fetchone()
        assert directory == f"{path}.tmp"
        assert round(float(limit.split()[0])) == round(int(cap[:-2]) * 1e6 / 2**20)
        assert used == int(threads or 1)


def test_no_connection_of_a_store_draws_a_progress_bar(tmp_path: Path) -> None:
    """Commands print JSON on stdout (``ingest shards`` is read by a parent process): DuckDB's
    progress bar, drawn on stdout for a statement running longer than a moment, stays off on
    the connections a store hands out and on the host that attaches stores (a lake's ATTACH
    can wait on its catalog)."""
    setting = "SELECT current_setting('enable_progress_bar')"
    with IngestStore(tmp_path / "s.duckdb").session() as con:
        assert con.execute(setting).fetchone() == (False,)
        assert host._host is not None and host._host.execute(setting).fetchone() == (False,)


def test_a_store_opens_after_another_spilled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB cannot move a temp directory it has spilled to: later stores of the process spill
    there too instead of failing to open."""
    for name, value in (("_host", None), ("_settings", {}), ("_attached", {})):
        monkeypatch.setattr(host, name, value)  # a host of its own: the spill outlives the test
    monkeypatch.setenv("INGEST_DUCKDB_MEMORY", "40MB")
    first = tmp_path / "first.duckdb"
    with IngestStore(first).session() as con:
        sort = "SELECT count(*) FROM (SELECT md5(range::VARCHAR) s FROM range(1500000) ORDER BY s)"
        assert con.execute(sort).fetchone() == (1500000,)
    assert Path(f"{first}.tmp").is_dir()  # it spilled
    second = IngestStore(tmp_path / "second.duckdb")
    assert second.query("SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)]


def test_other_files_open_in_the_process_do_not_change_a_store_check(tmp_path: Path) -> None:
    """A new file gets the schema and a foreign one is refused, whatever else is attached."""
    foreign = tmp_path / "other.duckdb"
    with duckdb.connect(str(foreign)) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
    with IngestStore(tmp_path / "s.duckdb").session():
        fresh = IngestStore(tmp_path / "new.duckdb")
        assert fresh.query("SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)]
        with pytest.raises(StoreError, match="not written by ingest_assets"):
            IngestStore(foreign).table_counts()


def test_foreign_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
    with pytest.raises(StoreError, match="not written by ingest_assets"):
        IngestStore(path).table_counts()


def test_failed_write_leaves_nothing_behind(tmp_path: Path) -> None:
    store = IngestStore(tmp_path / "s.duckdb")
    doc, version = uuid4(), uuid4()
    bad_row = {"set_key": "k", "id": "not-a-uuid", "document_id": str(doc), "version_id": str(version)}
    chunk_set = ChunkSetWrite("k", doc, version, 1, "f" * 16, "", rows=[bad_row])
    member = MemberWrite("plan-x", doc, "parent", "k", version)
    with pytest.raises(duckdb.Error):
        store.write_chunk_sets([chunk_set], [member])
    counts = store.table_counts()
    assert counts["chunk_sets"] == 0 and counts["chunks"] == 0 and counts["member_rows"] == 0


def _chunk_set(key: str, chunks: int) -> ChunkSetWrite:
    doc, version = uuid4(), uuid4()
    rows = [
        {"set_key": key, "id": str(uuid4()), "document_id": str(doc), "version_id": str(version),
         "level": 1, "index": i, "text": f"{key} {i}", "provenance": '{"kind": "text"}',
         "heading_path": [], "content_kind": "text", "metadata": "{}", "created_at": datetime.now()}
        for i in range(chunks)
    ]  # fmt: skip
    return ChunkSetWrite(key, doc, version, 1, "f" * 16, "", rows=rows)


def test_sets_and_documents_stored_already_are_skipped_not_written_twice(tmp_path: Path) -> None:
    """A write that names a set (or document version) stored meanwhile skips it and its rows:
    in a batch of a handful (one VALUES list) and in a larger one (one Arrow table)."""
    store = IngestStore(tmp_path / "s.duckdb")
    sets = [_chunk_set(f"set-{i}", chunks=i + 1) for i in range(8)]
    assert store.write_chunk_sets(sets[:1], []) == 1
    assert store.write_chunk_sets(sets[:3], []) == 2 + 3  # set-0 was stored: its row is not
    assert store.write_chunk_sets(sets, []) == sum(range(4, 9))
    assert store.write_chunk_sets(sets, []) == 0
    counts = store.table_counts()
    assert counts["chunk_sets"] == 8 and counts["chunks"] == sum(range(1, 9))

    graphs = [
        GraphSetWrite(f"graph-{i}", s.document_id, s.version_id, s.set_key, s.set_key,
                      nodes=[{"id": f"n{i}", "label": "Chunk", "properties": "{}"}],
                      edges=[{"source_id": f"n{i}", "target_id": "d", "type": "NEXT", "properties": "{}"}])
        for i, s in enumerate(sets)
    ]  # fmt: skip
    assert store.write_graph_sets(graphs[:2], []) == 4
    assert store.write_graph_sets(graphs, []) == 12
    assert store.write_graph_sets(graphs, []) == 0
    counts = store.table_counts()
    assert (counts["graph_sets"], counts["graph_node_rows"], counts["graph_edge_rows"]) == (8, 8, 8)

    documents = [
        DocumentWrite(f"file:///d{i}", "k", s.document_id, s.version_id, "text", "t", 1, '{"x": 1}')
        for i, s in enumerate(sets)
    ]
    for batch in (documents[:2], documents):
        store.write_parsed(batch, [])
    parts = store.query("SELECT count(*), count(DISTINCT (document_id, version_id)) FROM document_body_parts")
    assert store.table_counts()["documents"] == 8 and parts == [(8, 8)]


def test_a_set_looked_up_as_missing_and_stored_meanwhile_is_not_written_twice(tmp_path: Path) -> None:
    """A step looks its keys up, then writes what was missing; a set written in between (here by
    another store object of the process, inside the session) is not written twice."""
    store, other = IngestStore(tmp_path / "s.duckdb"), IngestStore(tmp_path / "s.duckdb")
    first, second = _chunk_set("first", 2), _chunk_set("second", 3)
    with store.session():
        assert store.set_summaries(["first", "second"]) == {}
        assert other.write_chunk_sets([second], []) == 3
        assert store.write_chunk_sets([first, second], []) == 2
        assert store.existing_sets(["g"], table="graph_sets") == set()
        graph = GraphSetWrite("g", first.document_id, first.version_id, "first", "first")
        assert other.write_graph_sets([graph], []) == 0
        store.write_graph_sets([graph], [])
    counts = store.table_counts()
    assert (counts["chunk_sets"], counts["chunks"], counts["graph_sets"]) == (2, 5, 1)


def test_a_parse_points_current_documents_at_the_new_versions(tmp_path: Path) -> None:
    """After a parse that changes, fails and adds documents, ``current_documents`` (in the
    session that wrote and in a fresh store, for every shard and for one) shows exactly that."""
    path = tmp_path / "s.duckdb"
    store = IngestStore(path)
    uris = [f"file:///f{i}.md" for i in range(6)]
    ids = {uri: uuid4() for uri in uris}
    shard = {uri: f"{i % 2:02d}" for i, uri in enumerate(uris)}

    def source(uri: str, digest: str) -> SourceRow:
        return SourceRow(uri, uri[7:], ids[uri], shard[uri], digest, 1, 1)

    def parsed(uri: str, text_length: int) -> DocumentWrite:
        return DocumentWrite(uri, f"{uri}:k", ids[uri], uuid4(), "markdown", "t", text_length, "{}")

    store.write_sources([source(uri, "h1") for uri in uris[:5]])
    store.write_parsed([parsed(uri, 10) for uri in uris[:5]], [])
    with store.session():
        assert len(store.current_documents()) == 5
        edited, broken, new = uris[0], uris[1], uris[5]
        store.write_sources([source(edited, "h2"), source(broken, "h2"), source(new, "h1")])
        store.write_parsed(
            [parsed(edited, 20), parsed(new, 30)],
            [FailureWrite(broken, "h2", "parse", "bad", parse_key=f"{broken}:k2")],
        )
        for key in (None, ("00",)):
            assert store.current_documents(key) == IngestStore(path).current_documents(key)
        current = {row.source_uri: row for row in store.current_documents()}
        assert sorted(current) == sorted(set(uris) - {broken})
        assert (current[edited].text_length, current[new].text_length) == (20, 30)


def test_reuse_keys_separate_what_they_must() -> None:
    doc, v1, v2 = uuid4(), uuid4(), uuid4()
    assert parent_set_key(doc, v1, "a" * 16) == parent_set_key(doc, v1, "a" * 16)
    assert parent_set_key(doc, v1, "a" * 16) != parent_set_key(doc, v2, "a" * 16)
    assert child_set_key(doc, v1, "c" * 16, "a" * 16) != child_set_key(doc, v1, "c" * 16, "b" * 16)
    assert shard_of(doc) == shard_of(doc) and shard_of(doc) in {f"{i:02d}" for i in range(8)}


def test_step_stats_from_set_columns_equal_stats_over_the_chunks(pipeline: Pipeline) -> None:
    """Token stats and the preview come from per-set columns; they must equal what a scan of
    every chunk of the sets gives."""
    IngestEngine(IngestStore(pipeline.db), pipeline.inbox, load_plans(str(pipeline.plans_file))).run_pending()
    store = IngestStore(pipeline.db)
    for level in (0, 1):
        keys = [k for (k,) in store.query("SELECT set_key FROM chunk_sets WHERE level = ?", [level])]
        uris = dict(
            store.query(
                "SELECT s.set_key, d.source_uri FROM chunk_sets s "
                "JOIN documents d USING (document_id, version_id) "
                "WHERE list_contains(?, s.set_key)",
                [keys],
            )
        )
        stats = summarize({key: (uris[key], summary) for key, summary in store.set_summaries(keys).items()})
        every = _chunk_sizes(store, keys)
        counts = [tokens for tokens, *_ in every if tokens is not None]
        assert stats.chunks == len(every) and len(counts) > PREVIEW_ROWS
        assert (stats.tokens_min, stats.tokens_max) == (min(counts), max(counts))
        assert stats.tokens_mean == round(sum(counts) / len(counts), 1)
        assert [(p.tokens, p.source_uri, p.index, p.text) for p in stats.preview] == every[:PREVIEW_ROWS]


def _step_sets(store: IngestStore, plan_key: str, role: str, shards: list[str]) -> list[str]:
    return [
        key
        for (key,) in store.query(
            "SELECT m.set_key FROM plan_members m JOIN current_documents d USING (document_id, version_id) "
            "WHERE m.plan_key = ? AND m.role = ? AND list_contains(?, d.shard)",
            [plan_key, role, shards],
        )
    ]


def test_step_token_stats_equal_the_stored_sets_stats(pipeline: Pipeline) -> None:
    """A chunk step reports the stats of the sets it made from their rows in memory and those it
    reused from what it read: both must equal the stats of the stored sets, in a first run (all
    made) and after an edit (one made, the others of the shard reused)."""
    plans = load_plans(str(pipeline.plans_file))
    edited = pipeline.inbox / "getting-started.md"
    for run in ("first", "edit"):
        if run == "edit":
            edited.write_text(edited.read_text() + "\n\nOne more paragraph.\n")
        report = IngestEngine(IngestStore(pipeline.db), pipeline.inbox, plans).run_pending()
        store = IngestStore(pipeline.db)
        for step, role in (("parent_chunks", "parent"), ("child_chunks", "child")):
            assert report.chunks[step], run
            for plan_key, results in report.chunks[step].items():
                made = results.total.sizes
                keys = _step_sets(store, plan_key, role, report.pending.chunks[plan_key])
                every = _chunk_sizes(store, keys)  # a scan of every chunk of the sets
                counts = [tokens for tokens, *_ in every if tokens is not None]
                assert made.chunks == len(every) > 0, (run, step)
                assert (made.tokens_min, made.tokens_max) == (min(counts), max(counts))
                assert made.tokens_mean == round(sum(counts) / len(counts), 1)
                preview = every[:PREVIEW_ROWS]
                assert [(p.tokens, p.source_uri, p.index, p.text) for p in made.preview] == preview


def test_what_a_store_wrote_it_hands_on_as_the_file_holds_it(pipeline: Pipeline) -> None:
    """A store hands the next step the bodies and chunk rows it has just written without reading
    them back: what it hands must be what a fresh store reads from the file."""
    store = IngestStore(pipeline.db)
    IngestEngine(store, pipeline.inbox, load_plans(str(pipeline.plans_file))).run_pending()
    fresh = IngestStore(pipeline.db)
    keys = [key for (key,) in fresh.query("SELECT set_key FROM chunk_sets")]
    versions = fresh.query("SELECT document_id, version_id FROM documents")
    assert keys and versions
    assert store.chunk_rows_many(keys) == fresh.chunk_rows_many(keys)
    assert store.graph_rows(keys) == fresh.graph_rows(keys)
    for compressed in (False, True):
        assert store.document_bodies(versions, compressed=compressed) == fresh.document_bodies(
            versions, compressed=compressed
        )


def test_a_write_through_any_public_method_is_seen_by_the_next_read(pipeline: Pipeline) -> None:
    """Inside a session, every read after a write (through a write method, through
    ``transaction()``, or by another store object) equals what a fresh store reads."""
    IngestEngine(IngestStore(pipeline.db), pipeline.inbox, load_plans(str(pipeline.plans_file))).run_pending()
    plan_key = next(iter(load_plans(str(pipeline.plans_file)))).key
    store, other = IngestStore(pipeline.db), IngestStore(pipeline.db)

    def fresh() -> IngestStore:
        return IngestStore(pipeline.db)

    with store.session():
        members = store.members_by_role(plan_key)
        doc = next(iter(members["parent"]))
        version = store.current_documents()[0].version_id
        assert store.members(plan_key, "parent") == members["parent"]
        assert members == fresh().members_by_role(plan_key)
        # Its own write method.
        store.write_chunk_sets([], [MemberWrite(plan_key, doc, "parent", "own", version, "x")])
        assert store.members_by_role(plan_key)["parent"][doc] == ("own", "x")
        assert store.members_by_role(plan_key) == fresh().members_by_role(plan_key)
        # Another store object's write.
        other.write_chunk_sets([], [MemberWrite(plan_key, doc, "parent", "other", version)])
        assert store.members(plan_key, "parent")[doc] == ("other", "")
        # An UPDATE through the public transaction().
        with store.transaction() as con:
            con.execute(
                "UPDATE member_rows SET set_key = 'raw' WHERE document_id = ? AND role = 'parent'", [doc]
            )
        assert store.members(plan_key, "parent")[doc] == ("raw", "")
        assert store.members_by_role(plan_key) == fresh().members_by_role(plan_key)
        # Failures, plans and current documents likewise.
        failed = store.failed_keys("parent", plan_key)
        other.record_failures([FailureWrite("file:///x", "h", "parent", "boom", plan_key=plan_key)])
        assert store.failed_keys("parent", plan_key) == failed | {("file:///x", "h")}
        live = store.live_plans()
        other.sync_plans([])  # retires every plan
        assert live and store.live_plans() == [] == fresh().live_plans()
        with store.transaction() as con:
            con.execute("UPDATE source_rows SET deleted = TRUE WHERE uri = (SELECT min(uri) FROM sources)")
        assert store.current_documents() == fresh().current_documents()
        # What it hands out is the caller's: changing it changes no later answer.
        store.members_by_role(plan_key)["parent"].clear()
        assert store.members_by_role(plan_key) == fresh().members_by_role(plan_key)


def test_a_changed_pointer_is_a_newer_row_and_the_views_show_only_the_newest(tmp_path: Path) -> None:
    """Members and sources change by inserted rows (nothing is updated or deleted, so writers of
    different shards never conflict): plan_members and sources show one row per key, the
    newest; the tables keep the older rows for maintenance to compact."""
    store = IngestStore(tmp_path / "s.duckdb")
    version = uuid4()
    docs = [uuid4() for _ in range(9)]
    for set_key in ("old", "new", "newest"):
        store.write_chunk_sets(
            [], [MemberWrite("p", doc, "parent", f"{set_key}-{doc}", version) for doc in docs]
        )
    rows = store.query(
        "SELECT document_id, set_key FROM plan_members WHERE list_contains(?::JSON::UUID[], document_id)",
        [json_list(docs)],
    )
    assert sorted(rows) == sorted((doc, f"newest-{doc}") for doc in docs)
    assert store.query("SELECT seq, count(*) FROM member_rows GROUP BY seq ORDER BY seq") == [
        (1, 9),
        (2, 9),
        (3, 9),
    ]
    source = SourceRow("file:///a", "/a", uuid4(), "00", "h1", 1, 1)
    store.write_sources([source])
    store.write_sources([SourceRow(**{**source.__dict__, "content_hash": "h2", "deleted": True})])
    assert store.query("SELECT uri, content_hash, deleted FROM sources") == [("file:///a", "h2", True)]
    assert store.query("SELECT content_hash, seq FROM source_rows ORDER BY seq") == [("h1", 1), ("h2", 2)]
    with pytest.raises(ValueError, match="same key in one write"):
        store.write_sources([source, source])


KEYS = [
    "plain",
    'a "quoted" key',
    "back\\slash",
    "new\nline",
    "tab\tand\x1f unit separator",
    "été 東京 🍐",
    "",
]


def test_key_lists_bound_as_json_text_read_back_as_given() -> None:
    con = duckdb.connect()
    assert [
        r[0] for r in con.execute("SELECT unnest(?::JSON::VARCHAR[])", [json_list(KEYS)]).fetchall()
    ] == KEYS
    ids = [uuid4() for _ in range(3)]
    assert [r[0] for r in con.execute("SELECT unnest(?::JSON::UUID[])", [json_list(ids)]).fetchall()] == ids
    assert con.execute(
        "SELECT list_contains(?::JSON::VARCHAR[], ?)", [json_list(KEYS), KEYS[3]]
    ).fetchone() == (True,)
    assert con.execute(
        "SELECT count(*) FROM (SELECT unnest(?::JSON::VARCHAR[]))", [json_list([])]
    ).fetchone() == (0,)


# A list bound as a parameter: "?::VARCHAR[]", "$2::UUID[]", "list_contains(?, ...)".
_LIST_PARAMETER = re.compile(r"[?$]\d*::\w+\[\]|list_contains\(\s*[?$]\d*\s*,")


def test_the_store_binds_no_python_list_as_a_parameter() -> None:
    """DuckDB binds a list parameter element by element, looking for pandas for each one (70x
    slower than one JSON text, see ``ingest_assets/store/lists.py``): every list of keys goes in
    as ``json_list(...)`` with a ``::JSON::<type>[]`` cast."""
    root = Path(__file__).resolve().parents[2] / "ingest_assets"
    sources = sorted(root.rglob("*.py"))
    assert len(sources) > 40
    found = [
        f"{path.relative_to(root)}:{number}: {line.strip()}"
        for path in sources
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if _LIST_PARAMETER.search(line)
    ]
    assert found == []


def test_a_file_another_process_holds_is_waited_for_then_refused_naming_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """DuckDB allows one process per file: opening one another process holds is retried until
    ``lock_timeout`` (a wait past a moment says so, once: it must not look like a hang), then
    refused with a message that names the file and the setting that gives more time; an error
    that only mentions a lock or a block is not taken for one."""
    path = tmp_path / "held.duckdb"
    IngestStore(path).check()
    hold = f"import duckdb, time; c = duckdb.connect({str(path)!r}); print(1, flush=True); time.sleep(60)"
    holder = subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "1"
        started = time.monotonic()
        with pytest.raises(StoreError, match=r"another process holds it longer than 1 s"):
            IngestStore(path, lock_timeout=1).check()
        assert 1 <= time.monotonic() - started < 10
        caplog.clear()
        with pytest.raises(
            StoreError, match=r"longer than 4 s: wait for it, or raise INGEST_LOCK_TIMEOUT_SECONDS"
        ):
            IngestStore(path, lock_timeout=4).check()
        said = [r.getMessage() for r in caplog.records if "waiting up to" in r.getMessage()]
        assert said == [
            f"{path}: another process holds the store; waiting up to 4 s (INGEST_LOCK_TIMEOUT_SECONDS)"
        ]
    finally:
        holder.kill()
        holder.wait()
    IngestStore(path, lock_timeout=1).check()
    assert not connection._is_lock_error(duckdb.IOException("IO Error: block 7 of the file is unreadable"))
    assert not connection._is_lock_error(duckdb.CatalogException("Table with name locks does not exist"))
