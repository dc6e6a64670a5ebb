"""Asset checks, attached per asset (so each asset materializes alone), over what the store shows.

* ``parent_chunks``/``child_chunks`` ``contract``: unique ids; exact slices and budgets (and, for
  children, parents that cover them and exist). Every rule looks only at the sets of the run's
  partitions not verified before (a stored set never changes) and reads the rest of the view
  only where they point (the ids they hold, the parents they name), so a run that wrote nothing
  checks in milliseconds, one that wrote a document's sets costs the same whatever the store
  holds, and runs of other shards at the same time do not check each other's sets.
* ``graph_nodes`` ``edges_resolve``: every edge of the run's partitions joins two nodes;
  ``coverage``: every current document a live plan routes has parents, children and graph
  records there (for the partitions of the run), unless its content failed a step (that is the
  failures check's to show).
* ``embeddings`` ``coverage``: every current child of a plan that embeds has a vector under the
  plan's model and text mode, and every current document is served at its current version
  (promoted) in the plan (for the partitions of the run, building keys included).
* ``documents`` ``parse_failures`` and ``parent_chunks`` ``chunk_failures`` (warnings): each
  failed file with its message, as ``ingest_failures`` holds it.
"""

from collections.abc import Callable

from dagster import AssetCheckExecutionContext, AssetCheckResult, AssetCheckSeverity, asset_check

from ingest_assets.defs.assets import child_chunks, documents, embeddings, graph_nodes, parent_chunks
from ingest_assets.defs.private import ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG
from ingest_assets.defs.resources import DuckDBStore
from ingest_assets.engine.keys import SHARDS, is_chunk_partition, plan_and_shard
from ingest_assets.store import IngestStore, invariants
from ingest_assets.store.store import ROLES

__all__ = ["CHECKS"]

Rule = Callable[[IngestStore], list[str]]
START, END, PARTITION = ASSET_PARTITION_RANGE_START_TAG, ASSET_PARTITION_RANGE_END_TAG, "dagster/partition"
# A check's scope when its run names no partition (a run of the check alone, from the UI).
_EVERY_PLAN = "every building or live plan"


def _result(rules: dict[str, list[str]], severity: AssetCheckSeverity, **extra: object) -> AssetCheckResult:
    found = [v for violations in rules.values() for v in violations]
    return AssetCheckResult(
        passed=not found,
        severity=severity,
        metadata={
            **{rule: len(violations) for rule, violations in rules.items()},
            "examples": "\n".join(found[:10]) or "none",
            **extra,
        },
    )


def _contract(context: AssetCheckExecutionContext, store: DuckDBStore, level: int) -> AssetCheckResult:
    db = store.store()
    scope = _run_plan_shards(context)
    with db.session():  # one connection for every rule
        # Every rule looks at the sets of the run's partitions never verified (what runs wrote
        # there since), and reads the rest of the view only where those sets point: its cost
        # follows the change, not the store (``ingest verify`` checks every set), and runs of
        # other shards at the same time check their own sets, not these again. The rules read
        # one state of the store, whatever other runs commit meanwhile.
        with db.snapshot():
            pending = invariants.pending_sets(db, level, scope)
            rules = {
                "unique_ids": invariants.unique_ids(db, level, pending),
                "exact_slices": invariants.exact_slices(db, level, set_keys=pending),
                "budgets": invariants.budgets(db, level, set_keys=pending),
            }
            if level == 0:
                rules["no_orphans"] = invariants.no_orphans(db, pending)
                rules["parent_covers_children"] = invariants.parent_covers_children(db, set_keys=pending)
        if not any(rules.values()):
            invariants.mark_verified(db, pending)
    return _result(
        rules, AssetCheckSeverity.ERROR, sets_checked=len(pending), scope=str(scope or _EVERY_PLAN)
    )


@asset_check(asset=parent_chunks, name="contract", description="Unique ids, exact slices, budgets.")
def parent_contract(context: AssetCheckExecutionContext, store: DuckDBStore) -> AssetCheckResult:
    return _contract(context, store, 1)


@asset_check(
    asset=child_chunks, name="contract", description="Unique ids, exact slices, budgets, inside a parent."
)
def child_contract(context: AssetCheckExecutionContext, store: DuckDBStore) -> AssetCheckResult:
    return _contract(context, store, 0)


@asset_check(asset=graph_nodes, name="edges_resolve", description="Every edge joins two nodes.")
def edges_resolve(context: AssetCheckExecutionContext, store: DuckDBStore) -> AssetCheckResult:
    scope = _run_plan_shards(context)
    db = store.store()
    violations = invariants.graph_edges_resolve(db, scope)
    return _result(
        {"edges_resolve": violations},
        AssetCheckSeverity.ERROR,
        scope=str(scope or _EVERY_PLAN),
    )


def _run_plan_shards(context: AssetCheckExecutionContext) -> dict[str, list[str]] | None:
    """The plan keys and shards the run materialized (None: no partition tags, so all)."""
    tags = context.run.tags
    if PARTITION in tags and is_chunk_partition(tags[PARTITION]):
        plan, shard = plan_and_shard(tags[PARTITION])
        return {plan: [shard]}
    if START in tags and is_chunk_partition(tags[START]):
        (plan, low), (_, high) = plan_and_shard(tags[START]), plan_and_shard(tags[END])
        return {plan: list(SHARDS[SHARDS.index(low) : SHARDS.index(high) + 1])}
    return None


@asset_check(
    asset=graph_nodes,
    name="coverage",
    description="Every current document has parents, children and graph records in the plan.",
)
def coverage(context: AssetCheckExecutionContext, store: DuckDBStore) -> AssetCheckResult:
    scope = _run_plan_shards(context)
    db = store.store()
    violations = invariants.coverage(db, scope)
    return _result({"uncovered": violations}, AssetCheckSeverity.ERROR, scope=str(scope or _EVERY_PLAN))


@asset_check(
    asset=embeddings,
    name="coverage",
    description="Every current child has a vector under the plan's model; every document is served.",
)
def vector_coverage(context: AssetCheckExecutionContext, store: DuckDBStore) -> AssetCheckResult:
    scope = _run_plan_shards(context)
    wanted = {plan.key: plan.embedding.key for plan in store.plans() if plan.embedding is not None}
    db = store.store()
    violations = invariants.vector_coverage(db, wanted, scope)
    unserved = invariants.unserved(db, scope)
    return _result(
        {"without_vectors": violations, "not_served": unserved},
        AssetCheckSeverity.ERROR,
        scope=str(scope or _EVERY_PLAN),
        plans_embedding=len(wanted),
    )


@asset_check(asset=documents, name="parse_failures", description="Files that could not be parsed, and why.")
def parse_failures(store: DuckDBStore) -> AssetCheckResult:
    return _result({"failed_files": invariants.failures(store.store(), ("parse",))}, AssetCheckSeverity.WARN)


@asset_check(
    asset=parent_chunks, name="chunk_failures", description="Documents a chunker failed on, and why."
)
def chunk_failures(store: DuckDBStore) -> AssetCheckResult:
    found = invariants.failures(store.store(), ROLES)
    return _result({"failed_documents": found}, AssetCheckSeverity.WARN)


CHECKS = [
    parent_contract,
    child_contract,
    edges_resolve,
    coverage,
    vector_coverage,
    parse_failures,
    chunk_failures,
]
