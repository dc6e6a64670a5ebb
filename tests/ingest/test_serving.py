"""Serving by promotion, step by step through the engine (no Dagster: each step is what one
asset materializes, so stopping between two steps is a run killed there).

A reader of the views never sees an edited document without its chunks, or a plan's served
corpus shrink while a new plan key is built; a deleted file leaves at once; a plan key
switches only when it covers every document, and each plan name switches on its own."""

from __future__ import annotations

from typing import Any

import pytest

from ingest_assets.engine import CHUNK_STEPS, DOCUMENT_STEPS, SHARDS
from ingest_assets.store import invariants
from tests.ingest.conftest import Pipeline, plan_spec
from tests.lake.postgres import on_both_backends

pytestmark = on_both_backends()

MODEL = "wordllama:l2_supercat_256"
EDITED = "troubleshooting.md"


def _served(p: Pipeline) -> dict[str, Any]:
    """What readers see: per live plan name, documents with chunks, chunks, nodes and vectors."""
    rows = p.rows(
        "SELECT s.name, count(DISTINCT c.document_id), count(*) FROM current_chunks c "
        "JOIN plan_status s USING (plan_key) GROUP BY ALL"
    )
    served: dict[str, Any] = {name: {"documents": docs, "chunks": n} for name, docs, n in rows}
    for name, n in p.rows(
        "SELECT s.name, count(*) FROM graph_nodes JOIN plan_status s USING (plan_key) GROUP BY ALL"
    ):
        served.setdefault(name, {})["nodes"] = n
    for name, n in p.rows(
        "SELECT s.name, count(*) FROM chunk_vectors JOIN plan_status s USING (plan_key) GROUP BY ALL"
    ):
        served.setdefault(name, {})["vectors"] = n
    return served


def _document(p: Pipeline, uri_end: str) -> dict[str, Any]:
    """One document as the views serve it: its version and chunk ids per level, its vectors."""
    rows = p.rows(
        "SELECT c.version_id, c.level, c.id FROM current_chunks c JOIN sources s USING (document_id) "
        "WHERE s.uri LIKE ?",
        f"%{uri_end}",
    )
    vectors = p.rows("SELECT count(*) FROM chunk_vectors WHERE source_uri LIKE ?", f"%{uri_end}")[0][0]
    return {
        "versions": {str(v) for v, _, _ in rows},
        "parents": {str(i) for _, level, i in rows if level == 1},
        "children": {str(i) for _, level, i in rows if level == 0},
        "vectors": vectors,
    }


def _steps(p: Pipeline) -> list[tuple[str, str | None]]:
    """Every step of a run, in order: the document steps, then each plan's chunk steps."""
    plans = [plan.key for plan in p.plans()]
    return [(step, None) for step in DOCUMENT_STEPS] + [(s, key) for key in plans for s in CHUNK_STEPS]


@pytest.mark.parametrize("embeds", [False, True], ids=["no-embedding", "embedding"])
def test_an_edited_document_stays_whole_until_its_new_version_is_complete(
    pipeline: Pipeline, embeds: bool
) -> None:
    spec = plan_spec() | ({"embedding": {"model": MODEL, "text": "contextual"}} if embeds else {})
    pipeline.write_plans(default=spec)
    engine = pipeline.engine()
    engine.run_pending()
    old = _document(pipeline, EDITED)
    assert old["parents"] and old["children"] and len(old["versions"]) == 1
    assert (old["vectors"] == len(old["children"])) if embeds else old["vectors"] == 0
    edited = pipeline.inbox / EDITED
    edited.write_text(edited.read_text() + "\n\nOne more paragraph appended at the end.\n")

    last = "embeddings" if embeds else "graph_nodes"
    for step, plan_key in _steps(pipeline):
        engine.run(step, SHARDS, plan_key)
        now = _document(pipeline, EDITED)
        if step == last:
            assert now["versions"] != old["versions"] and len(now["versions"]) == 1
            assert now["children"] and now["children"] != old["children"]
            assert (now["vectors"] == len(now["children"])) if embeds else True
            break
        assert now == old, f"after {step} the edited document is served as it was"
    assert invariants.all_violations(pipeline.store) == []
    assert invariants.unserved(pipeline.store) == []


