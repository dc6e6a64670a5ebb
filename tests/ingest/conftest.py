"""Fixtures for the pipeline tests: a copy of data/sample as inbox, a DuckDB file in tmp_path,
fast plans (the "character" tokenizer: these tests are about reuse, not token counts) and a
real (ephemeral) Dagster instance per test.

Two drivers of the same steps: ``Pipeline.run()`` is ``ingest run`` (real Dagster runs, for the
tests about what Dagster does: runs launched, materializations, metadata, checks, run ids);
``Pipeline.run_engine()`` is the engine's own driver (``IngestEngine.run_pending``, the same
``run(step, ...)`` each asset calls, over the same pending partitions) and returns the same
summary, for the tests about what the steps reuse and write."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from dagster import DagsterInstance

from ingest_assets.cli import run_pipeline
from ingest_assets.engine import (
    SHARDS,
    ChunkResult,
    EmbedResult,
    GraphResult,
    IngestEngine,
    ParseResult,
    RunReport,
    ScanResult,
    ShardResults,
    combined,
)
from ingest_assets.engine.keys import stretches
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
        self.write_plans(default=plan_spec())

    def write_plans(self, **plans: dict[str, Any]) -> None:
        self.plans_file.write_text(yaml.safe_dump({"plans": plans}))
        _plans_at.cache_clear()

    def run(self) -> dict[str, Any]:
        return run_pipeline(
            inbox=str(self.inbox),
            database=str(self.db),
            plans_file=str(self.plans_file),
            instance=self.instance,
        )

    def run_engine(self) -> dict[str, Any]:
        """The run ``run()`` makes, through the engine's driver instead of Dagster: the summary
        ``ingest run`` prints (``runs``: the runs it would launch)."""
        store = self.store
        store.check()
        plans = self.plans()
        report = IngestEngine(store, self.inbox, plans).run_pending()
        return engine_summary(report, [plan.key for plan in plans], store)

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


def engine_summary(report: RunReport, keys: list[str], store: IngestStore) -> dict[str, Any]:
    """``report`` as the summary of ``ingest run`` (``cli.run_pipeline``): each step's results
    added up over the shards it ran, plus what the shards without work would report (their
    files unchanged, their sets reused)."""
    todo = report.pending

    def total(results: dict[str, ShardResults], step: str, kind: type[Any]) -> Any:
        return combined([results[step].total] if step in results else [], kind())

    idle = [todo.idle[shard] for shard in SHARDS if shard not in todo.documents]
    scan, parse = (
        total(report.documents, "sources", ScanResult),
        total(report.documents, "documents", ParseResult),
    )
    step_totals = {
        step: combined([total(report.chunks.get(step, {}), key, kind) for key in keys], kind())
        for step, kind in (("parent_chunks", ChunkResult), ("child_chunks", ChunkResult),
                           ("graph_nodes", GraphResult), ("embeddings", EmbedResult))
    }  # fmt: skip
    reused = {"parent": 0, "child": 0, "graph": 0, "embedded": 0}
    for key in keys:
        for shard in set(SHARDS) - set(todo.chunks.get(key, [])):
            for role, count in todo.idle[shard].reused[key].items():
                reused[role] += count
    parents, children = step_totals["parent_chunks"], step_totals["child_chunks"]
    graphs, vectors = step_totals["graph_nodes"], step_totals["embeddings"]
    return {
        "documents": {
            "parsed": parse.parsed,
            "unchanged": parse.unchanged + sum(shard.unchanged for shard in idle),
            "failed": parse.failed,
            "deleted": scan.deleted,
        },
        "sources": {
            "files": scan.files + sum(shard.files for shard in idle),
            "new": scan.new,
            "changed": scan.changed,
            "unchanged": scan.unchanged + sum(shard.files for shard in idle),
            "deleted": scan.deleted,
        },
        "chunk_sets": {
            "parent": {"created": parents.created, "reused": parents.reused + reused["parent"]},
            "child": {"created": children.created, "reused": children.reused + reused["child"]},
        },
        "graph_sets": {"created": graphs.created, "reused": graphs.reused + reused["graph"]},
        "chunk_failures": parents.failed + children.failed,
        "chunker_calls": report.chunker_calls,
        "embeddings": {
            "sets_embedded": vectors.sets_embedded,
            "sets_reused": vectors.sets_reused + reused["embedded"],
            "texts_embedded": vectors.texts_embedded,
            "texts_reused": vectors.texts_reused,
        },
        "plans": keys,
        # ``ingest run`` launches one run per stretch of consecutive shards with work.
        "runs": len(stretches(todo.documents)) + sum(len(stretches(s)) for s in todo.chunks.values()),
        "current": {
            name: store.query(f"SELECT count(*) FROM {view}")[0][0]
            for name, view in (
                ("documents", "current_documents"),
                ("chunks", "current_chunks"),
                ("graph_nodes", "graph_nodes"),
                ("failures", "ingest_failures"),
            )
        },
    }


@pytest.fixture
def pipeline(tmp_path: Path, backend: Backend) -> Pipeline:
    """The pipeline over ``backend``'s store (the DuckDB file unless the test asks for both)."""
    if not SAMPLE.is_dir():
        pytest.skip("data/sample is missing")
    return Pipeline(tmp_path, backend.location if backend.is_lake else None)
