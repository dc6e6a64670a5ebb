"""Asset checks over what the store shows, evaluated in their asset's own step.

Each asset declares its checks (``CHECK_SPECS``) and its step evaluates them after its work
(:func:`evaluate`): a check is no step of its own, so a run has one step per asset, not one per
asset and check (each step costs Dagster events, a store connection and its bookkeeping, which
a one-file edit paid seven times over). A check's result is still its own in the UI, with its
metadata, and materializing one asset runs its checks alone; a check is re-run by
materializing its asset, and ``ingest verify`` (``verify_job``) checks every set.

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

from dagster import AssetCheckResult, AssetCheckSeverity, AssetCheckSpec, AssetExecutionContext

from ingest_assets.defs.private import ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG
from ingest_assets.defs.resources import DuckDBStore
from ingest_assets.engine.keys import SHARDS, is_chunk_partition, plan_and_shard
from ingest_assets.store import IngestStore, invariants
from ingest_assets.store.store import ROLES

__all__ = ["CHECK_SPECS", "evaluate"]

Scope = dict[str, list[str]] | None  # the run's plan keys and their shards; None: every plan
Check = Callable[[IngestStore, Scope, DuckDBStore], AssetCheckResult]
START, END, PARTITION = ASSET_PARTITION_RANGE_START_TAG, ASSET_PARTITION_RANGE_END_TAG, "dagster/partition"
# A check's scope when its run names no partition (a materialization without partition tags).
_EVERY_PLAN = "every building or live plan"


def _result(
    name: str, rules: dict[str, list[str]], severity: AssetCheckSeverity, **extra: object
) -> AssetCheckResult:
    found = [v for violations in rules.values() for v in violations]
    return AssetCheckResult(
        check_name=name,
        passed=not found,
        severity=severity,
        metadata={
            **{rule: len(violations) for rule, violations in rules.items()},
            "examples": "\n".join(found[:10]) or "none",
            **extra,
        },
    )


def _scoped(name: str, rules: dict[str, list[str]], scope: Scope, **extra: object) -> AssetCheckResult:
    """An error-severity result whose metadata names the partitions it looked at."""
    return _result(name, rules, AssetCheckSeverity.ERROR, scope=str(scope or _EVERY_PLAN), **extra)


def _run_plan_shards(context: AssetExecutionContext) -> Scope:
    """The plan keys and shards the run materialized (None: no partition tags, so all)."""
    tags = context.run.tags
    if PARTITION in tags and is_chunk_partition(tags[PARTITION]):
        plan, shard = plan_and_shard(tags[PARTITION])
        return {plan: [shard]}
    if START in tags and is_chunk_partition(tags[START]):
        (plan, low), (_, high) = plan_and_shard(tags[START]), plan_and_shard(tags[END])
        return {plan: list(SHARDS[SHARDS.index(low) : SHARDS.index(high) + 1])}
    return None


# The contract's rules at each level (1 parents, 0 children): name -> rule(store, level, set keys).
_COMMON_RULES: dict[str, Callable[[IngestStore, int, list[str]], list[str]]] = {
    "unique_ids": invariants.unique_ids,
    "exact_slices": lambda db, level, keys: invariants.exact_slices(db, level, set_keys=keys),
    "budgets": lambda db, level, keys: invariants.budgets(db, level, set_keys=keys),
}
_RULES = {
    1: _COMMON_RULES,
    0: _COMMON_RULES
    | {
        "no_orphans": lambda db, _, keys: invariants.no_orphans(db, keys),
        "parent_covers_children": lambda db, _, keys: invariants.parent_covers_children(db, set_keys=keys),
    },
}


def _contract(db: IngestStore, scope: Scope, level: int) -> AssetCheckResult:
    # Every rule looks at the sets of the run's partitions never verified (what runs wrote there
    # since), and reads the rest of the view only where those sets point: its cost follows the
    # change, not the store (``ingest verify`` checks every set), and runs of other shards at
    # the same time check their own sets, not these again. The rules read one state of the
    # store, whatever other runs commit meanwhile.
    with db.snapshot():
        pending = invariants.pending_sets(db, level, scope)
        # Nothing new to look at: every rule holds without a query (on a lake each query reads
        # the catalog for every table it names, whatever it finds).
        rules = {name: rule(db, level, pending) if pending else [] for name, rule in _RULES[level].items()}
    if not any(rules.values()):
        invariants.mark_verified(db, pending)
    return _scoped("contract", rules, scope, sets_checked=len(pending))


def parent_contract(db: IngestStore, scope: Scope, _: DuckDBStore) -> AssetCheckResult:
    return _contract(db, scope, 1)


def child_contract(db: IngestStore, scope: Scope, _: DuckDBStore) -> AssetCheckResult:
    return _contract(db, scope, 0)


def edges_resolve(db: IngestStore, scope: Scope, _: DuckDBStore) -> AssetCheckResult:
    return _scoped("edges_resolve", {"edges_resolve": invariants.graph_edges_resolve(db, scope)}, scope)


def coverage(db: IngestStore, scope: Scope, _: DuckDBStore) -> AssetCheckResult:
    return _scoped("coverage", {"uncovered": invariants.coverage(db, scope)}, scope)


def vector_coverage(db: IngestStore, scope: Scope, store: DuckDBStore) -> AssetCheckResult:
    wanted = {plan.key: plan.embedding.key for plan in store.plans() if plan.embedding is not None}
    rules = {
        "without_vectors": invariants.vector_coverage(db, wanted, scope),
        "not_served": invariants.unserved(db, scope),
    }
    return _scoped("coverage", rules, scope, plans_embedding=len(wanted))


def parse_failures(db: IngestStore, _: Scope, __: DuckDBStore) -> AssetCheckResult:
    found = invariants.failures(db, ("parse",))
    return _result("parse_failures", {"failed_files": found}, AssetCheckSeverity.WARN)


def chunk_failures(db: IngestStore, _: Scope, __: DuckDBStore) -> AssetCheckResult:
    found = invariants.failures(db, ROLES)
    return _result("chunk_failures", {"failed_documents": found}, AssetCheckSeverity.WARN)


# Each asset's checks: (name, description, function), evaluated in this order after its work.
_CHECKS: dict[str, list[tuple[str, str, Check]]] = {
    "documents": [("parse_failures", "Files that could not be parsed, and why.", parse_failures)],
    "parent_chunks": [
        ("chunk_failures", "Documents a chunker failed on, and why.", chunk_failures),
        ("contract", "Unique ids, exact slices, budgets.", parent_contract),
    ],
    "child_chunks": [("contract", "Unique ids, exact slices, budgets, inside a parent.", child_contract)],
    "graph_nodes": [
        ("coverage", "Every current document has parents, children and graph records in the plan.", coverage),
        ("edges_resolve", "Every edge joins two nodes.", edges_resolve),
    ],
    "embeddings": [
        (
            "coverage",
            "Every current child has a vector under the plan's model; every document is served.",
            vector_coverage,
        )
    ],
}
CHECK_SPECS: dict[str, list[AssetCheckSpec]] = {
    asset: [AssetCheckSpec(name, asset=asset, description=description) for name, description, _ in checks]
    for asset, checks in _CHECKS.items()
}


def evaluate(context: AssetExecutionContext, store: DuckDBStore, asset: str) -> list[AssetCheckResult]:
    """The results of ``asset``'s checks for this run, read over one store connection.

    A check that cannot run (its query fails) fails, with the error in its metadata and the
    run's log: the asset's work is in the store by then, and its materialization is recorded
    all the same, as it was when each check was a step of its own.
    """
    checks = _CHECKS.get(asset, [])
    if not checks:  # no connection for an asset without checks
        return []
    db, scope = store.store(), _run_plan_shards(context)
    results = []
    with db.session():
        for name, _, check in checks:
            try:
                results.append(check(db, scope, store))
            except Exception as error:  # shown as the check's failure, not lost
                reason = f"{type(error).__name__}: {error}"
                context.log.error(f"{asset} check {name} could not run: {reason}")
                metadata = {"error": reason, "scope": str(scope or _EVERY_PLAN)}
                results.append(
                    AssetCheckResult(
                        check_name=name, passed=False, severity=AssetCheckSeverity.ERROR, metadata=metadata
                    )
                )
    return results