def test_a_deleted_file_leaves_the_views_at_once(pipeline: Pipeline) -> None:
    engine = pipeline.engine()
    engine.run_pending()
    assert _document(pipeline, EDITED)["children"]
    (pipeline.inbox / EDITED).unlink()
    engine.run("sources", SHARDS)
    assert _document(pipeline, EDITED) == {
        "versions": set(),
        "parents": set(),
        "children": set(),
        "vectors": 0,
    }


@pytest.mark.long
def test_a_plan_switch_never_shrinks_the_served_corpus(pipeline: Pipeline) -> None:
    engine = pipeline.engine()
    engine.run_pending()
    before = _served(pipeline)["default"]
    (old_key,) = [plan.key for plan in pipeline.plans()]
    pipeline.write_plans(default=plan_spec(child=150, chat_child=150))
    engine = pipeline.engine()
    (new_key,) = list(engine.plans)
    seen = []
    # Shard by shard, as the sensor's runs or a backfill's partitions do it.
    for shard in SHARDS:
        for step in CHUNK_STEPS:
            engine.run(step, [shard], new_key)
            states = {k: s.state for k, s in pipeline.store.plan_states().items()}
            served = _served(pipeline)["default"]
            seen.append(served)
            assert served["documents"] == before["documents"], f"{step} {shard}: {served} against {before}"
            if states[new_key] == "building":
                assert served == before and states[old_key] == "live"
    states = {k: s.state for k, s in pipeline.store.plan_states().items()}
    assert states == {old_key: "retired", new_key: "live"}
    after = _served(pipeline)["default"]
    assert after["documents"] == before["documents"] and after["chunks"] != before["chunks"]
    assert set(map(str, pipeline.store.live_plans())) == {new_key}
    assert invariants.all_violations(pipeline.store) == [] and invariants.unserved(pipeline.store) == []


def test_a_returning_key_switches_back_without_chunking(pipeline: Pipeline) -> None:
    pipeline.engine().run_pending()
    (old_key,) = [plan.key for plan in pipeline.plans()]
    served = _served(pipeline)
    pipeline.write_plans(default=plan_spec(child=150, chat_child=150))
    pipeline.engine().run_pending()
    pipeline.write_plans(default=plan_spec())
    report = pipeline.engine().run_pending()
    assert report.chunker_calls == 0
    assert pipeline.store.live_plans() == [old_key] and _served(pipeline) == served
    assert pipeline.engine().pending().empty


def test_each_plan_switches_on_its_own_and_an_abandoned_key_retires(pipeline: Pipeline) -> None:
    pipeline.write_plans(a=plan_spec(), b=plan_spec(child=300))
    pipeline.engine().run_pending()
    keys = {plan.name: plan.key for plan in pipeline.plans()}
    served = _served(pipeline)
    assert set(served) == {"a", "b"}
    pipeline.write_plans(a=plan_spec(child=150), b=plan_spec(child=300))
    engine = pipeline.engine()
    engine.run("parent_chunks", SHARDS, next(plan.key for plan in engine.plans.values() if plan.name == "a"))
    building = {k: s.state for k, s in pipeline.store.plan_states().items()}
    assert building[keys["a"]] == "live" and building[keys["b"]] == "live"
    assert sorted(building.values()).count("building") == 1 and _served(pipeline) == served
    # The building key is given up for another: it retires, the live one still serves.
    pipeline.write_plans(a=plan_spec(child=120), b=plan_spec(child=300))
    pipeline.engine().run(
        "parent_chunks", ["00"], next(plan.key for plan in pipeline.plans() if plan.name == "a")
    )
    states = {k: s.state for k, s in pipeline.store.plan_states().items()}
    assert sorted(states.values()) == ["building", "live", "live", "retired"]
    assert _served(pipeline) == served
    pipeline.engine().run_pending()
    states = {k: s.state for k, s in pipeline.store.plan_states().items()}
    new_a = next(plan.key for plan in pipeline.plans() if plan.name == "a")
    assert states[new_a] == "live" and states[keys["a"]] == "retired" and states[keys["b"]] == "live"
    assert _served(pipeline)["b"] == served["b"]
    assert _served(pipeline)["a"]["documents"] == served["a"]["documents"]
