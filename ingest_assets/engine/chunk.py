"""The parent and child steps: point a plan at a chunk set for each current document, chunking
only the sets that are not stored (no Dagster here).

Reuse is decided from keys alone, before any document is loaded (see :mod:`.keys`): a stored
key means reuse, and a plan that already points at it means nothing to do, not even a write.
Chunking happens in worker processes between short reads and one short write per batch.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from ingest_assets.engine.batching import batches
from ingest_assets.engine.keys import expected_keys
from ingest_assets.engine.progress import StepProgress
from ingest_assets.engine.results import ChunkResult, FailedFile
from ingest_assets.engine.reuse import Reuse, decide
from ingest_assets.engine.tasks import ChunkTask, chunk_document
from ingest_assets.engine.workers import run_batches
from ingest_assets.plans import Plan, Route
from ingest_assets.settings import Settings
from ingest_assets.store import (
    ChunkSetWrite,
    CurrentDocument,
    FailureWrite,
    IngestStore,
    MemberWrite,
    SetSummary,
)

__all__ = ["WorkItem", "chunk_children", "chunk_parents", "failure", "work_items"]


@dataclass(frozen=True)
class WorkItem:
    """One current document in a chunking or graph step, with the plan's route for its kind."""

    document: CurrentDocument
    route: Route

    @property
    def document_id(self) -> UUID:
        return self.document.document_id

    @property
    def version_id(self) -> UUID:
        return self.document.version_id


def work_items(
    store: IngestStore, plan: Plan, shards: Iterable[str], every: set[str] | None
) -> tuple[list[WorkItem], dict[str, int]]:
    """The current documents of ``shards`` the plan routes, and per shard how many it does not
    (``every`` None: the shards are all of them, read without a filter)."""
    shards = set(shards)
    unrouted = dict.fromkeys(shards, 0)
    items = []
    for document in store.current_documents(every):
        if document.shard not in shards:
            continue
        route = plan.route_for(document.kind)
        if route is None:
            unrouted[document.shard] += 1
        else:
            items.append(WorkItem(document, route))
    return items, unrouted


def failure(item: WorkItem, stage: str, plan_key: str, error: Exception | str) -> FailureWrite:
    """A failure of ``item`` at ``stage``, its message naming the file."""
    uri = item.document.source_uri
    return FailureWrite(
        uri,
        item.document.content_hash,
        stage,
        f"{uri}: {error}"[:2000],
        plan_key=plan_key,
        document_id=item.document.document_id,
    )


def chunk_parents(
    store: IngestStore, plan: Plan, items: list[WorkItem], unrouted: dict[str, int], settings: Settings
) -> dict[str, ChunkResult]:
    """Point ``plan`` at a parent set for each of ``items``; chunk the missing sets."""
    keys = {i.document_id: expected_keys(i.document_id, i.version_id, i.route)[0] for i in items}
    results = {shard: ChunkResult("parent", unrouted=n) for shard, n in unrouted.items()}
    _run(store, plan.key, "parent", items, keys, lambda _: "", None, results, settings)
    return results


def chunk_children(
    store: IngestStore, plan: Plan, items: list[WorkItem], unrouted: dict[str, int], settings: Settings
) -> dict[str, ChunkResult]:
    """Point ``plan`` at a child set for every item whose current parent set it holds; the
    others are counted as ``waiting`` (their parents are not chunked for this version yet)."""
    results = {shard: ChunkResult("child", unrouted=n) for shard, n in unrouted.items()}
    parents = store.members(plan.key, "parent")
    ready = []
    for item in items:
        expected = expected_keys(item.document_id, item.version_id, item.route)[0]
        if parents.get(item.document_id, ("",))[0] == expected:
            ready.append(item)
        else:
            results[item.document.shard].waiting += 1
    keys = {i.document_id: expected_keys(i.document_id, i.version_id, i.route)[1] for i in ready}

    def based_on(item: WorkItem) -> str:
        return parents[item.document_id][0]

    def parent_rows(batch: list[WorkItem]) -> dict[str, list[dict[str, Any]]]:
        return store.chunk_rows_many([based_on(i) for i in batch])

    _run(store, plan.key, "child", ready, keys, based_on, parent_rows, results, settings)
    return results


