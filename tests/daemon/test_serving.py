"""DESIGN scenario 12 through a real ``dagster dev``: what a reader of the views sees while the
daemon works, on both store backends.

A reader polls the views every half second while ``ingest_sensor`` (on, 5 s) picks up an edit
and then a plan change: it must never see a document without its chunks, with half of them,
with two versions, or without its vectors, and never a plan serving fewer documents than before.
With the sensor off, a plan change is built by one backfill from the UI (GraphQL, as the UI
sends it) after a Reload, embeddings included, and the views switch when it is complete.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from ingest_assets.defs.jobs import CHUNK_ASSETS
from ingest_assets.engine import SHARDS
from ingest_assets.plans import load_plans
from ingest_assets.store import IngestStore, StoreError
from tests.daemon.conftest import Workspace, make_workspace
from tests.daemon.harness import DagsterDev
from tests.lake.postgres import BACKENDS, Cluster

pytestmark = pytest.mark.slow
INTERVAL = 5  # seconds between sensor ticks, as the reader test asks
EDITED = "troubleshooting.md"


@dataclass(eq=False)
class Reader(threading.Thread):
    """Polls the views every ``every`` seconds and keeps what it saw wrong, and for how long
    each document was not served whole (its longest gap)."""

    location: str
    every: float = 0.5
    samples: int = 0
    problems: list[str] = field(default_factory=list)
    served: dict[str, int] = field(default_factory=dict)  # plan name -> fewest documents seen
    gaps: dict[str, float] = field(default_factory=dict)  # document -> longest time not whole

    def __post_init__(self) -> None:
        super().__init__(daemon=True)
        self._done = threading.Event()
        self._missing_since: dict[str, float] = {}

    def run(self) -> None:
        store = IngestStore(self.location, lock_timeout=120)
        while not self._done.is_set():
            try:
                self._sample(store)
            except StoreError as error:  # the file stayed locked: note it, keep polling
                self.problems.append(f"read failed: {error}")
            self._done.wait(self.every)

    def stop(self) -> Reader:
        self._done.set()
        self.join(timeout=180)
        return self

    def _sample(self, store: IngestStore) -> None:
        # One snapshot for every read, and no write lock, as a reader of the views reads.
        with store.snapshot() as con:

            def query(sql: str) -> list[tuple[Any, ...]]:
                return con.execute(sql).fetchall()

            sources = {uri.rsplit("/", 1)[-1] for (uri,) in query(
                "SELECT uri FROM sources WHERE NOT deleted AND version_id IS NOT NULL")}  # fmt: skip
            docs = query(
                "SELECT p.name, s.uri, count(DISTINCT c.version_id), count(*) FILTER (WHERE c.level = 1), "
                "count(*) FILTER (WHERE c.level = 0) FROM current_chunks c "
                "JOIN plan_status p USING (plan_key) JOIN sources s USING (document_id) GROUP BY ALL"
            )
            vectors = {
                (name, uri): n
                for name, uri, n in query(
                    "SELECT p.name, v.source_uri, count(*) FROM chunk_vectors v "
                    "JOIN plan_status p USING (plan_key) GROUP BY ALL"
                )
            }
            nodes = dict(query(
                "SELECT p.name, count(*) FROM graph_nodes g JOIN plan_status p USING (plan_key) "
                "WHERE g.label = 'Document' GROUP BY ALL"))  # fmt: skip
        now = time.monotonic()
        self.samples += 1
        whole: dict[str, set[str]] = {}
        for name, uri, versions, parents, children in docs:
            file = uri.rsplit("/", 1)[-1]
            if versions == 1 and parents and children and vectors.get((name, uri), 0) == children:
                whole.setdefault(name, set()).add(file)
            else:
                found = vectors.get((name, uri), 0)
                self.problems.append(
                    f"{name} {file}: {versions} versions, {parents} parents, "
                    f"{children} children, {found} vectors"
                )
        for name, files in whole.items():
            self.served[name] = min(self.served.get(name, len(files)), len(files))
            if nodes.get(name, 0) != len(files):
                self.problems.append(
                    f"{name}: {nodes.get(name, 0)} document nodes for {len(files)} documents"
                )
            for file in sources:
                if file in files:
                    if file in self._missing_since:
                        gap = now - self._missing_since.pop(file)
                        self.gaps[file] = max(self.gaps.get(file, 0.0), gap)
                else:
                    self._missing_since.setdefault(file, now)
        if not whole and sources:
            self.problems.append("no plan serves anything")


def _set_child_size(ws: Workspace, size: int) -> str:
    plans = yaml.safe_load(ws.plans_file.read_text())
    for route in plans["plans"]["default"]["routes"].values():
        route["child"]["chunk_size"] = size
    ws.plans_file.write_text(yaml.safe_dump(plans))
    (plan,) = load_plans(ws.plans_file)
    return plan.key


def _states(location: str) -> dict[str, str]:
    return {key: s.state for key, s in IngestStore(location, lock_timeout=60).plan_states().items()}


def _wait_for(what: str, probe: Any, timeout: float, dev: DagsterDev) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(1.0)
    raise dev.fail(f"timed out waiting for {what}")


@pytest.fixture(params=BACKENDS)
def served_ws(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Workspace, str, dict[str, str]]]:
    """A workspace, its store location and the extra environment of its backend."""
    ws = make_workspace(tmp_path / "ws")
    if request.param == "file":
        yield ws, str(ws.database), {}
        return
    cluster: Cluster = request.getfixturevalue("postgres_cluster")
    location, data = cluster.new_lake(tmp_path / "lake_data")
    yield ws, location, {"INGEST_STORE": location, "INGEST_LAKE_DATA": str(data)}


# Its own waits bound it (the edit 180 s, the plan switch 600 s, going idle 300 s); the suite's
# 600 s per test, shorter than those together, once stopped it on a loaded CI machine mid-switch.
@pytest.mark.long
@pytest.mark.timeout(1500)
def test_a_reader_never_sees_a_partial_document_or_a_smaller_corpus(
    served_ws: tuple[Workspace, str, dict[str, str]],
) -> None:
    ws, location, env = served_ws
    env = {**env, "INGEST_SENSOR_SECONDS": str(INTERVAL), "INGEST_WORKERS": "1"}
    with ws.dagster_dev(env=env) as dev:
        summary = dev.ingest_run()
        assert summary["documents"]["failed"] == 0
        documents = summary["documents"]["parsed"]
        dev.start_sensor("ingest_sensor")
        reader = Reader(location)
        reader.start()
        try:
            edited = ws.inbox / EDITED
            edited.write_text(edited.read_text() + "\n\nA line appended while a reader polls the views.\n")
            before = IngestStore(location).query("SELECT version_id FROM current_documents WHERE path LIKE ?",
                                                  [f"%{EDITED}"])  # fmt: skip

            def edit_served() -> bool:
                rows = IngestStore(location).query(
                    "SELECT DISTINCT c.version_id FROM current_chunks c JOIN sources s USING (document_id) "
                    "WHERE s.uri LIKE ?",
                    [f"%{EDITED}"],
                )
                return bool(rows) and rows != before and rows[0][0] != before[0][0]

            started = time.monotonic()
            _wait_for("the edit to be served", edit_served, 180, dev)
            edit_seconds = time.monotonic() - started
            old_key = next(iter(_states(location)))
            new_key = _set_child_size(ws, 200)
            started = time.monotonic()
            _wait_for("the new key to go live",
                      lambda: _states(location).get(new_key) == "live", 600, dev)  # fmt: skip
            switch_seconds = time.monotonic() - started
            assert _states(location)[old_key] == "retired"
            dev.wait_until_idle(quiet=2 * INTERVAL + 1, timeout=300)
            # The plan change went through one backfill the sensor launched.
            assert list(dev.backfills().values()) == ["COMPLETED_SUCCESS"]
            ticks = dev.sensor_ticks("ingest_sensor")
        finally:
            reader.stop()
    # The sensor ticked every INTERVAL seconds, not every other daemon loop.
    gaps = sorted(b - a for a, b in itertools.pairwise(ticks))
    assert len(gaps) >= 10 and gaps[len(gaps) // 2] < 1.5 * INTERVAL, gaps
    print(f"\nreader: {reader.samples} samples, longest gaps {reader.gaps or 'none'}; "
          f"edit served after {edit_seconds:.1f} s, plan switch after {switch_seconds:.1f} s")  # fmt: skip
    assert reader.samples > 20 and reader.problems == []
    assert reader.served == {"default": documents} and reader.gaps == {}


@pytest.mark.long
def test_with_the_sensor_off_a_reload_lists_the_new_key_and_one_backfill_builds_it(
    workspace: Workspace,
) -> None:
    """The README's *Change a plan, backfill* as a user does it from the UI."""
    with workspace.dagster_dev(env={"INGEST_SENSOR_SECONDS": str(INTERVAL), "INGEST_WORKERS": "1"}) as dev:
        assert dev.sensors() == {"ingest_sensor": "STOPPED", "plans_sensor": "RUNNING"}
        dev.ingest_run()
        (old_key,) = dev.plan_keys()
        new_key = _set_child_size(workspace, 200)
        dev.reload()
        started = time.monotonic()
        _wait_for("the new key's partitions", lambda: new_key in dev.plan_keys(), 60, dev)
        listed = time.monotonic() - started
        assert _states(str(workspace.database)) == {old_key: "live"}  # nothing built yet
        backfill = dev.backfill(CHUNK_ASSETS, [f"{new_key}|{shard}" for shard in SHARDS])
        dev.wait_until_idle(quiet=3, timeout=400)
        assert dev.backfills()[backfill] == "COMPLETED_SUCCESS"
        store = IngestStore(workspace.database)
        assert _states(str(workspace.database)) == {old_key: "retired", new_key: "live"}
        served = store.query("SELECT DISTINCT plan_key FROM chunk_vectors")
        assert served == [(new_key,)]
        children = store.query("SELECT count(*) FROM current_chunks WHERE level = 0")[0][0]
        assert store.query("SELECT count(*) FROM chunk_vectors")[0][0] == children > 0
        runs = {r.run_id for r in dev.runs() if r.tags.get("dagster/backfill") == backfill}
        # One run over the key's shards (the chunk assets backfill a range in a single run).
        assert [r.covers for r in dev.runs() if r.run_id in runs] == [
            (f"{new_key}|{SHARDS[0]}", f"{new_key}|{SHARDS[-1]}")
        ]
        checks = [c for c in dev.check_executions("embeddings", limit=40) if c.run_id in runs]
        assert checks and all(c.passed for c in checks if c.name == "coverage")
        # Each partition's metadata says the key's state when it was made: building, with how
        # many documents were ready, until the partition that completed it, which says live.
        states = [
            (dev.latest_materialization("embeddings", f"{new_key}|{shard}") or {}).get("plan_state")
            for shard in SHARDS
        ]
        made = [state for state in states if state is not None]
        assert "live" in made and all(s == "live" or s.startswith("building: ") for s in made)
    print(f"\nthe new key's partitions were listed {listed:.1f} s after the reload")
