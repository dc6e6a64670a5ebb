"""What a run would have work in, said without writing anything (no Dagster here).

Work means: a source new, changed or deleted, a source to parse, a plan not live in the store
(or a live one no longer in the plans file), a plan whose recorded embedding stage is not its
config's, or for a plan a document whose parent, child or graph member is missing or stale, or
(for a plan that embeds) whose child set has no vectors under the plan's embedding (contents
that failed before under the plan are not work: the steps skip them too). A shard with source
work is also chunk work for every plan (its documents get new versions).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chunking.parsers import ParseLimits
from ingest_assets.engine.batching import subset
from ingest_assets.engine.embed import plan_row
from ingest_assets.engine.keys import SHARDS, expected_keys
from ingest_assets.engine.parse import needs_parse
from ingest_assets.engine.scan import ScanDiff
from ingest_assets.plans import Plan
from ingest_assets.store import IngestStore
from ingest_assets.store.vectors import PlanEmbeddingRow, embedded_set_keys, plan_embeddings

__all__ = ["IdleShard", "Pending", "pending_work"]


@dataclass
class IdleShard:
    """What a run of one shard would report if it had no work: its ``files``, its ``unchanged``
    documents, and per plan key the ``parent`` / ``child`` / ``graph`` sets it would reuse (and
    ``embedded``: child sets with vectors, for a plan that embeds)."""

    files: int = 0
    unchanged: int = 0
    reused: dict[str, dict[str, int]] = field(default_factory=dict)


@dataclass
class Pending:
    """The partitions with work: ``documents``, sorted shards with source or parse work;
    ``chunks``, plan key -> sorted shards with chunk work; ``idle``, per shard, see
    :class:`IdleShard`.

    ``keys`` names the work of each partition (``"<shard>"`` for documents, ``"<plan>|<shard>"``
    for chunks): a digest of what is missing there (the files and contents to scan or parse;
    the document versions and sets to chunk), so the same work has the same key and any change
    to it (an edit, a fix, a plan put back) a new one. Automation derives run keys from it.
    """

    documents: list[str]
    chunks: dict[str, list[str]]
    idle: dict[str, IdleShard]
    keys: dict[str, str] = field(default_factory=dict)

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
        return Pending(sorted(shards), {}, idle, {shard: _digest(["no inbox"]) for shard in shards})
    work: dict[str, list[Any]] = {}
    for w in diff.writes:
        work.setdefault(w.shard, []).append(("source", w.uri, w.content_hash, w.deleted))
    for shard, counts in diff.results.items():
        idle[shard].files = counts.files
    for source in diff.known.values():
        if source.deleted:
            continue
        if needs_parse(source, limits):
            work.setdefault(source.shard, []).append(("parse", source.uri, source.content_hash))
        else:
            idle[source.shard].unchanged += 1
    documents = set(work)
    keys = {shard: _digest(items) for shard, items in work.items()}
    registrations = store.plan_registrations()
    live = {key for key, (is_live, _) in registrations.items() if is_live}
    current = store.current_documents(subset(shards, SHARDS))
    recorded = plan_embeddings(store)
    chunks: dict[str, set[str]] = {}
    for plan_key, plan in plans.items():
        missing: dict[str, list[Any]] = {}
        if plan_key not in live:
            # When it was last registered tells a plan coming back from one it never was.
            since = str(registrations.get(plan_key, (False, "never"))[1])
            missing = {shard: [("plan not live", plan_key, since)] for shard in shards}
        for shard in documents:
            missing.setdefault(shard, []).append(("documents", keys[shard]))
        reused = _plan_pending(store, plan, current, missing)
        _embedding_pending(store, plan, recorded.get(plan_key), reused, missing, min(shards))
        for shard in shards:
            idle[shard].reused[plan_key] = reused.get(shard, {"parent": 0, "child": 0, "graph": 0})
        if missing:
            chunks[plan_key] = set(missing)
            for shard, items in missing.items():
                keys[f"{plan_key}|{shard}"] = _digest([plan_key, *items])
    retired = sorted(live - set(plans))
    if retired and plans and not chunks:
        # Only a retirement: one chunk run registers the plans file's plans.
        plan_key, shard = next(iter(plans)), min(shards)
        chunks[plan_key] = {shard}
        keys[f"{plan_key}|{shard}"] = _digest(["retire", *retired])
    return Pending(sorted(documents), {key: sorted(value) for key, value in chunks.items()}, idle, keys)


def _digest(items: list[Any]) -> str:
    """A short digest of some work (JSON of sorted items)."""
    text = json.dumps(sorted(items, key=repr), default=str, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _embedding_pending(
    store: IngestStore,
    plan: Plan,
    recorded: PlanEmbeddingRow | None,
    counts: dict[str, dict[str, Any]],
    missing: dict[str, list[Any]],
    first_shard: str,
) -> None:
    """Add to ``missing`` the current child sets of ``plan`` without vectors under its
    embedding, and a stage to record (``first_shard``: the step records it from any shard)."""
    wanted = None if plan.embedding is None else plan_row(plan.embedding)
    if wanted != recorded:
        missing.setdefault(first_shard, []).append(("embedding stage", plan.key, repr(wanted)))
    if plan.embedding is None:
        return
    children = {shard: count.pop("child_sets", []) for shard, count in counts.items()}
    done = embedded_set_keys(store, [k for keys in children.values() for k in keys], plan.embedding.key)
    for shard, keys in children.items():
        counts[shard]["embedded"] = sum(key in done for key in keys)
        for key in keys:
            if key not in done:
                missing.setdefault(shard, []).append(("embed", key, plan.embedding.key))


def _plan_pending(
    store: IngestStore, plan: Plan, current: list, missing: dict[str, list[Any]]
) -> dict[str, dict[str, int]]:
    """Add to ``missing`` what ``plan`` has to write, per shard; count reused sets."""
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
        parent, child, graph = expected_keys(doc.document_id, doc.version_id, route)
        if parents.get(doc.document_id) != (parent, ""):
            if failed_key not in failed_parent:
                missing.setdefault(doc.shard, []).append(("parent", parent))
            continue
        count["parent"] += 1
        if children.get(doc.document_id) != (child, parent):
            if failed_key not in failed_child:
                missing.setdefault(doc.shard, []).append(("child", child))
            continue
        count["child"] += 1
        count.setdefault("child_sets", []).append(child)  # for _embedding_pending, which pops it
        if graphs.get(doc.document_id) != (graph, child):
            missing.setdefault(doc.shard, []).append(("graph", graph))
            continue
        count["graph"] += 1
    return counts
