"""The store's embedding tables: vectors by (text hash, model), child sets' text hashes, the sets
fully embedded, each plan's embedding stage. No Dagster here.

Each function is one read or one transaction of an :class:`~ingest_assets.store.IngestStore`.
Writes are DuckLake-compatible: rows go in through anti-joins under the write lock of their
sets' shards (a key stored meanwhile by another writer of the shard is skipped); a plan's row
is updated by its key or inserted (never upserted) by a transaction over the whole store.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ingest_assets.store.arrow import ArrowSchema, arrow_table
from ingest_assets.store.connection import retried
from ingest_assets.store.lists import json_list
from ingest_assets.store.rows import utc_now
from ingest_assets.store.store import IngestStore

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "PlanEmbeddingRow",
    "SetTexts",
    "VectorBatch",
    "chunk_text_hashes",
    "embedded_set_keys",
    "plan_embeddings",
    "set_plan_embedding",
    "stored_vectors",
    "write_embeddings",
]

_VECTORS = ArrowSchema(
    [
        ("text_hash", "string"),
        ("model", "string"),
        ("vector", "list<float32>"),
        ("created_at", "timestamp"),
    ]
)
_CHUNK_TEXTS = ArrowSchema(
    [
        ("set_key", "string"),
        ("text_mode", "string"),
        ("chunk_id", "string"),
        ("text_hash", "string"),
    ]
)


@dataclass(frozen=True)
class PlanEmbeddingRow:
    """A plan's embedding stage as the store last recorded it."""

    embedding: str
    model: str
    text_mode: str
    dimension: int


@dataclass(frozen=True)
class SetTexts:
    """The text hash of each chunk of one child set under one text mode, in index order."""

    set_key: str
    chunk_ids: list[str]
    hashes: list[str]


@dataclass(frozen=True)
class VectorBatch:
    """New vectors of one model: ``hashes[i]`` is the text of row ``i`` of ``vectors``."""

    model: str
    hashes: list[str]
    vectors: np.ndarray  # float32, one row per hash


def plan_embeddings(store: IngestStore) -> dict[str, PlanEmbeddingRow]:
    """Every plan's recorded embedding stage, by plan key."""
    rows = store.query("SELECT plan_key, embedding, model, text_mode, dimension FROM plan_embeddings")
    return {key: PlanEmbeddingRow(*rest) for key, *rest in rows}


@retried
def set_plan_embedding(
    store: IngestStore, plan_key: str, row: PlanEmbeddingRow | None, settings: Any
) -> bool:
    """Record ``plan_key``'s embedding stage (None: it has none); returns whether a row changed.

    Only a different stage is written, so a run that changes nothing writes nothing (and, asked
    first by a read, waits for no writer). The write is one transaction over the whole store (a
    plan's stage is read by every shard's steps), run again on a lake conflict.
    """
    if plan_embeddings(store).get(plan_key) == row:
        return False
    with store.transaction() as con:
        found = con.execute(
            "SELECT embedding, model, text_mode, dimension FROM plan_embeddings WHERE plan_key = ?",
            [plan_key],
        ).fetchone()
        if row is None:
            if found is None:
                return False
            con.execute("DELETE FROM plan_embeddings WHERE plan_key = ?", [plan_key])
            return True
        if found is not None and PlanEmbeddingRow(*found) == row:
            return False
        values = [
            row.embedding,
            row.model,
            row.text_mode,
            row.dimension,
            json.dumps(settings, sort_keys=True),
        ]
        if found is not None:
            con.execute(
                "UPDATE plan_embeddings SET embedding = ?, model = ?, text_mode = ?, dimension = ?, "
                "settings = ?, updated_at = ? WHERE plan_key = ?",
                [*values, utc_now(), plan_key],
            )
        else:
            con.execute(
                "INSERT INTO plan_embeddings VALUES (?, ?, ?, ?, ?, ?, ?)", [plan_key, *values, utc_now()]
            )
        return True


def _keys_present(store: IngestStore, sql: str, keys: Iterable[str], value: str) -> set[str]:
    """Which of ``keys`` ``sql`` (one of the constants below: ``value`` and the keys as its two
    parameters) finds."""
    wanted = sorted(set(keys))
    if not wanted:
        return set()
    return {r[0] for r in store.query(sql, [value, json_list(wanted)])}


_EMBEDDED_SETS = (
    "SELECT DISTINCT set_key FROM embedded_sets WHERE embedding = ? "
    "AND set_key IN (SELECT unnest(?::JSON::VARCHAR[]))"
)
_STORED_VECTORS = (
    "SELECT DISTINCT text_hash FROM vectors WHERE model = ? "
    "AND text_hash IN (SELECT unnest(?::JSON::VARCHAR[]))"
)


