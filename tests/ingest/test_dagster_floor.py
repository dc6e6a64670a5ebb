"""``benchmarks/bench_dagster_floor.py`` measures Dagster's cost on copies of the project's jobs:
the copies must have the real jobs' shape, or the floor it reports is another pipeline's."""

from __future__ import annotations

from pathlib import Path

from benchmarks.bench_dagster_floor import _noop_definitions
from ingest_assets.defs import build_definitions
from ingest_assets.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def _shape(definitions, job: str) -> dict[str, tuple]:
    """Per asset of ``job``: its partitions, its parents with their mappings, its checks."""
    graph = definitions.resolve_job_def(job).asset_layer.asset_graph
    shape = {}
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        if not node.is_executable:
            continue
        mappings = sorted(
            (parent.to_user_string(), type(graph.get_partition_mapping(key, parent)).__name__)
            for parent in node.parent_keys
        )
        shape[key.to_user_string()] = (
            node.partitions_def,
            tuple(mappings),
            tuple(sorted(check.name for check in node.check_keys)),
            node.pools,
        )
    return shape


def test_noop_copies_have_the_real_jobs_shape() -> None:
    real = build_definitions(Settings(plans_file=str(ROOT / "plans.yaml")))
    copies = _noop_definitions(real)
    for job in ("documents_job", "chunks_job"):
        assert _shape(copies, job) == _shape(real, job), job
    assert set(_shape(real, "chunks_job")) == {"parent_chunks", "child_chunks", "graph_nodes", "embeddings"}
