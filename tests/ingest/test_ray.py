"""The Ray executor (INGEST_EXECUTOR=ray) on a real two-node Ray cluster on this machine: the same
views as the process pool, work on both nodes, no lost batch when a Ray worker dies, and clear
errors for a cluster that is not there."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ingest_assets.engine import ray_executor, workers
from ingest_assets.settings import Settings
from tests.ingest.test_workers import PLANS as WORKER_PLANS
from tests.ingest.test_workers import ingest_sample
from tests.ray_cluster import NODE_IP, free_ports, two_node_cluster

# The tests share one two-node cluster (module fixture): one worker runs them.
pytestmark = pytest.mark.xdist_group("ray-cluster")
# test_workers' plans (the BPE tokenizer, small chunks: many jobs), with vectors: embedding
# goes through the executor too.
PLANS = WORKER_PLANS.replace(
    "  default:\n", "  default:\n    embedding: {model: wordllama:l2_supercat_256, text: contextual}\n", 1
)
# Every column of every view but times and run ids; graph node properties without the time
# the chunk was made.
VIEWS = {
    "current_documents": "document_id, version_id, source_uri, kind, title, path, shard, content_hash, "
    "bytes, text_length",
    "served_documents": "plan_key, document_id, version_id, source_uri, kind, title, path, shard",
    "plan_status": "plan_key, name, fingerprint, settings, state",
    "current_chunks": "*",
    "graph_nodes": "plan_key, id, label, json_merge_patch(properties, '{\"created_at\": null}')::VARCHAR",
    "graph_edges": "*",
    "chunk_vectors": "*",
    "ingest_failures": "source_uri, stage, plan_key, error",
}


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[str]:
    """A Ray cluster of two nodes on this machine (see ``tests.ray_cluster``); yields its address.

    Teardown disconnects this process, then ends both nodes, even when a test failed."""
    with two_node_cluster() as address:
        try:
            yield address
        finally:
            ray_executor.shutdown()


def _ingest(root: Path, database: str) -> dict[str, list[tuple[Any, ...]]]:
    """Ingest the sample into a new store (see ``test_workers.ingest_sample``); every view's rows."""
    store = ingest_sample(root, database, PLANS)
    return {view: store.query(f"SELECT {cols} FROM {view} ORDER BY ALL") for view, cols in VIEWS.items()}


