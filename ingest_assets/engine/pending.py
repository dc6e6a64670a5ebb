"""What a run would have work in, said without writing anything (no Dagster here).

Work means: a source new, changed or deleted, a source to parse, a plan key not registered in
the store or retired there (or one serving or building that the plans file no longer has), a
building key that covers every document but has not switched, a plan whose recorded embedding
stage is not its config's, or for a plan a document whose parent, child or graph member is
missing or stale, (for a plan that embeds) whose child set has no vectors under the plan's
embedding, or whose complete sets are not yet what the plan serves (contents that failed
before under the plan are not work: the steps skip them too). A shard with source work is also
chunk work for every plan (its documents get new versions).
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
from ingest_assets.engine.keys import SHARDS, chunk_partition, expected_keys
from ingest_assets.engine.parse import needs_parse
from ingest_assets.engine.reuse import Reuse, decide
from ingest_assets.engine.scan import ScanDiff
from ingest_assets.plans import Plan
from ingest_assets.store import IngestStore, SourceRow
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
    # The sources the parse step would parse, as the scan saw them (for a prefetch).
    to_parse: list[SourceRow] = field(default_factory=list)
    # The inbox entries the scan skipped (links, special files, ...), ``path: why`` sorted by
    # path: no work, so no run's scan step names them; ``ingest run`` and the sensor do.
    skipped: list[str] = field(default_factory=list)

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
    written = {w.uri for w in diff.writes}
    to_parse = [w for w in diff.writes if not w.deleted and needs_parse(w, limits)]
    for w in diff.writes:
        work.setdefault(w.shard, []).append(("source", w.uri, w.content_hash, w.deleted))
    for shard, counts in diff.results.items():
        idle[shard].files = counts.files
    for source in diff.known.values():
        if source.deleted:
            continue
        if needs_parse(source, limits):
            work.setdefault(source.shard, []).append(("parse", source.uri, source.content_hash))
            if source.uri not in written:
                to_parse.append(source)
        else:
            idle[source.shard].unchanged += 1
    documents = set(work)
    keys = {shard: _digest(items) for shard, items in work.items()}
    states = store.plan_states()
    current = store.current_documents(subset(shards, SHARDS))
    recorded = plan_embeddings(store)
    chunks: dict[str, set[str]] = {}
    for plan_key, plan in plans.items():
        missing: dict[str, list[Any]] = {}
        for shard in documents:
            missing.setdefault(shard, []).append(("documents", keys[shard]))
        reused = _plan_pending(store, plan, current, missing)
        _embedding_pending(store, plan, recorded.get(plan_key), reused, missing, min(shards))
        state = states.get(plan_key)
        if (
            state is None
            or state.state == "retired"
            or (state.state == "building" and not missing and _covered(store, plan))
        ):
            # To register (when it was last, or never) or to switch: one partition does it.
            since = "never" if state is None else f"{state.state} {state.state_at}"
            first = min(missing, default=min(shards))
            missing.setdefault(first, []).append(("plan state", plan_key, since))
        for shard in shards:
            idle[shard].reused[plan_key] = reused.get(shard, {"parent": 0, "child": 0, "graph": 0})
        if missing:
            chunks[plan_key] = set(missing)
            for shard, items in missing.items():
                keys[chunk_partition(plan_key, shard)] = _digest([plan_key, *items])
    names = {plan.name for plan in plans.values()}
    retired = sorted(
        key
        for key, state in states.items()
        if key not in plans
        and (state.state == "building" or (state.state == "live" and state.name not in names))
    )
    if retired and plans and not chunks:
        # Only a retirement: one chunk run registers the plans file's plans.
        plan_key, shard = next(iter(plans)), min(shards)
        chunks[plan_key] = {shard}
        keys[chunk_partition(plan_key, shard)] = _digest(["retire", *retired])
    skipped = sorted(line for result in diff.results.values() for line in result.skipped_files)
    chunks_sorted = {key: sorted(value) for key, value in chunks.items()}
    return Pending(sorted(documents), chunks_sorted, idle, keys, to_parse, skipped)


def _covered(store: IngestStore, plan: Plan) -> bool:
    """Whether ``plan``'s key has every current document it routes ready."""
    _, ready, total = store.plan_progress(plan.key, plan.kinds)
    return ready == total


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
    embedding, and a stage to record (the step records it from any shard: the first shard with
    work already, else ``first_shard``, so no idle shard gets a run for it)."""
    wanted = None if plan.embedding is None else plan_row(plan.embedding)
    if wanted != recorded:
        shard = min(missing, default=first_shard)
        missing.setdefault(shard, []).append(("embedding stage", plan.key, repr(wanted)))
    embedding = None if plan.embedding is None else plan.embedding.key
    complete = [entry for count in counts.values() for entry in count.pop("child_sets", [])]
    done = set() if embedding is None else embedded_set_keys(store, [e[0] for e in complete], embedding)
    if embedding is not None:
        for count in counts.values():
            count["embedded"] = 0
    for child, shard, served, expected in complete:
        if embedding is not None:
            counts[shard]["embedded"] += child in done
            if child not in done:
                missing.setdefault(shard, []).append(("embed", child, embedding))
                continue
        if served != (*expected, embedding):
            missing.setdefault(shard, []).append(("promote", str(expected[0]), child))


def _plan_pending(
    store: IngestStore, plan: Plan, current: list, missing: dict[str, list[Any]]
) -> dict[str, dict[str, int]]:
    """Add to ``missing`` what ``plan`` has to write, per shard; count reused sets."""
    by_role = store.members_by_role(plan.key)
    promoted = store.promoted(plan.key)
    # The chunk steps skip a content that failed under the plan before; the graph step does not.
    failed = {role: store.failed_keys(role, plan.key) for role in ("parent", "child")}
    failed["graph"] = set()
    routed = [(doc, expected_keys(doc.document_id, doc.version_id, route)) for doc in current
              if (route := plan.route_for(doc.kind)) is not None]  # fmt: skip
    stored = store.existing_sets({k for _, (p, c, _) in routed for k in (p, c)})
    stored |= store.existing_sets({g for _, (_, _, g) in routed}, table="graph_sets")
    counts: dict[str, dict[str, int]] = {}
    for doc, (parent, child, graph) in routed:
        count = counts.setdefault(doc.shard, {"parent": 0, "child": 0, "graph": 0})
        failed_key = (doc.source_uri, doc.content_hash)
        for role, key, based_on in (
            ("parent", parent, ""),
            ("child", child, parent),
            ("graph", graph, child),
        ):
            decision = decide(
                by_role[role].get(doc.document_id), key, based_on, stored=key in stored,
                failed=failed_key in failed[role],
            )  # fmt: skip
            if decision is not Reuse.KEEP:
                if decision.work:
                    missing.setdefault(doc.shard, []).append((role, key))
                break  # the sets after it wait for it
            count[role] += 1
        else:
            # For _embedding_pending (which pops it): served once embedded, or served already.
            served = promoted.get(doc.document_id)
            expected = (doc.version_id, parent, child, graph)
            count.setdefault("child_sets", []).append((child, doc.shard, served, expected))
    return counts
