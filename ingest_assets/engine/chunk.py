"""The parent and child steps: point a plan at a chunk set for each current document, chunking
only the sets that are not stored (no Dagster here).

Reuse is decided from keys alone, before any document is loaded (see :mod:`.keys`): a stored
key means reuse, and a plan that already points at it means nothing to do, not even a write.
Chunking happens in worker processes between short reads and one short write per batch.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any
from uuid import UUID

from chunking import ParentChildChunker
from ingest_assets.engine.batching import batches
from ingest_assets.engine.keys import expected_keys
from ingest_assets.engine.progress import StepProgress
from ingest_assets.engine.results import ChunkResult, FailedFile
from ingest_assets.engine.reuse import Reuse, decide
from ingest_assets.engine.tasks import ChunkTask, chunk_document, chunk_task_key
from ingest_assets.engine.workers import FollowUp, prefetch, run_batches, start_pool
from ingest_assets.plans import Plan, Route
from ingest_assets.settings import Settings
from ingest_assets.store import (
    ChunkSetWrite,
    CurrentDocument,
    DocumentWrite,
    FailureWrite,
    IngestStore,
    MemberWrite,
    SetSummary,
)
from ingest_assets.store.rows import chunk_dict
from ingest_assets.store.writes import compressed_body

__all__ = [
    "WorkItem",
    "chunk_after_parse",
    "chunk_children",
    "chunk_parents",
    "failure",
    "prefetch_chunks",
    "work_items",
]


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
    results = {shard: ChunkResult("parent", unrouted=n) for shard, n in unrouted.items()}
    _run(_Level.parents(store, plan.key, items), results, settings)
    return results


def chunk_children(
    store: IngestStore, plan: Plan, items: list[WorkItem], unrouted: dict[str, int], settings: Settings
) -> dict[str, ChunkResult]:
    """Point ``plan`` at a child set for every item whose current parent set it holds; the
    others are counted as ``waiting`` (their parents are not chunked for this version yet)."""
    results = {shard: ChunkResult("child", unrouted=n) for shard, n in unrouted.items()}
    current = {doc: key for doc, (key, _) in store.members(plan.key, "parent").items()}
    ready = []
    for item in items:
        if current.get(item.document_id) == expected_keys(item.document_id, item.version_id, item.route)[0]:
            ready.append(item)
        else:
            results[item.document.shard].waiting += 1
    _run(_Level.children(store, plan.key, ready, current), results, settings)
    return results


def prefetch_chunks(store: IngestStore, plan: Plan, items: list[WorkItem], settings: Settings) -> int:
    """Start chunking, on the worker pool, the sets the chunk steps of ``plan`` will make for
    ``items``: the parent sets to make, and the child sets to make over parent sets already
    stored. The steps take the results of the same sets (a set's key names its rows; see
    :func:`.workers.prefetch`: nothing starts for little work or one worker). Reads the
    store, writes nothing. Returns how many jobs were started."""
    parents = _Level.parents(store, plan.key, items)
    decided, _ = parents.decided()
    # The parent step points the plan at the stored parent sets (a new plan key points at none
    # yet), so their children split exactly those.
    stored = [item for item, _, decision in decided if decision.reused]
    children = _Level.children(store, plan.key, stored, parents.keys)
    todo = {
        level: [item for item, _, decision in level.decided()[0] if decision is Reuse.CREATE]
        for level in (parents, children)
    }
    # The pool starts while the jobs are read (they are read lazily, as prefetch() asks).
    start_pool(settings, sum(item.document.text_length for items in todo.values() for item in items))
    sized = (
        (job, item.document.text_length)
        for level, items in todo.items()
        for batch, tasks in level.jobs(items)
        for item, job in zip(batch, tasks, strict=True)
    )
    return prefetch(chunk_document, sized, settings, key=chunk_task_key)


def chunk_after_parse(plans: list[Plan], parsed: DocumentWrite | object) -> list[FollowUp]:
    """What to chunk as soon as a file is parsed (``parsed``, a parse job's result), for
    :func:`.workers.prefetch`: for each of ``plans`` whose routes take its kind, the new
    version's parent set, and once that is made, its child set over those parents. Each job is
    the one the chunk steps make for the set (the body as stored, the parent rows as read back),
    named by the set's key, so a step that makes the set takes it and one that reuses a stored
    set never asks. A failed parse chunks nothing."""
    if not isinstance(parsed, DocumentWrite):
        return []
    body = compressed_body(parsed)
    follow_ups = []
    for plan in plans:
        route = plan.route_for(parsed.kind)
        if route is None:
            continue
        parent, child, _ = expected_keys(parsed.document_id, parsed.version_id, route)
        children = partial(_children_after, route.leveler, child, parsed.version_id, body)
        follow_ups.append(
            FollowUp(
                chunk_document, ChunkTask(route.leveler, parent, parsed.version_id, body), parent, children
            )
        )
    return follow_ups


def _children_after(
    leveler: ParentChildChunker,
    child_key: str,
    version_id: UUID,
    body: bytes,
    rows: list[dict[str, Any]] | str,
) -> list[FollowUp]:
    """The child set's job over the parent rows a parent job made (none if it failed)."""
    if isinstance(rows, str):
        return []
    # As the child step reads them: in index order, as the store gives back what it wrote.
    parents = [chunk_dict(row) for row in sorted(rows, key=lambda row: row["index"])]
    return [FollowUp(chunk_document, ChunkTask(leveler, child_key, version_id, body, parents), child_key)]


@dataclass(frozen=True, eq=False)
class _Level:
    """One level's chunk work for a plan key: the ``items``, each item's set key (``keys``),
    and for children, the parent set each is cut from (``cut_from``; empty for parents)."""

    store: IngestStore
    plan_key: str
    role: str
    items: list[WorkItem]
    keys: dict[UUID, str]
    cut_from: dict[UUID, str]

    @classmethod
    def parents(cls, store: IngestStore, plan_key: str, items: list[WorkItem]) -> _Level:
        keys = {i.document_id: expected_keys(i.document_id, i.version_id, i.route)[0] for i in items}
        return cls(store, plan_key, "parent", items, keys, {})

    @classmethod
    def children(
        cls, store: IngestStore, plan_key: str, items: list[WorkItem], cut_from: dict[UUID, str]
    ) -> _Level:
        """The children of ``items``, each cut from the parent set ``cut_from`` names for it."""
        keys = {i.document_id: expected_keys(i.document_id, i.version_id, i.route)[1] for i in items}
        return cls(store, plan_key, "child", items, keys, cut_from)

    def based_on(self, item: WorkItem) -> str:
        """The parent set the item's set is cut from ("" for a parent set)."""
        return self.cut_from.get(item.document_id, "")

    def member(self, item: WorkItem) -> MemberWrite:
        """The plan's pointer at the item's set."""
        key = self.keys[item.document_id]
        return MemberWrite(
            self.plan_key, item.document_id, self.role, key, item.version_id, self.based_on(item)
        )

    def decided(self) -> tuple[list[tuple[WorkItem, MemberWrite, Reuse]], dict[str, SetSummary]]:
        """The reuse decision for each item (with the pointer it should have), and the
        summaries of the stored sets among the items' keys."""
        members = self.store.members(self.plan_key, self.role)
        summaries = self.store.set_summaries(self.keys.values())
        failed = self.store.failed_keys(self.role, self.plan_key)
        decided = []
        for item in self.items:
            member = self.member(item)
            decision = decide(
                members.get(item.document_id),
                member.set_key,
                member.based_on,
                stored=member.set_key in summaries,
                failed=(item.document.source_uri, item.document.content_hash) in failed,
            )
            decided.append((item, member, decision))
        return decided, summaries

    def jobs(self, todo: list[WorkItem]) -> Iterator[tuple[list[WorkItem], list[ChunkTask]]]:
        """The chunk jobs of ``todo``, a batch at a time; a batch's bodies (and, for children,
        the parent rows) are read when the batch is asked for."""
        child = self.role == "child"
        for batch in batches(todo, lambda item: item.document.text_length):
            bodies = self.store.document_bodies(
                [(i.document_id, i.version_id) for i in batch], compressed=True
            )
            rows = self.store.chunk_rows_many([self.based_on(i) for i in batch]) if child else None
            yield (
                batch,
                [
                    ChunkTask(
                        item.route.leveler,
                        self.keys[item.document_id],
                        item.version_id,
                        bodies[f"{item.document_id}/{item.version_id}"],
                        None if rows is None else rows.get(self.based_on(item), []),
                    )
                    for item in batch
                ],
            )


def _run(level: _Level, results: dict[str, ChunkResult], settings: Settings) -> None:
    """The reuse logic both steps share: relink stored sets, chunk the missing, record failures."""
    store, plan_key, role, keys = level.store, level.plan_key, level.role, level.keys
    decided, summaries = level.decided()
    relink: list[MemberWrite] = []
    todo: list[WorkItem] = []
    for item, member, decision in decided:
        result = results[item.document.shard]
        result.documents += 1
        result.reused += decision.reused
        if decision is Reuse.RELINK:
            relink.append(member)
        elif decision is Reuse.SKIP:
            result.skipped_failed += 1
        elif decision is Reuse.CREATE:
            todo.append(item)
    store.write_chunk_sets([], relink)

    total, started = sum(item.document.text_length for item in todo), time.perf_counter()
    with StepProgress(f"{role}_chunks {plan_key}", total, "char") as progress:
        # Read while the workers chunk the batch before (see workers.run_batches).
        for batch, outcomes in run_batches(
            chunk_document, level.jobs(todo), total, settings, key=chunk_task_key
        ):
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
                members_made.append(level.member(item))
                result.created += 1
                result.chunks_written += len(outcome)
                summaries[key] = SetSummary.of_rows(outcome)
            store.write_chunk_sets(sets, members_made)
            store.record_failures(failures)
            progress.advance(sum(item.document.text_length for item in batch))
    if todo:
        store.record_timing(role, plan_key, len(todo), total, time.perf_counter() - started)
        progress.finished(f"{len(todo)} documents chunked, {len(relink)} sets relinked")
    for item in level.items:
        key = keys.get(item.document_id)
        if key in summaries:
            results[item.document.shard].sets[key] = (item.document.source_uri, summaries[key])
