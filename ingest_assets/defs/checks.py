"""Asset checks: the invariants of ``ingest_assets.store.invariants`` on what the store shows.

One multi-asset check runs them all in one step (a step per check costs more in Dagster's own
bookkeeping than the queries do). Plan-wide invariants (unique ids, no orphans, edges resolve)
look at every live plan's current view each run; per-set invariants (exact slices, budgets,
children inside parents) look only at chunk sets not verified before, since a stored set never
changes. So a run that wrote nothing checks in milliseconds, and writes nothing either.
"""

from collections.abc import Callable, Iterator

from dagster import AssetCheckResult, AssetCheckSeverity, AssetCheckSpec, AssetKey, multi_asset_check

from ingest_assets.defs.assets import child_chunks, graph_nodes, parent_chunks
from ingest_assets.defs.resources import DuckDBStore
from ingest_assets.store import IngestStore, invariants

__all__ = ["CHECKS", "RULES"]

Rule = Callable[[IngestStore], list[str]]

# (asset, check name, description, rule)
RULES: list[tuple[AssetKey, str, str, Rule]] = [
    (parent_chunks.key, "unique_ids", "No parent id twice in a plan.", lambda s: invariants.unique_ids(s, 1)),
    (
        parent_chunks.key,
        "exact_slices",
        "Parent text equals its span.",
        lambda s: invariants.exact_slices(s, 1, pending_only=True),
    ),
    (
        parent_chunks.key,
        "budgets",
        "Parents within their chunker size.",
        lambda s: invariants.budgets(s, 1, pending_only=True),
    ),
    (child_chunks.key, "unique_ids", "No child id twice in a plan.", lambda s: invariants.unique_ids(s, 0)),
    (
        child_chunks.key,
        "exact_slices",
        "Child text equals its span.",
        lambda s: invariants.exact_slices(s, 0, pending_only=True),
    ),
    (
        child_chunks.key,
        "budgets",
        "Children within their chunker size.",
        lambda s: invariants.budgets(s, 0, pending_only=True),
    ),
    (child_chunks.key, "no_orphans", "Every child has a current parent.", invariants.no_orphans),
    (
        child_chunks.key,
        "parent_covers_children",
        "Child spans inside parents.",
        lambda s: invariants.parent_covers_children(s, pending_only=True),
    ),
    (graph_nodes.key, "edges_resolve", "Every edge joins two nodes.", invariants.graph_edges_resolve),
]


@multi_asset_check(
    specs=[AssetCheckSpec(name=name, asset=asset, description=text) for asset, name, text, _ in RULES],
    name="chunk_invariants",
)
def chunk_invariants(store: DuckDBStore) -> Iterator[AssetCheckResult]:
    """Check every invariant; mark the newly checked sets verified when all of them hold."""
    db = store.store()
    # One connection for every rule (a connection per query would cost more than the
    # queries); results are yielded once it is closed, so the file is not held while
    # Dagster records them.
    with db.session():
        pending = invariants.pending_sets(db)
        found = [(asset, name, rule(db)) for asset, name, _, rule in RULES]
        if not any(violations for *_, violations in found):
            invariants.mark_verified(db, pending)
    for asset, name, violations in found:
        yield AssetCheckResult(
            asset_key=asset,
            check_name=name,
            passed=not violations,
            severity=AssetCheckSeverity.ERROR,
            metadata={
                "violations": len(violations),
                "examples": "\n".join(violations[:5]) or "none",
                "sets_checked": len(pending),
            },
        )


CHECKS = [chunk_invariants]