@pytest.mark.slow
def test_ray_stores_exactly_what_the_process_pool_stores(
    ray_cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The sample is small: send every step's jobs to the pool and to Ray anyway.
    monkeypatch.setattr(workers, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv("INGEST_WORKERS", "2")
    monkeypatch.delenv("INGEST_EXECUTOR", raising=False)
    monkeypatch.delenv(ray_executor.RAY_ADDRESS_ENV, raising=False)
    pooled = _ingest(tmp_path, "pool.duckdb")
    assert workers._pool is not None, "the process pool was never used"

    monkeypatch.setenv("INGEST_EXECUTOR", "ray")
    monkeypatch.setenv(ray_executor.RAY_ADDRESS_ENV, ray_cluster)
    before = ray_executor.tasks_by_node()
    on_ray = _ingest(tmp_path, "ray.duckdb")

    for view in VIEWS:
        assert on_ray[view] == pooled[view], f"{view} differs between Ray and the process pool"
    assert len(pooled["current_chunks"]) > 50 and len(pooled["chunk_vectors"]) > 20
    assert not pooled["ingest_failures"]

    import ray

    ran = {node: n - before.get(node, 0) for node, n in ray_executor.tasks_by_node().items()}
    assert ray.is_initialized() and any(ran.values()), "no job ran on Ray"
    nodes = {node["NodeID"] for node in ray.nodes() if node["Alive"]}
    assert len(nodes) == 2
    assert {node for node, n in ran.items() if n > 0} == nodes, f"jobs per node: {ran}"


@pytest.mark.slow
def test_without_an_address_ray_init_joins_the_cluster_ray_address_names(
    ray_cluster: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INGEST_EXECUTOR", "ray")
    monkeypatch.delenv(ray_executor.RAY_ADDRESS_ENV, raising=False)
    monkeypatch.setenv("RAY_ADDRESS", ray_cluster)  # Ray's own variable, which ray.init() reads
    before = sum(ray_executor.tasks_by_node().values())
    jobs = list(range(-8, 0))
    assert list(
        workers.run_batches(abs, [("a", jobs)], total_bytes=1 << 40, settings=Settings.from_env())
    ) == [("a", [-j for j in jobs])]
    assert sum(ray_executor.tasks_by_node().values()) == before + len(jobs)


@pytest.mark.slow
def test_a_dead_ray_worker_costs_no_batch(ray_cluster: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INGEST_EXECUTOR", "ray")
    monkeypatch.setenv(ray_executor.RAY_ADDRESS_ENV, ray_cluster)
    driver = os.getpid()

    def die_off_the_driver(parent: int) -> int:
        # Defined here so Ray ships it by value (the workers cannot import the tests).
        if os.getpid() != parent:
            os._exit(9)
        return parent

    batches = [(n, [driver, driver]) for n in range(3)]
    results = list(
        workers.run_batches(die_off_the_driver, batches, total_bytes=1 << 40, settings=Settings.from_env())
    )
    assert results == [(n, [driver, driver]) for n in range(3)]


@pytest.mark.slow
def test_an_error_raised_in_a_job_reaches_the_caller(
    ray_cluster: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INGEST_EXECUTOR", "ray")
    monkeypatch.setenv(ray_executor.RAY_ADDRESS_ENV, ray_cluster)

    def refuse(job: int) -> int:
        raise ValueError(f"job {job} refused")

    with pytest.raises(ValueError, match="job 1 refused"):
        list(workers.run_batches(refuse, [("a", [1])], total_bytes=1 << 40, settings=Settings.from_env()))


def test_a_ray_address_where_no_cluster_answers_is_named_with_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (port,) = free_ports(1)  # closed again: nothing listens there
    monkeypatch.setenv("INGEST_EXECUTOR", "ray")
    monkeypatch.setenv(ray_executor.RAY_ADDRESS_ENV, f"{NODE_IP}:{port}")
    started = time.monotonic()
    with pytest.raises(ray_executor.RayUnavailable) as failure:
        list(workers.run_batches(abs, [("a", [-1])], total_bytes=1 << 40, settings=Settings.from_env()))
    message = str(failure.value)
    assert f"INGEST_RAY_ADDRESS='{NODE_IP}:{port}'" in message
    assert "ray start --head" in message and "INGEST_EXECUTOR=process" in message
    assert time.monotonic() - started < 30, "the check must not wait for Ray's own retries"


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({"INGEST_EXECUTOR": "spark"}, "INGEST_EXECUTOR='spark' is not an executor: use 'process'"),
        ({"INGEST_RAY_ADDRESS": "head:6379"}, "set INGEST_EXECUTOR=ray, or unset INGEST_RAY_ADDRESS"),
        ({"INGEST_EXECUTOR": "ray", "INGEST_RAY_ADDRESS": "head"}, "RAY_ADDRESS='head' is not host:port"),
        ({"INGEST_EXECUTOR": "ray", "INGEST_RAY_ADDRESS": "ray://head:10001"}, "is a Ray Client address"),
    ],
)
def test_bad_executor_settings_are_named(
    environment: dict[str, str], expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=re.escape(expected)):
        Settings.from_env()


def test_the_process_pool_stays_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("INGEST_EXECUTOR", raising=False)
    monkeypatch.delenv(ray_executor.RAY_ADDRESS_ENV, raising=False)
    monkeypatch.setenv("INGEST_WORKERS", "2")
    monkeypatch.setattr(workers, "PARALLEL_MIN_BYTES", 0)
    before = ray_executor.tasks_by_node()
    assert list(workers.run_batches(abs, [("a", [-1, -2])], total_bytes=1, settings=Settings.from_env())) == [
        ("a", [1, 2])
    ]
    assert workers._pool is not None and ray_executor.tasks_by_node() == before
