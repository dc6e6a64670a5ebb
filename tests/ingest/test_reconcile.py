"""``IngestEngine.run_pending``: the sequence of steps over the partitions with work, without Dagster."""

from __future__ import annotations

import pytest

from ingest_assets.engine import IngestEngine, RunReport
from ingest_assets.plans import load_plans
from tests.ingest.conftest import Pipeline, plan_spec


def _engine(pipeline: Pipeline) -> IngestEngine:
    return IngestEngine(pipeline.store, pipeline.inbox, load_plans(str(pipeline.plans_file)))


def _nothing(report: RunReport) -> bool:
    """Whether a run found no work and ran no step."""
    return report.pending.empty and not report.documents and not report.chunks


def test_reconcile_ingests_then_does_nothing_then_one_edit(pipeline: Pipeline) -> None:
    first = _engine(pipeline).run_pending()
    files = sum(1 for f in pipeline.inbox.rglob("*") if f.is_file())
    assert first.documents["documents"].total.parsed == files
    assert sum(r.total.created for r in first.chunks["parent_chunks"].values()) == files
    before = pipeline.snapshot()
    noop = _engine(pipeline).run_pending()
    assert _nothing(noop) and noop.chunker_calls == 0
    assert pipeline.snapshot() == before
    edited = pipeline.inbox / "getting-started.md"
    edited.write_text(edited.read_text() + "\n\nOne more paragraph.\n")
    one = _engine(pipeline).run_pending()
    assert one.documents["documents"].total.parsed == 1 and one.chunker_calls == 2
    pipeline.write_plans(default=plan_spec(child=150, chat_child=150))
    changed = _engine(pipeline).run_pending()
    assert sum(r.total.created for r in changed.chunks["parent_chunks"].values()) == 0
    assert sum(r.total.created for r in changed.chunks["child_chunks"].values()) == files


def test_reconcile_deletes_and_restores_a_file_without_parsing_it_again(pipeline: Pipeline) -> None:
    """A scan's rows with nothing to parse (a deleted file; a file back with bytes parsed before)
    are written too, so the run after each is a no-op."""
    _engine(pipeline).run_pending()
    target = pipeline.inbox / "getting-started.md"
    uri, content = target.as_uri(), target.read_bytes()

    def current() -> list[tuple[object, ...]]:
        return pipeline.rows("SELECT version_id FROM current_documents WHERE source_uri = ?", uri)

    version = current()
    assert len(version) == 1
    target.unlink()
    report = _engine(pipeline).run_pending()
    gone, parsed = report.documents["sources"].total, report.documents["documents"].total
    assert gone.deleted == 1 and parsed.parsed == 0 and current() == []
    assert _nothing(_engine(pipeline).run_pending())
    target.write_bytes(content)
    back = _engine(pipeline).run_pending().documents["documents"].total
    assert back.parsed == 0 and current() == version
    assert _nothing(_engine(pipeline).run_pending())


def test_a_chunk_step_of_a_plan_not_in_the_plans_file_fails_before_touching_the_store(
    pipeline: Pipeline,
) -> None:
    """A run of a retired (or foreign) plan key says so and registers nothing: the live plans
    stay those of the last run, with all their chunks."""
    _engine(pipeline).run_pending()
    before = pipeline.snapshot()
    live = pipeline.store.live_plans()
    pipeline.write_plans(default=plan_spec(child=150))  # a new key; the old one leaves the file
    with pytest.raises(KeyError, match="is not in the plans file"):
        _engine(pipeline).run("parent_chunks", ["00"], live[0])
    assert pipeline.store.live_plans() == live and pipeline.snapshot() == before
