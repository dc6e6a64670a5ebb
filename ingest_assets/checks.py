"""Asset checks: the invariants of ``ingest_assets.store.invariants`` on what the store shows.

Checks look at every live plan's current view (not just the run's partitions): a violation
anywhere is worth seeing, and the queries take milliseconds.
"""

from collections.abc import Callable

from dagster import AssetCheckResult, AssetCheckSeverity, asset_check

from ingest_assets.assets import child_chunks, graph_nodes, parent_chunks
from ingest_assets.resources import DuckDBStore
from ingest_assets.store import IngestStore, invariants

__all__ = ["CHECKS"]


def _result(violations: list[str]) -> AssetCheckResult:
    return AssetCheckResult(
        passed=not violations,
        severity=AssetCheckSeverity.ERROR,
        metadata={"violations": len(violations), "examples": "\n".join(violations[:5]) or "none"},
    )


def _check(asset, name: str, description: str, rule: Callable[[IngestStore], list[str]]):
    @asset_check(asset=asset, name=name, description=description)
    def _run(store: DuckDBStore) -> AssetCheckResult:
        return _result(rule(store.store()))

    return _run


CHECKS = [
    _check(
        parent_chunks, "unique_ids", "No parent id twice in a plan.", lambda s: invariants.unique_ids(s, 1)
    ),
    _check(
        parent_chunks, "exact_slices", "Parent text equals its span.", lambda s: invariants.exact_slices(s, 1)
    ),
    _check(
        parent_chunks, "budgets", "Parents within their chunker size.", lambda s: invariants.budgets(s, 1)
    ),
    _check(child_chunks, "unique_ids", "No child id twice in a plan.", lambda s: invariants.unique_ids(s, 0)),
    _check(
        child_chunks, "exact_slices", "Child text equals its span.", lambda s: invariants.exact_slices(s, 0)
    ),
    _check(
        child_chunks, "budgets", "Children within their chunker size.", lambda s: invariants.budgets(s, 0)
    ),
    _check(child_chunks, "no_orphans", "Every child has a current parent.", invariants.no_orphans),
    _check(
        child_chunks,
        "parent_covers_children",
        "Child spans inside parents.",
        invariants.parent_covers_children,
    ),
    _check(graph_nodes, "edges_resolve", "Every edge joins two nodes.", invariants.graph_edges_resolve),
]
