"""The embeddings step: a vector for every current child chunk of a plan that embeds, computing
only texts that were never embedded under the plan's model (no Dagster here).

Reuse works at two levels. A child set embedded before under the plan's embedding (model
fingerprint and text mode) is done without reading it. For the other sets, each chunk's
embedded text is hashed (SHA-256) and only hashes without a vector under the model go to the
model: after a child-size change, children whose spans did not move have the same text and
keep their vectors; after an edit, only the edited document's new texts are embedded.

The model runs in the worker processes (:mod:`.workers`), in calls of at most
:data:`EMBED_TEXTS` texts and :data:`EMBED_BYTES` bytes; every store read and write stays in
the engine's process, one short transaction per batch of documents.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ingest_assets.embeddings import EmbeddingPlan, embedded_row_text, load_model, text_hash
from ingest_assets.engine.batching import batches
from ingest_assets.engine.chunk import WorkItem
from ingest_assets.engine.keys import child_set_key, parent_set_key
from ingest_assets.engine.progress import StepProgress
from ingest_assets.engine.results import EmbedResult
from ingest_assets.engine.workers import run_batches
from ingest_assets.plans import Plan
from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore
from ingest_assets.store.vectors import (
    PlanEmbeddingRow,
    SetTexts,
    VectorBatch,
    chunk_text_hashes,
    embedded_set_keys,
    set_plan_embedding,
    stored_vectors,
    write_embeddings,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = ["EMBED_BYTES", "EMBED_TEXTS", "EmbedTask", "embed_children", "embed_texts", "plan_row"]

# One model call: at most this many texts and this many bytes of text (memory stays bounded).
EMBED_TEXTS = 256
EMBED_BYTES = 512 * 1024


@dataclass(frozen=True)
class EmbedTask:
    """Embed ``texts`` with the model of ``spec`` (loaded once per worker process)."""

    spec: str
    texts: list[str]


def embed_texts(task: EmbedTask) -> tuple[np.ndarray, float] | str:
    """The vectors of ``task.texts`` (float32, one row each) and the model's seconds, or the
    error message (a model that fails fails every batch: the step raises it)."""
    try:
        model = load_model(task.spec)
        started = time.perf_counter()
        vectors = model.embed_batch(task.texts)
        return vectors, time.perf_counter() - started
    except Exception as error:
        return f"embedding model {task.spec!r} failed: {error}"


def plan_row(embedding: EmbeddingPlan) -> PlanEmbeddingRow:
    """The ``plan_embeddings`` row of a plan's embedding stage."""
    return PlanEmbeddingRow(
        embedding.key, embedding.model_fingerprint, embedding.text, embedding.model.dimension
    )


def _calls(texts: list[tuple[str, str]]) -> Iterator[list[tuple[str, str]]]:
    call: list[tuple[str, str]] = []
    size = 0
    for digest, text in texts:
        length = len(text.encode("utf-8"))
        if call and (len(call) >= EMBED_TEXTS or size + length > EMBED_BYTES):
            yield call
            call, size = [], 0
        call.append((digest, text))
        size += length
    if call:
        yield call


