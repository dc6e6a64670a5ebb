"""``IngestEngine.reconcile``: every step over the partitions with work, without Dagster."""

from __future__ import annotations

from ingest_assets.engine import IngestEngine
from ingest_assets.plans import load_plans
from tests.ingest.conftest import Pipeline, plan_spec


def _engine(pipeline: Pipeline) -> IngestEngine:
    return IngestEngine(pipeline.store, pipeline.inbox, load_plans(str(pipeline.plans_file)))


def test_reconcile_ingests_then_does_nothing_then_one_edit(pipeline: Pipeline) -> None:
    first = _engine(pipeline).reconcile()
    files = sum(1 for f in pipeline.inbox.rglob("*") if f.is_file())
    assert first["parse"]["parsed"] == files
    assert sum(s["created"] for s in first["chunk_parents"].values()) == files
    before = pipeline.snapshot()
    engine = _engine(pipeline)
    noop = engine.reconcile()
    assert noop == {"pending": {"documents": [], "chunks": {}}} and engine.chunker_calls == 0
    assert pipeline.snapshot() == before
    edited = pipeline.inbox / "getting-started.md"
    edited.write_text(edited.read_text() + "\n\nOne more paragraph.\n")
    engine = _engine(pipeline)
    one = engine.reconcile()
    assert one["parse"]["parsed"] == 1 and engine.chunker_calls == 2
    pipeline.write_plans(default=plan_spec(child=150, chat_child=150))
    engine = _engine(pipeline)
    changed = engine.reconcile()
    assert sum(s["created"] for s in changed["chunk_parents"].values()) == 0
    assert sum(s["created"] for s in changed["chunk_children"].values()) == files


def test_reconcile_deletes_and_restores_a_file_without_parsing_it_again(pipeline: Pipeline) -> None:
    """A scan's rows with nothing to parse (a deleted file; a file back with bytes parsed before)
    are written too, so the run after each is a no-op."""
    _engine(pipeline).reconcile()
    target = pipeline.inbox / "getting-started.md"
    uri, content = target.as_uri(), target.read_bytes()

    def current() -> list[tuple[object, ...]]:
        return pipeline.rows("SELECT version_id FROM current_documents WHERE source_uri = ?", uri)

    version = current()
    assert len(version) == 1
    target.unlink()
    gone = _engine(pipeline).reconcile()
    assert gone["parse"]["deleted"] == 1 and gone["parse"]["parsed"] == 0 and current() == []
    assert _engine(pipeline).reconcile() == {"pending": {"documents": [], "chunks": {}}}
    target.write_bytes(content)
    back = _engine(pipeline).reconcile()
    assert back["parse"]["parsed"] == 0 and current() == version
    assert _engine(pipeline).reconcile() == {"pending": {"documents": [], "chunks": {}}}
