"""What a run would have work in, said without writing anything (no Dagster here).

Work means: a source new, changed or deleted, a source to parse, a plan not live in the store
(or a live one no longer in the plans file), or for a plan a document whose parent, child or
graph member is missing or stale (contents that failed before under the plan are not work: the
steps skip them too). A shard with source work is also chunk work for every plan (its
documents get new versions).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from chunking.parsers import ParseLimits
from ingest_assets.engine.batching import subset
from ingest_assets.engine.keys import SHARDS, child_set_key, graph_set_key, parent_set_key
from ingest_assets.engine.parse import needs_parse
from ingest_assets.engine.scan import ScanDiff
from ingest_assets.plans import Plan
from ingest_assets.store import IngestStore

__all__ = ["IdleShard", "Pending", "pending_work"]


@dataclass
class IdleShard:
    """What a run of one shard would report if it had no work: its ``files``, its ``unchanged``
    documents, and per plan key the ``parent`` / ``child`` / ``graph`` sets it would reuse."""

    files: int = 0
    unchanged: int = 0
    reused: dict[str, dict[str, int]] = field(default_factory=dict)


@dataclass
class Pending:
    """The partitions with work: ``documents``, sorted shards with source or parse work;
    ``chunks``, plan key -> sorted shards with chunk work; ``idle``, per shard, see
    :class:`IdleShard`."""

    documents: list[str]
    chunks: dict[str, list[str]]
    idle: dict[str, IdleShard]

    @property
    def empty(self) -> bool:
        """Whether there is nothing to do at all."""
        return not self.documents and not self.chunks


def pending_work(
    store: IngestStore,
    plans: Mapping[str, Plan],
    limits: ParseLimits,
    shards: set[str],
    diff: ScanDiff | None,
) -> Pending:
    """:class:`Pending` for ``shards`` from a scan of them (``diff``; None: no inbox, which is
    source work everywhere, for the scan step to report)."""
    idle = {shard: IdleShard() for shard in shards}
    if diff is None:
        return Pending(sorted(shards), {}, idle)
    documents: set[str] = {w.shard for w in diff.writes}
    for shard, counts in diff.results.items():
        idle[shard].files = counts.files
    for source in diff.known.values():
        if source.deleted:
            continue
        if needs_parse(source, limits):
            documents.add(source.shard)
        else:
            idle[source.shard].unchanged += 1
    live = set(store.live_plans())
    current = store.current_documents(subset(shards, SHARDS))
    chunks: dict[str, set[str]] = {}
    for plan_key, plan in plans.items():
        work = set(documents) if plan_key in live else set(shards)
        reused = _plan_pending(store, plan, current, work)
        for shard in shards:
            idle[shard].reused[plan_key] = reused.get(shard, {"parent": 0, "child": 0, "graph": 0})
        if work:
            chunks[plan_key] = work
    if live - set(plans) and plans and not chunks:
        # Only a retirement: one chunk run registers the plans file's plans.
        chunks[next(iter(plans))] = {min(shards)}
    return Pending(sorted(documents), {key: sorted(value) for key, value in chunks.items()}, idle)


def _plan_pending(store: IngestStore, plan: Plan, current: list, work: set[str]) -> dict[str, dict[str, int]]:
    """Add to ``work`` the shards where ``plan`` has a member to write; count reused sets."""
    by_role = store.members_by_role(plan.key)
    parents, children, graphs = by_role["parent"], by_role["child"], by_role["graph"]
    failed_parent = store.failed_keys("parent", plan.key)
    failed_child = store.failed_keys("child", plan.key)
    counts: dict[str, dict[str, int]] = {}
    for doc in current:
        route = plan.route_for(doc.kind)
        if route is None:
            continue
        count = counts.setdefault(doc.shard, {"parent": 0, "child": 0, "graph": 0})
        failed_key = (doc.source_uri, doc.content_hash)
        parent = parent_set_key(doc.document_id, doc.version_id, route.parent_fingerprint)
        if parents.get(doc.document_id) != (parent, ""):
            if failed_key not in failed_parent:
                work.add(doc.shard)
            continue
        count["parent"] += 1
        child = child_set_key(
            doc.document_id, doc.version_id, route.child_fingerprint, route.parent_fingerprint
        )
        if children.get(doc.document_id) != (child, parent):
            if failed_key not in failed_child:
                work.add(doc.shard)
            continue
        count["child"] += 1
        if graphs.get(doc.document_id) != (graph_set_key(parent, child), child):
            work.add(doc.shard)
            continue
        count["graph"] += 1
    return counts
