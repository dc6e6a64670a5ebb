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