def embedded_set_keys(store: IngestStore, set_keys: Iterable[str], embedding: str) -> set[str]:
    """Which of ``set_keys`` have every chunk embedded under ``embedding``."""
    return _keys_present(store, _EMBEDDED_SETS, set_keys, embedding)


def chunk_text_hashes(store: IngestStore, set_keys: Iterable[str], text_mode: str) -> dict[str, SetTexts]:
    """The recorded text hashes of each of ``set_keys`` under ``text_mode`` (sets never hashed
    under it are left out)."""
    keys = sorted(set(set_keys))
    if not keys:
        return {}
    rows = store.query(
        "SELECT t.set_key, t.chunk_id::VARCHAR, t.text_hash FROM chunk_texts t "
        "JOIN chunks c ON c.set_key = t.set_key AND c.id = t.chunk_id WHERE t.text_mode = ? "
        'AND t.set_key IN (SELECT unnest(?::JSON::VARCHAR[])) ORDER BY t.set_key, c."index"',
        [text_mode, json_list(keys)],
    )
    found: dict[str, SetTexts] = {}
    for set_key, chunk_id, digest in rows:
        entry = found.setdefault(set_key, SetTexts(set_key, [], []))
        entry.chunk_ids.append(chunk_id)
        entry.hashes.append(digest)
    return found


def stored_vectors(store: IngestStore, hashes: Iterable[str], model: str) -> set[str]:
    """Which of ``hashes`` have a vector under ``model``."""
    return _keys_present(store, _STORED_VECTORS, hashes, model)


def _vector_table(batch: VectorBatch) -> Any:
    import numpy as np
    import pyarrow as pa

    rows, dimension = batch.vectors.shape
    flat = pa.array(np.ascontiguousarray(batch.vectors, dtype=np.float32).reshape(-1), type=pa.float32())
    offsets = pa.array(np.arange(0, (rows + 1) * dimension, dimension, dtype=np.int32))
    return pa.table(
        {
            "text_hash": pa.array(batch.hashes, type=pa.string()),
            "model": pa.array([batch.model] * rows, type=pa.string()),
            "vector": pa.ListArray.from_arrays(offsets, flat),
            "created_at": pa.array([utc_now()] * rows, type=pa.timestamp("us")),
        },
        schema=_VECTORS.arrow,
    )


@retried
def write_embeddings(
    store: IngestStore,
    vectors: Sequence[VectorBatch],
    texts: Sequence[SetTexts],
    text_mode: str,
    done: Sequence[str],
    embedding: str,
    shards: Iterable[str] | None = None,
) -> int:
    """In one transaction: new ``vectors``, the text hashes of child sets hashed now (``texts``,
    under ``text_mode``), and the sets now fully embedded under ``embedding`` (``done``).

    ``shards`` are the shards of those sets' documents when the caller has them at hand (the
    embeddings step's batches are of one shard); else they are read from the store.

    Each insert is an anti-join on its key, so rows another writer stored meanwhile are not
    duplicated. Returns the number of vectors inserted.
    """
    if not vectors and not texts and not done:
        return 0
    inserted = 0
    # Rows of these sets' documents; vectors are keyed by text, which other shards' writers may
    # store at once: chunk_vectors serves one of two such rows.
    locked = store.set_shards([*(t.set_key for t in texts), *done]) if shards is None else frozenset(shards)
    with store.transaction(locked) as con:
        for batch in vectors:
            if not batch.hashes:
                continue
            _vectors = _vector_table(batch)  # read by name below (a replacement scan)
            inserted += con.execute(
                "INSERT INTO vectors SELECT b.* FROM _vectors b WHERE NOT EXISTS "
                "(SELECT 1 FROM vectors v WHERE v.text_hash = b.text_hash AND v.model = b.model)"
            ).fetchone()[0]
        rows = [
            {"set_key": t.set_key, "text_mode": text_mode, "chunk_id": c, "text_hash": h}
            for t in texts
            for c, h in zip(t.chunk_ids, t.hashes, strict=True)
        ]
        if rows:
            _texts = arrow_table(rows, _CHUNK_TEXTS)
            con.execute(
                "INSERT INTO chunk_texts SELECT b.set_key, b.text_mode, b.chunk_id::UUID, b.text_hash "
                "FROM _texts b WHERE NOT EXISTS (SELECT 1 FROM chunk_texts t WHERE t.set_key = b.set_key "
                "AND t.text_mode = b.text_mode)"
            )
        if done:
            con.execute(
                "INSERT INTO embedded_sets SELECT k, ?, ? FROM (SELECT unnest(?::JSON::VARCHAR[]) AS k) "
                "WHERE k NOT IN (SELECT set_key FROM embedded_sets WHERE embedding = ?)",
                [embedding, utc_now(), json_list(sorted(set(done))), embedding],
            )
    return inserted