def _run(
    store: IngestStore,
    plan_key: str,
    role: str,
    items: list[WorkItem],
    keys: dict[UUID, str],
    based_on: Callable[[WorkItem], str],
    parent_rows: Callable[[list[WorkItem]], dict[str, list[dict[str, Any]]]] | None,
    results: dict[str, ChunkResult],
    settings: Settings,
) -> None:
    """The reuse logic both steps share: relink stored sets, chunk the missing, record failures.

    ``parent_rows(batch)`` reads the stored parents a child batch splits (None for parents).
    """
    members = store.members(plan_key, role)
    summaries = store.set_summaries(keys.values())
    failed = store.failed_keys(role, plan_key)
    relink: list[MemberWrite] = []
    todo: list[WorkItem] = []
    for item in items:
        result = results[item.document.shard]
        result.documents += 1
        key = keys[item.document_id]
        member = MemberWrite(plan_key, item.document_id, role, key, item.version_id, based_on(item))
        decision = decide(
            members.get(item.document_id),
            key,
            member.based_on,
            stored=key in summaries,
            failed=(item.document.source_uri, item.document.content_hash) in failed,
        )
        result.reused += decision.reused
        if decision is Reuse.RELINK:
            relink.append(member)
        elif decision is Reuse.SKIP:
            result.skipped_failed += 1
        elif decision is Reuse.CREATE:
            todo.append(item)
    store.write_chunk_sets([], relink)

    def work() -> Iterator[tuple[list[WorkItem], list[ChunkTask]]]:
        # Read while the workers chunk the batch before (see workers.run_batches).
        for batch in batches(todo, lambda item: item.document.text_length):
            bodies = store.document_bodies([(i.document_id, i.version_id) for i in batch], compressed=True)
            rows = parent_rows(batch) if parent_rows else None
            yield (
                batch,
                [
                    ChunkTask(
                        item.route.leveler,
                        keys[item.document_id],
                        item.version_id,
                        bodies[f"{item.document_id}/{item.version_id}"],
                        None if rows is None else rows.get(based_on(item), []),
                    )
                    for item in batch
                ],
            )

    total, started = sum(item.document.text_length for item in todo), time.perf_counter()
    with StepProgress(f"{role}_chunks {plan_key}", total, "char") as progress:
        for batch, outcomes in run_batches(chunk_document, work(), total, settings):
            sets, failures, members_made = [], [], []
            for item, outcome in zip(batch, outcomes, strict=True):
                result = results[item.document.shard]
                result.chunker_calls += 1
                if isinstance(outcome, str):
                    failures.append(failure(item, role, plan_key, outcome))
                    result.failed += 1
                    result.failures.append(FailedFile(item.document.source_uri, failures[-1].error))
                    continue
                key = keys[item.document_id]
                parent = role == "parent"
                sets.append(
                    ChunkSetWrite(
                        set_key=key,
                        document_id=item.document_id,
                        version_id=item.version_id,
                        level=1 if parent else 0,
                        fingerprint=item.route.parent_fingerprint if parent else item.route.child_fingerprint,
                        parent_fingerprint="" if parent else item.route.parent_fingerprint,
                        rows=outcome,
                    )
                )
                members_made.append(
                    MemberWrite(plan_key, item.document_id, role, key, item.version_id, based_on(item))
                )
                result.created += 1
                result.chunks_written += len(outcome)
                summaries[key] = SetSummary.of_rows(outcome)
            store.write_chunk_sets(sets, members_made)
            store.record_failures(failures)
            progress.advance(sum(item.document.text_length for item in batch))
    if todo:
        store.record_timing(role, plan_key, len(todo), total, time.perf_counter() - started)
        progress.finished(f"{len(todo)} documents chunked, {len(relink)} sets relinked")
    for item in items:
        key = keys.get(item.document_id)
        if key in summaries:
            results[item.document.shard].sets[key] = (item.document.source_uri, summaries[key])
