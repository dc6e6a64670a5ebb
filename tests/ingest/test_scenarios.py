"""The DESIGN.md scenarios through the engine's own driver (``Pipeline.run_engine``: the steps
the assets call, over the partitions ``ingest run`` would launch, with its summary), on both
store backends (a real DuckDB file, and a DuckLake store on a real Postgres catalog; the lake
twins are slow but the fresh ingest, the lake's smoke test). What Dagster adds (the runs
launched, their metadata and checks) is tested through real Dagster runs in test_pending.py,
test_changes.py, test_checks.py and test_embeddings.py; that ``ingest run`` reports what the
engine's driver reports, in test_pending.py."""

from __future__ import annotations

import pytest

from ingest_assets.store import invariants
from tests.ingest.conftest import Pipeline, plan_spec
from tests.lake.postgres import on_both_backends


def _assert_invariants(p: Pipeline) -> None:
    assert invariants.all_violations(p.store) == []


def _current_ids(p: Pipeline, plan_key: str, level: int) -> set[str]:
    rows = p.rows("SELECT id FROM current_chunks WHERE plan_key = ? AND level = ?", plan_key, level)
    return {str(r[0]) for r in rows}


def _chat_count(p: Pipeline) -> int:
    return p.rows("SELECT count(*) FROM current_documents WHERE kind = 'chat'")[0][0]


@on_both_backends(smoke=True)
def test_fresh_ingest_writes_every_level_and_keeps_invariants(pipeline: Pipeline) -> None:
    summary = pipeline.run_engine()
    files = len([f for f in pipeline.inbox.rglob("*") if f.is_file()])
    assert summary["documents"] == {"parsed": files, "unchanged": 0, "failed": 0, "deleted": 0}
    assert summary["chunk_sets"] == {
        "parent": {"created": files, "reused": 0},
        "child": {"created": files, "reused": 0},
    }
    (plan_key,) = summary["plans"]
    assert pipeline.rows("SELECT count(*) FROM current_documents")[0][0] == files
    docs_with_children = pipeline.rows(
        "SELECT count(DISTINCT document_id) FROM current_chunks WHERE plan_key = ? AND level = 0", plan_key
    )[0][0]
    assert docs_with_children == files
    labels = dict(pipeline.rows("SELECT label, count(*) FROM graph_nodes GROUP BY label"))
    assert labels["Document"] == files and labels["ParentChunk"] > 0 and labels["Chunk"] > 0
    edge_types = {r[0] for r in pipeline.rows("SELECT DISTINCT type FROM graph_edges")}
    assert {"HAS_CHUNK", "PARENT_OF", "NEXT"} <= edge_types
    columns = {
        r[0]
        for r in pipeline.rows("SELECT column_name FROM duckdb_columns() WHERE table_name = 'current_chunks'")
    }
    contract = {"plan_key", "id", "document_id", "version_id", "level", "index", "text", "chunker"}
    contract |= {"chunker_hash", "parent_id", "provenance", "heading_path", "content_kind", "token_count"}
    assert contract <= columns
    _assert_invariants(pipeline)


@on_both_backends()
def test_noop_rerun_makes_no_chunker_call_and_writes_nothing(pipeline: Pipeline) -> None:
    pipeline.run_engine()
    before = pipeline.snapshot()
    summary = pipeline.run_engine()
    assert summary["chunker_calls"] == 0
    assert summary["documents"]["parsed"] == 0
    assert summary["chunk_sets"]["parent"]["created"] == 0 and summary["chunk_sets"]["child"]["created"] == 0
    assert summary["graph_sets"]["created"] == 0
    assert pipeline.snapshot() == before


@on_both_backends()
def test_child_size_change_redoes_every_child_and_no_parent(pipeline: Pipeline) -> None:
    first = pipeline.run_engine()
    old_key = first["plans"][0]
    parents_before = _current_ids(pipeline, old_key, 1)
    old_child_hashes = {
        r[0] for r in pipeline.rows("SELECT DISTINCT chunker_hash FROM current_chunks WHERE level = 0")
    }
    pipeline.write_plans(default=plan_spec(child=150, chat_child=150))
    summary = pipeline.run_engine()
    (new_key,) = summary["plans"]
    assert new_key != old_key
    n = first["documents"]["parsed"]
    assert summary["chunk_sets"]["parent"] == {"created": 0, "reused": n}
    assert summary["chunk_sets"]["child"] == {"created": n, "reused": 0}
    assert _current_ids(pipeline, new_key, 1) == parents_before
    new_child_hashes = pipeline.rows(
        "SELECT DISTINCT chunker_hash FROM current_chunks WHERE plan_key = ? AND level = 0", new_key
    )
    assert {r[0] for r in new_child_hashes}.isdisjoint(old_child_hashes)
    # The old plan is retired: it leaves the views.
    assert pipeline.rows("SELECT count(*) FROM current_chunks WHERE plan_key = ?", old_key)[0][0] == 0
    _assert_invariants(pipeline)


@on_both_backends()
def test_chat_only_change_redoes_only_chat_documents(pipeline: Pipeline) -> None:
    pipeline.run_engine()
    chats = _chat_count(pipeline)
    assert chats >= 1
    sets_before = {r[0] for r in pipeline.rows("SELECT set_key FROM chunk_sets")}
    pipeline.write_plans(default=plan_spec(chat_parent=500))
    summary = pipeline.run_engine()
    assert summary["chunk_sets"]["parent"]["created"] == chats
    assert summary["chunk_sets"]["child"]["created"] == chats
    new_kinds = {
        kind
        for set_key, kind in pipeline.rows(
            "SELECT s.set_key, d.kind FROM chunk_sets s JOIN documents d USING (document_id, version_id)"
        )
        if set_key not in sets_before
    }
    assert new_kinds == {"chat"}