def embed_children(
    store: IngestStore, plan: Plan, items: list[WorkItem], unrouted: dict[str, int], settings: Settings
) -> dict[str, EmbedResult]:
    """Give every current child chunk of ``items`` a vector under ``plan.embedding``; record the
    plan's embedding stage (a plan without one has its record removed and embeds nothing).

    Raises:
        RuntimeError: The model failed (the message names it); what was written stays.
    """
    results = {shard: EmbedResult(unrouted=n) for shard, n in unrouted.items()}
    embedding = plan.embedding
    if embedding is None:
        set_plan_embedding(store, plan.key, None, None)
        return results
    set_plan_embedding(store, plan.key, plan_row(embedding), embedding.settings())
    by_role = store.members_by_role(plan.key)
    parents, children = by_role["parent"], by_role["child"]
    ready: list[tuple[WorkItem, str]] = []
    for item in items:
        result = results[item.document.shard]
        result.documents += 1
        parent = parent_set_key(item.document_id, item.version_id, item.route.parent_fingerprint)
        child = child_set_key(
            item.document_id, item.version_id, item.route.child_fingerprint, item.route.parent_fingerprint
        )
        if parents.get(item.document_id, ("",))[0] == parent and children.get(item.document_id) == (
            child,
            parent,
        ):
            ready.append((item, child))
        else:
            result.waiting += 1
    done = embedded_set_keys(store, [key for _, key in ready], embedding.key)
    todo = [(item, key) for item, key in ready if key not in done]
    for item, key in ready:
        if key in done:
            results[item.document.shard].sets_reused += 1
    model, mode = embedding.model_fingerprint, embedding.text
    queued: set[str] = set()  # hashes this step sends to the model, so none goes twice

    Meta = tuple[list[tuple[WorkItem, str]], list[SetTexts], list[str], list[str]]

    def work() -> Iterator[tuple[Meta, list[EmbedTask]]]:
        # Batches never cross shards, so each partition's figures are its own.
        by_shard: dict[str, list[tuple[WorkItem, str]]] = {}
        for entry in todo:
            by_shard.setdefault(entry[0].document.shard, []).append(entry)
        for shard in sorted(by_shard):
            for batch in batches(by_shard[shard], lambda entry: entry[0].document.text_length):
                yield _batch_work(store, embedding, batch, queued)

    size, started = sum(item.document.text_length for item, _ in todo), time.perf_counter()
    texts = 0
    # A building key serves nobody yet: its documents are promoted together at the step's end,
    # which spares a promotion per batch; a live key's are served batch by batch.
    live = store.is_live(plan.key)
    with StepProgress(f"embeddings {plan.key}", size, "char") as progress:
        for (batch, fresh, reused, new), outcomes in run_batches(embed_texts, work(), size, settings):
            vectors = []
            seconds = 0.0
            for outcome in outcomes:
                if isinstance(outcome, str):
                    raise RuntimeError(f"plan {plan.key}: {outcome}")
                vectors.append(outcome[0])
                seconds += outcome[1]
            import numpy as np  # with the model, not with this module (see store/arrow.py)

            empty = (0, embedding.model.dimension)
            stacked = np.concatenate(vectors) if vectors else np.zeros(empty, np.float32)
            write_embeddings(
                store,
                [VectorBatch(model, new, stacked)],
                fresh,
                mode,
                [key for _, key in batch],
                embedding.key,
                shards={batch[0][0].document.shard},  # a batch is of one shard
            )
            if live:  # the batch's documents are served now if the plan has the rest of them
                store.publish(plan.key, plan.kinds, embedding.key, [item.document_id for item, _ in batch])
            result = results[batch[0][0].document.shard]  # a batch is of one shard
            result.sets_embedded += len(batch)
            result.texts_embedded += len(new)
            result.texts_reused += len(reused)
            result.embed_calls += len(outcomes)
            result.embedding_seconds += seconds
            texts += len(new)
            progress.advance(sum(item.document.text_length for item, _ in batch), f"{texts} texts embedded")
    if todo:
        progress.finished(f"{len(todo)} child sets, {texts} texts embedded")
        # The step's wall time beside the model's own (each result's embedding_seconds).
        store.record_timing("embed", plan.key, len(todo), size, time.perf_counter() - started)
    return results


def _batch_work(
    store: IngestStore,
    embedding: EmbeddingPlan,
    batch: list[tuple[WorkItem, str]],
    queued: set[str],
) -> tuple[tuple[list[tuple[WorkItem, str]], list[SetTexts], list[str], list[str]], list[EmbedTask]]:
    """Read and hash one batch of child sets: the sets hashed now, the hashes reused and sent to
    the model, and the model calls (``queued``: hashes sent earlier in the step, updated)."""
    model, mode = embedding.model_fingerprint, embedding.text
    keys = [key for _, key in batch]
    hashed = chunk_text_hashes(store, keys, mode)
    fresh: list[SetTexts] = []
    texts: dict[str, str] = {}
    rows = store.embedding_rows([k for k in keys if k not in hashed])
    for key in keys:
        if key in hashed:
            continue
        embedded = [_row_text(row, mode) for row in rows.get(key, [])]
        digests = [text_hash(text) for text in embedded]
        fresh.append(SetTexts(key, [row[0] for row in rows.get(key, [])], digests))
        texts.update(zip(digests, embedded, strict=True))
    needed = {h for t in (*hashed.values(), *fresh) for h in t.hashes}
    have = stored_vectors(store, needed, model)
    new = sorted(h for h in needed if h not in have and h not in queued)
    # A set hashed before (under another model) lacks texts only for hashes this model lacks.
    for key, entry in hashed.items():
        if any(h in new and h not in texts for h in entry.hashes):
            texts.update(_texts_of(store, key, mode))
    queued.update(new)
    calls = list(_calls([(h, texts[h]) for h in new]))
    meta = (batch, fresh, sorted(needed - set(new)), [h for call in calls for h, _ in call])
    return meta, [EmbedTask(embedding.model.spec, [text for _, text in call]) for call in calls]


def _texts_of(store: IngestStore, set_key: str, mode: str) -> dict[str, str]:
    """The embedded texts of ``set_key``'s chunks, by hash (read from its chunks)."""
    texts = [_row_text(row, mode) for row in store.embedding_rows([set_key]).get(set_key, [])]
    return {text_hash(text): text for text in texts}


def _row_text(row: tuple[str, str, list[str], str], mode: str) -> str:
    """The embedded text of a row of :meth:`~ingest_assets.store.IngestStore.embedding_rows`."""
    _, text, heading_path, metadata = row
    return embedded_row_text(text, heading_path, json.loads(metadata) if metadata else None, mode)
