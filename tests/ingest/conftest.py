"""Fixtures for the pipeline tests: a copy of data/sample as inbox, a DuckDB file in tmp_path,
fast plans (the "character" tokenizer: these tests are about reuse, not token counts) and a
real (ephemeral) Dagster instance per test.

Two drivers of the same steps: ``Pipeline.run()`` is ``ingest run`` (real Dagster runs, for the
tests about what Dagster does: runs launched, materializations, metadata, checks, run ids);
``Pipeline.run_engine()`` is the engine's own driver (``IngestEngine.run_pending``, the same
``run(step, ...)`` each asset calls, over the same pending partitions) and returns the same
summary (read from what the store recorded, as ``ingest run``'s is), for the tests about what
the steps reuse and write."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from dagster import DagsterInstance

from ingest_assets.cli import run_pipeline
from ingest_assets.engine import SHARDS, IngestEngine
from ingest_assets.engine.keys import stretches
from ingest_assets.engine.summary import RunSummary
from ingest_assets.plans import Plan, _plans_at, load_plans
from ingest_assets.store import IngestStore
from tests.lake.postgres import Backend

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


def plan_spec(
    parent: int = 600, child: int = 200, chat_parent: int = 600, chat_child: int = 200
) -> dict[str, Any]:
    """One plan's routes with the character tokenizer."""
    tok = {"tokenizer": "character"}
    return {
        "routes": {
            "chat": {
                "parent": {"strategy": "turn-window", "chunk_size": chat_parent, **tok},
                "child": {"strategy": "recursive", "chunk_size": chat_child, **tok},
            },
            "*": {
                "parent": {"strategy": "section", "chunk_size": parent, **tok},
                "child": {"strategy": "section", "chunk_size": child, **tok},
            },
        }
    }


class Pipeline:
    """Runs ``run_pipeline`` (the code path of ``ingest run``) against one tmp inbox, store and plans file."""

    def __init__(self, root: Path, store: str | Path | None = None) -> None:
        self.inbox = root / "inbox"
        shutil.copytree(SAMPLE, self.inbox)
        # A DuckDB file, or a lake location (ducklake:...) from the ``backend`` fixture.
        self.db = root / "ingest.duckdb" if store is None else store
        self.plans_file = root / "plans.yaml"
        self.instance = DagsterInstance.ephemeral()
        # Per store: the (plan key or None, shard) partitions the engine driver's runs covered.
        self._covered: dict[str, set[tuple[str | None, str]]] = {}
        self.write_plans(default=plan_spec())

    def write_plans(self, **plans: dict[str, Any]) -> None:
        self.plans_file.write_text(yaml.safe_dump({"plans": plans}))
        _plans_at.cache_clear()

    def run(self) -> dict[str, Any]:
        """``ingest run`` through Dagster; its summary as ``ingest run --json`` prints it."""
        return run_pipeline(
            inbox=str(self.inbox),
            database=str(self.db),
            plans_file=str(self.plans_file),
            instance=self.instance,
        ).to_json()

    def run_engine(self) -> dict[str, Any]:
        """The run ``run()`` makes, through the engine's driver instead of Dagster: the summary
        ``ingest run`` prints (``runs``: the runs it would launch)."""
        store = self.store
        store.check()
        plans = self.plans()
        report = IngestEngine(store, self.inbox, plans).run_pending()
        todo = report.pending
        # ``ingest run`` launches one run per stretch of consecutive shards with work, counting
        # as work the partitions no earlier run covered (here: no earlier run of this driver).
        made = self._covered.setdefault(str(self.db), set())
        runs = 0
        for key, shards in [(None, todo.documents), *todo.chunks.items()]:
            if shards:
                covered = {*shards, *(s for s in SHARDS if (key, s) not in made)}
                runs += len(stretches(covered))
                made |= {(key, s) for s in covered}
        keys = [plan.key for plan in plans]
        summary = RunSummary.of_runs(store, [store.run_id], todo, keys, runs=runs, database=str(self.db))
        return summary.to_json()

    def plans(self) -> list[Plan]:
        return load_plans(self.plans_file)

    def engine(self) -> IngestEngine:
        """The engine over this inbox, store and plans (no Dagster)."""
        return IngestEngine(self.store, self.inbox, self.plans())

    @property
    def store(self) -> IngestStore:
        return IngestStore(self.db)

    def rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        return self.store.query(sql, params)

    def snapshot(self) -> dict[str, Any]:
        """Counts and newest write time of every table: equal snapshots mean nothing was written."""
        store = self.store
        stamps = {
            table: store.query(f"SELECT count(*), max({column}) FROM {table}")[0]
            for table, column in (
                ("source_rows", "updated_at"), ("documents", "parsed_at"), ("plans", "registered_at"),
                ("chunk_sets", "created_at"), ("chunks", "created_at"), ("member_rows", "updated_at"),
                ("graph_sets", "created_at"), ("failure_log", '"at"'), ("plan_states", '"at"'),
                ("promotions", '"at"'),
            )
        }  # fmt: skip
        stamps["graph_node_rows"] = store.query("SELECT count(*) FROM graph_node_rows")[0]
        return stamps


def without_bookkeeping(tables: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Export rows (``read_tables``) without what an incremental export's digests leave out: a
    chunk's ``version_id`` and a chunk node's ``created_at`` (a kept chunk keeps those it was
    first exported with downstream; ``ingest_assets.exports.views``)."""
    out = dict(tables)
    out["chunks"] = [{k: v for k, v in r.items() if k != "version_id"} for r in tables["chunks"]]
    out["nodes"] = [
        {**r, "properties": {k: v for k, v in r["properties"].items() if k != "created_at"}}
        for r in tables["nodes"]
    ]
    return out


@pytest.fixture
def pipeline(tmp_path: Path, backend: Backend) -> Pipeline:
    """The pipeline over ``backend``'s store (the DuckDB file unless the test asks for both)."""
    if not SAMPLE.is_dir():
        pytest.skip("data/sample is missing")
    return Pipeline(tmp_path, backend.location if backend.is_lake else None)