@on_both_backends()
def test_one_edit_redoes_one_document_and_a_deletion_leaves_the_views(pipeline: Pipeline) -> None:
    pipeline.run_engine()
    edited = pipeline.inbox / "getting-started.md"
    edited.write_text(edited.read_text() + "\n\n## One more section\n\nA paragraph added by the test.\n")
    summary = pipeline.run_engine()
    assert summary["documents"]["parsed"] == 1
    assert summary["chunk_sets"]["parent"]["created"] == 1 and summary["chunk_sets"]["child"]["created"] == 1
    assert summary["chunker_calls"] == 2

    removed = pipeline.inbox / "troubleshooting.md"
    uri = removed.resolve().as_uri()
    removed.unlink()
    summary = pipeline.run_engine()
    assert summary["documents"]["deleted"] == 1 and summary["chunker_calls"] == 0
    assert pipeline.rows("SELECT count(*) FROM current_documents WHERE source_uri = ?", uri)[0][0] == 0
    gone = pipeline.rows(
        "SELECT count(*) FROM current_chunks c JOIN documents d USING (document_id) WHERE d.source_uri = ?",
        uri,
    )[0][0]
    assert gone == 0
    _assert_invariants(pipeline)


@on_both_backends()
def test_old_settings_restored_reuse_the_old_sets(pipeline: Pipeline) -> None:
    first = pipeline.run_engine()
    pipeline.write_plans(default=plan_spec(parent=500, child=150))
    pipeline.run_engine()
    pipeline.write_plans(default=plan_spec())
    before = pipeline.store.table_counts()
    summary = pipeline.run_engine()
    assert summary["plans"] == first["plans"]
    assert summary["chunker_calls"] == 0
    assert summary["chunk_sets"]["parent"]["created"] == 0 and summary["chunk_sets"]["child"]["created"] == 0
    after = pipeline.store.table_counts()
    assert {k: after[k] for k in ("chunks", "chunk_sets", "graph_sets")} == {
        k: before[k] for k in ("chunks", "chunk_sets", "graph_sets")
    }
    _assert_invariants(pipeline)


@on_both_backends()
def test_version_bump_changes_fingerprints(pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch) -> None:
    first = pipeline.run_engine()
    # An upgrade of the section packer: chunkers read chunking.versions when they fingerprint.
    import chunking.versions

    monkeypatch.setattr(chunking.versions, "SECTION_PACKER_VERSION", "bumped")
    pipeline.write_plans(default=plan_spec())  # same settings, new library version
    summary = pipeline.run_engine()
    assert summary["plans"] != first["plans"]
    non_chat = first["documents"]["parsed"] - _chat_count(pipeline)
    assert summary["chunk_sets"]["parent"]["created"] == non_chat  # chat parents are turn windows
    _assert_invariants(pipeline)


@on_both_backends()
def test_bad_input_is_recorded_while_the_rest_completes(pipeline: Pipeline) -> None:
    good = len([f for f in pipeline.inbox.rglob("*") if f.is_file()])
    (pipeline.inbox / "empty.txt").write_bytes(b"")
    (pipeline.inbox / "corrupt.pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40)
    (pipeline.inbox / "broken-chat.json").write_text('{"title": "x", "turns": [{"speaker": ')
    (pipeline.inbox / "binary.txt").write_bytes(bytes(range(256)) * 64)
    summary = pipeline.run_engine()
    failures = {uri.rsplit("/", 1)[-1]: (stage, error) for uri, stage, error in
                pipeline.rows("SELECT source_uri, stage, error FROM ingest_failures")}  # fmt: skip
    assert {"corrupt.pdf", "broken-chat.json"} <= set(failures)
    for name, (stage, error) in failures.items():
        assert stage == "parse" and name in error
    assert summary["documents"]["failed"] == len(failures)
    current = pipeline.rows("SELECT count(*) FROM current_documents")[0][0]
    assert current == good + 4 - len(failures)
    assert summary["chunk_sets"]["child"]["created"] == current
    # The same bad bytes are not parsed again; fixing the file clears its failure.
    again = pipeline.run_engine()
    assert again["documents"]["parsed"] == 0 and again["documents"]["failed"] == 0
    (pipeline.inbox / "broken-chat.json").write_text(
        '{"title": "x", "turns": [{"speaker": "a", "text": "hi"}]}'
    )
    pipeline.run_engine()
    remaining = {uri.rsplit("/", 1)[-1] for (uri,) in pipeline.rows("SELECT source_uri FROM ingest_failures")}
    assert "broken-chat.json" not in remaining
    _assert_invariants(pipeline)


@on_both_backends()
def test_two_plans_live_side_by_side(pipeline: Pipeline) -> None:
    pipeline.write_plans(
        small=plan_spec(child=120, chat_child=120), large=plan_spec(child=300, chat_child=300)
    )
    summary = pipeline.run_engine()
    assert len(summary["plans"]) == 2
    n = summary["documents"]["parsed"]
    # Same parent chunkers: the second plan reuses the first one's parents row for row.
    assert summary["chunk_sets"]["parent"] == {"created": n, "reused": n}
    assert summary["chunk_sets"]["child"] == {"created": 2 * n, "reused": 0}
    small, large = sorted(summary["plans"], key=lambda k: not k.startswith("small"))
    assert _current_ids(pipeline, small, 1) == _current_ids(pipeline, large, 1)
    sizes = dict(
        pipeline.rows("SELECT plan_key, max(token_count) FROM current_chunks WHERE level = 0 GROUP BY 1")
    )
    assert sizes[small] <= 120 < sizes[large] <= 300
    _assert_invariants(pipeline)
