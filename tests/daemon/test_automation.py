"""DESIGN scenario 11 through a real ``dagster dev``: ``ingest_sensor`` on (turned on over
GraphQL), files and the plans file edited by hand, assets materialized alone from the API.

One dagster dev serves the module; the tests run in order and each leaves the store settled
(nothing pending, every current document chunked in every live plan). Each test prints how long
the automation took to settle (the figures in docs/pipeline.md).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from chunking import Document
from ingest_assets.defs.jobs import CHUNK_ASSETS, DOCUMENT_ASSETS
from ingest_assets.engine import SHARDS, IngestEngine, shard_of
from ingest_assets.engine.versions import partition_versions
from ingest_assets.plans import load_plans
from ingest_assets.store import IngestStore, invariants
from tests.daemon.conftest import Workspace, make_workspace
from tests.daemon.harness import DagsterDev, DagsterDevError

# One dagster dev for the module, whose tests run in order: one xdist worker runs them all.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("daemon-automation")]
INTERVAL = 2  # seconds between sensor ticks (INGEST_SENSOR_SECONDS)
SENSOR = "ingest_sensor"


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return make_workspace(tmp_path_factory.mktemp("automation") / "ws")


@pytest.fixture(scope="module")
def dev(ws: Workspace) -> Iterator[DagsterDev]:
    with ws.dagster_dev(env={"INGEST_SENSOR_SECONDS": str(INTERVAL), "INGEST_WORKERS": "1"}) as dev:
        yield dev


def _store(ws: Workspace) -> IngestStore:
    return IngestStore(ws.database, lock_timeout=60)


def _plan_keys(ws: Workspace) -> list[str]:
    return [plan.key for plan in load_plans(ws.plans_file)]


def settle(dev: DagsterDev, ws: Workspace, timeout: float = 300.0) -> float:
    """Wait until the automation has nothing left to do; return the seconds it took.

    Settled means: no run active and none launched for three ticks, the store's ``pending()``
    empty, and every current document covered in every live plan.
    """
    started = time.monotonic()
    while True:
        dev.wait_until_idle(quiet=3 * INTERVAL + 1, timeout=timeout)
        store = _store(ws)
        pending = IngestEngine(store, ws.inbox, load_plans(ws.plans_file)).pending()
        uncovered = invariants.coverage(store)
        if pending.empty and not uncovered:
            return time.monotonic() - started
        if time.monotonic() - started > timeout:
            raise dev.fail(f"not settled: pending {pending.documents} {pending.chunks}; {uncovered[:3]}")


def _current(ws: Workspace) -> dict[str, tuple[object, ...]]:
    rows = _store(ws).query("SELECT source_uri, version_id FROM current_documents")
    return {uri: version for uri, version in rows}


def _shard(path: Path) -> str:
    return shard_of(Document.node_id_for(path.resolve().as_uri()))


def test_catch_up_after_the_automation_was_off(dev: DagsterDev, ws: Workspace) -> None:
    """Files that arrived while nothing was on are ingested once the sensor is turned on."""
    assert dev.sensors() == {SENSOR: "STOPPED", "plans_sensor": "RUNNING"}
    assert dev.runs() == []
    assert dev.start_sensor(SENSOR) == "RUNNING"
    seconds = settle(dev, ws)
    files = [p for p in ws.inbox.rglob("*") if p.is_file()]
    assert len(_current(ws)) == len(files)
    assert dev.plan_keys() == _plan_keys(ws)
    runs = dev.runs()
    assert runs and all(r.status == "SUCCESS" for r in runs), [dev.run_errors(r.run_id) for r in runs]
    # A run per partition or per stretch of partitions with work; the new plan key's runs are
    # those of one backfill.
    assert all(r.covers for r in runs)
    assert len({r.tags["dagster/backfill"] for r in runs if "dagster/backfill" in r.tags}) == 1
    print(f"\ncatch-up from an empty store: {seconds:.1f} s, {len(runs)} runs")


def test_a_quiet_inbox_launches_no_run(dev: DagsterDev, ws: Workspace) -> None:
    before = len(dev.runs())
    time.sleep(5 * INTERVAL)
    assert len(dev.runs()) == before


def test_metadata_and_data_versions_are_true_for_their_partition(dev: DagsterDev, ws: Workspace) -> None:
    store = _store(ws)
    (plan,) = _plan_keys(ws)
    counts = dict(store.query("SELECT shard, count(*) FROM current_documents GROUP BY shard"))
    versions = partition_versions(store, "documents", SHARDS)
    for shard in SHARDS:
        documents = dev.latest_materialization("documents", shard)
        assert documents is not None, shard
        assert documents["parsed"] + documents["unchanged"] == counts.get(shard, 0), shard
        assert documents["data_version"] == versions[shard]
    children = partition_versions(store, "child_chunks", SHARDS, plan)
    for shard in SHARDS:
        child = dev.latest_materialization("child_chunks", f"{plan}|{shard}")
        assert child is not None and child["documents"] == counts.get(shard, 0), shard
        assert child["data_version"] == children[shard] and child["plan"] == plan
        if counts.get(shard):
            assert "| document |" in child["preview"] and "file://" not in child["preview"]


def test_add_edit_and_delete(dev: DagsterDev, ws: Workspace) -> None:
    before = _current(ws)
    edited = ws.inbox / "getting-started.md"
    deleted = sorted(p for p in ws.inbox.rglob("*.md") if p != edited)[0]
    added = ws.inbox / "added-note.md"
    started = time.monotonic()
    edited.write_text(edited.read_text() + "\n\nOne more paragraph about pears.\n")
    deleted.unlink()
    added.write_text("# Added\n\nA note that arrived later, about apples.\n")
    settle(dev, ws)
    seconds = time.monotonic() - started
    after = _current(ws)
    uri = edited.resolve().as_uri()
    assert after[uri] != before[uri]
    assert deleted.resolve().as_uri() not in after and added.resolve().as_uri() in after
    texts = [t for (t,) in _store(ws).query("SELECT text FROM current_chunks WHERE level = 0")]
    assert any("about pears" in t for t in texts) and any("about apples" in t for t in texts)
    print(f"\nadd + edit + delete to chunks current: {seconds:.1f} s")


def test_an_edits_chunk_run_starts_when_its_documents_run_ends(dev: DagsterDev, ws: Workspace) -> None:
    """One tick launches the edited shard's documents run and, queued behind it, its chunk run:
    the chunk run starts after the documents run ends, without waiting for another tick."""
    edited = ws.inbox / "getting-started.md"
    before = {run.run_id for run in dev.runs()}
    started = time.monotonic()
    edited.write_text(edited.read_text() + "\n\nOne more paragraph about plums.\n")
    settle(dev, ws)
    seconds = time.monotonic() - started
    runs = sorted((r for r in dev.runs() if r.run_id not in before), key=lambda r: r.creation_time)
    assert [(sorted(r.assets), r.status) for r in runs] == [
        (sorted(DOCUMENT_ASSETS), "SUCCESS"),
        (sorted(CHUNK_ASSETS), "SUCCESS"),
    ]
    docs, chunks = runs
    (plan,) = _plan_keys(ws)
    assert (docs.partition, chunks.partition) == (_shard(edited), f"{plan}|{_shard(edited)}")
    assert docs.tags["ingest/after"] == chunks.tags["ingest/after"]
    assert chunks.creation_time - docs.creation_time < INTERVAL  # the same tick
    assert docs.end_time is not None and chunks.start_time is not None
    assert chunks.start_time >= docs.end_time
    texts = [t for (t,) in _store(ws).query("SELECT text FROM current_chunks WHERE level = 0")]
    assert any("about plums" in t for t in texts)
    print(f"\nedit to chunks current, chunk run queued behind documents: {seconds:.1f} s")


def test_a_dangling_link_and_a_new_file(dev: DagsterDev, ws: Workspace) -> None:
    (ws.inbox / "dangling.md").symlink_to(ws.root / "nowhere.md")
    new = ws.inbox / "after-the-link.md"
    new.write_text("# After\n\nWritten next to a dangling link.\n")
    settle(dev, ws)
    assert new.resolve().as_uri() in _current(ws)


def _set_child_size(ws: Workspace, size: int) -> None:
    plans = yaml.safe_load(ws.plans_file.read_text())
    for route in plans["plans"]["default"]["routes"].values():
        route["child"]["chunk_size"] = size
    ws.plans_file.write_text(yaml.safe_dump(plans))


def test_plan_change_a_b_a(dev: DagsterDev, ws: Workspace) -> None:
    """Each change is chunked under the live key, parents reused: a new key, then the first
    key returning (served again from its kept sets)."""
    store = _store(ws)
    parents = store.query("SELECT count(*) FROM chunk_sets WHERE level = 1")
    documents = len(_current(ws))
    original = yaml.safe_load(ws.plans_file.read_text())
    sizes = [200, None]  # None: the original settings back
    keys = _plan_keys(ws)
    for size in sizes:
        if size is None:
            ws.plans_file.write_text(yaml.safe_dump(original))
        else:
            _set_child_size(ws, size)
        (key,) = _plan_keys(ws)
        keys.append(key)
        seconds = settle(dev, ws)
        served = _store(ws).query("SELECT DISTINCT plan_key FROM current_chunks")
        assert served == [(key,)]
        per_doc = _store(ws).query(
            "SELECT count(DISTINCT document_id) FROM current_chunks WHERE plan_key = ? AND level = 0", [key]
        )
        assert per_doc == [(documents,)]
        assert _store(ws).query("SELECT count(*) FROM chunk_sets WHERE level = 1") == parents
        print(f"\nplan -> {key}: settled in {seconds:.1f} s")
    assert keys[0] == keys[2] != keys[1]
    assert set(keys) <= set(dev.plan_keys())  # retired keys keep their partitions


def test_materialize_child_chunks_alone_then_parent_chunks_alone(dev: DagsterDev, ws: Workspace) -> None:
    (plan,) = _plan_keys(ws)
    shard = ws.busiest_shard()
    for asset in ("child_chunks", "parent_chunks"):
        run_id = dev.launch_assets([asset], f"{plan}|{shard}")
        run = dev.wait_for_run(run_id)
        assert run.status == "SUCCESS", dev.run_errors(run_id)
        assert run.assets == [asset]
        metadata = dev.latest_materialization(asset, f"{plan}|{shard}")
        assert metadata["_run_id"] == run_id and metadata["created"] == 0 and metadata["reused"] >= 1
    checks = {c.name: c for c in dev.check_executions("child_chunks") if c.run_id == run_id}
    assert checks == {}  # the parent run ran the parent's checks only
    parent_checks = {c.name for c in dev.check_executions("parent_chunks") if c.run_id == run_id}
    assert parent_checks == {"contract", "chunk_failures"}
    settle(dev, ws)


def test_a_corrupt_pdf_shows_in_a_check_and_the_run_log(dev: DagsterDev, ws: Workspace) -> None:
    bad = ws.inbox / "broken.pdf"
    bad.write_bytes(b"%PDF-1.7\nthis is not a PDF body at all\n%%EOF\n")
    settle(dev, ws)
    failures = [
        c
        for c in dev.check_executions("documents")
        if c.name == "parse_failures" and c.partition in (None, _shard(bad))
    ]
    latest = failures[0]
    assert latest.passed is False and latest.severity == "WARN"
    assert "broken.pdf" in latest.metadata["examples"]
    rows = _store(ws).query("SELECT source_uri FROM ingest_failures WHERE stage = 'parse'")
    assert rows == [(bad.resolve().as_uri(),)]
    bad.unlink()
    settle(dev, ws)


def test_an_invalid_plan_then_its_fix(dev: DagsterDev, ws: Workspace) -> None:
    """While the plans file is invalid nothing runs; once fixed, what arrived meanwhile is ingested."""
    good = ws.plans_file.read_text()
    ws.plans_file.write_text(good.replace("strategy: section", "strategy: sectoin", 1))
    with pytest.raises(DagsterDevError, match="sectoin"):
        dev.reload()
    waiting = ws.inbox / "arrived-while-broken.md"
    waiting.write_text("# Waiting\n\nThis file came in while the plans file was broken.\n")
    before = len(dev.runs())
    time.sleep(4 * INTERVAL)
    assert len(dev.runs()) == before  # the location does not load: no tick, no run
    ws.plans_file.write_text(good)
    dev.reload()
    settle(dev, ws)
    assert waiting.resolve().as_uri() in _current(ws)
    failed = [r for r in dev.runs() if r.status != "SUCCESS"]
    assert failed == [], json.dumps([dev.run_errors(r.run_id) for r in failed])
