"""Deltas proportional to the change (issue 31): an edit re-ids only the chunks whose span or text
it changed, so ``chunk_changes`` and an incremental export after it hold those chunks (and the
kept chunks whose row moved, as ``changed``), never the whole document. Through the engine's
driver (no Dagster)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ingest_assets.exports import apply_increment, export_plan, read_tables
from ingest_assets.store.invariants import all_violations
from tests.ingest.conftest import Pipeline, plan_spec, without_bookkeeping

# A multi-section Markdown file: 12 sections of three paragraphs, a few dozen parents and children.
HANDBOOK = "# Handbook\n\n" + "\n\n".join(
    f"## Part {i}\n\n"
    + "\n\n".join(
        f"Paragraph {i}.{j} explains one thing. " + "More words to pack. " * (j + 2) for j in range(3)
    )
    for i in range(12)
)


def _chunks(p: Pipeline, plan_key: str, document_id: Any) -> dict[str, dict[str, Any]]:
    rows = p.rows(
        'SELECT id::VARCHAR, level, provenance::VARCHAR, text, parent_id::VARCHAR, "index" '
        "FROM current_chunks WHERE plan_key = ? AND document_id = ?",
        plan_key,
        document_id,
    )
    out = {}
    for chunk_id, level, provenance, text, parent_id, index in rows:
        span = json.loads(provenance)
        out[chunk_id] = {
            "named": (level, text),
            "span": (span["start"], span["end"]),
            "parent_id": parent_id,
            "index": index,
        }
    return out


def _changes(p: Pipeline, after: Any) -> dict[str, set[str]]:
    changes: dict[str, set[str]] = {"added": set(), "removed": set(), "changed": set()}
    for chunk_id, change in p.rows(
        'SELECT chunk_id::VARCHAR, "change" FROM chunk_changes WHERE "at" > ?', after
    ):
        changes[change].add(chunk_id)
    return changes


def _last_at(p: Pipeline) -> Any:
    return p.rows('SELECT max("at") FROM chunk_changes')[0][0]


@pytest.fixture
def handbook(pipeline: Pipeline) -> tuple[Pipeline, str, Path, Any]:
    """The sample inbox plus the handbook, ingested under one plan that embeds."""
    pipeline.write_plans(default={**plan_spec(), "embedding": {"model": "wordllama:l2_supercat_256"}})
    target = pipeline.inbox / "handbook.md"
    target.write_text(HANDBOOK)
    (plan_key,) = pipeline.run_engine()["plans"]
    (document_id,) = pipeline.rows("SELECT document_id FROM current_documents WHERE path = ?", str(target))[0]
    return pipeline, plan_key, target, document_id


def _edit_and_check(
    p: Pipeline, plan_key: str, document_id: Any, edit: Any, tmp_path: Path
) -> tuple[dict[str, set[str]], dict[str, dict[str, Any]], dict[str, dict[str, Any]], dict[str, Any]]:
    """Apply ``edit``, run, and check the contract: changes and the incremental export hold
    exactly the chunks whose text changed, plus kept ids whose row moved (offsets included)."""
    before = _chunks(p, plan_key, document_id)
    first = export_plan(p.store, plan_key, "parquet", tmp_path / "before")
    mark = _last_at(p)
    edit()
    p.run_engine()
    after = _chunks(p, plan_key, document_id)
    changes = _changes(p, mark)
    # The two versions' sets share ids: still one version served, no chunk, node or vector twice.
    assert p.rows("SELECT count(*) FROM served_documents WHERE document_id = ?", document_id) == [(1,)]
    for view in ("current_chunks", "graph_nodes", "chunk_vectors"):
        assert p.rows(f"SELECT id FROM {view} GROUP BY plan_key, id HAVING count(*) > 1") == []
    assert all_violations(p.store) == []
    # Chunks whose text is unchanged keep their ids, wherever the edit moved them.
    old_named = {c["named"]: i for i, c in before.items()}
    new_named = {c["named"]: i for i, c in after.items()}
    for named in old_named.keys() & new_named.keys():
        assert old_named[named] == new_named[named]
    # chunk_changes lists exactly the chunks whose text changed ...
    assert changes["added"] == {new_named[n] for n in new_named.keys() - old_named.keys()}
    assert changes["removed"] == {old_named[n] for n in old_named.keys() - new_named.keys()}
    # ... and, as 'changed', the kept ids whose row moved (a new parent, index or offsets).
    kept = before.keys() & after.keys()
    assert changes["changed"] == {i for i in kept if before[i] != after[i]}
    # The incremental export after the edit holds only those chunks.
    delta = export_plan(p.store, plan_key, "parquet", tmp_path / "delta", since=first.folder)
    exported = {r["id"] for r in read_tables(delta.folder)["chunks"]}
    assert exported == changes["added"] | changes["changed"]
    removed = [json.loads(line) for line in (delta.folder / "removed.jsonl").read_text().splitlines()]
    assert {r["key"] for r in removed if r["table"] == "chunks"} == changes["removed"]
    # Vectors: only the added children's (a kept child keeps its vector row and digest).
    vectors = {r["id"] for r in read_tables(delta.folder)["vectors"]}
    assert vectors <= changes["added"] | changes["changed"]
    # Applied to the export before, the delta gives the full export but for what the digests
    # leave out on purpose: a kept chunk's version id and a kept node's creation time.
    full = export_plan(p.store, plan_key, "parquet", tmp_path / "after")
    applied, whole = apply_increment(read_tables(first.folder), delta.folder), read_tables(full.folder)
    assert without_bookkeeping(applied) == without_bookkeeping(whole)
    return changes, before, after, delta.manifest


def test_appending_a_paragraph_changes_only_the_chunks_it_touches(
    handbook: tuple[Pipeline, str, Path, Any], tmp_path: Path
) -> None:
    p, plan_key, target, document_id = handbook

    def append() -> None:
        target.write_text(HANDBOOK + "\n\nOne more paragraph, appended at the end.\n")

    changes, before, after, manifest = _edit_and_check(p, plan_key, document_id, append, tmp_path)
    moved = len(changes["added"]) + len(changes["removed"])
    # The last parent grows (1 removed, 1 added) and its last child grows or a child is added:
    # a handful of rows, where every one of the document's chunks used to be replaced.
    assert 2 <= moved <= 6 < len(before)
    assert len(changes["changed"]) <= 4  # earlier children of the grown parent, re-parented
    assert manifest["rows"]["chunks"] == len(changes["added"]) + len(changes["changed"])
    assert manifest["rows"]["chunks"] < len(after) // 4
    # Graph records follow: a handful of nodes (the Document node's version moved), never all.
    assert 0 < manifest["rows"]["nodes"] <= manifest["rows"]["chunks"] + 1


def test_an_edit_in_the_middle_changes_the_chunks_over_it_and_shifts_only_those_after(
    handbook: tuple[Pipeline, str, Path, Any], tmp_path: Path
) -> None:
    p, plan_key, target, document_id = handbook
    # Same length: every span stays, only the chunks over the edit change text (so their ids).
    same_length = HANDBOOK.replace("Paragraph 6.1 explains", "Paragraph 6.1 EXPLAINS")
    assert len(same_length) == len(HANDBOOK) and same_length != HANDBOOK
    changes, before, _, _ = _edit_and_check(
        p, plan_key, document_id, lambda: target.write_text(same_length), tmp_path / "a"
    )
    # The child over it and its parent, one id each, in and out; the parent's other children
    # keep their ids and move to the new parent ('changed').
    assert len(changes["added"]) == len(changes["removed"]) == 2
    siblings = {i for i, c in before.items() if c["parent_id"] in changes["removed"]} - changes["removed"]
    assert changes["changed"] == siblings
    # Longer: every chunk keeps its id but the child over the edit and its parent; those after
    # it moved (their offsets did) and are 'changed', never removed and added again.
    edit_at = same_length.index("Paragraph 6.1")
    longer = same_length.replace("Paragraph 6.1 EXPLAINS", "Paragraph 6.1 explains at length")
    changes, before, after, _ = _edit_and_check(
        p, plan_key, document_id, lambda: target.write_text(longer), tmp_path / "b"
    )
    assert len(changes["added"]) == len(changes["removed"]) == 2
    behind = {i for i, c in before.items() if c["span"][0] > edit_at} - changes["removed"]
    assert behind and behind <= changes["changed"]
    assert all(after[i]["span"] != before[i]["span"] for i in behind)
