"""Shards: a stable split of the documents into groups written independently (no I/O).

The engine works shard by shard, and the store takes one write lock per shard on a lake, so
both need the same function of a document's id; it lives here, below both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from uuid import UUID

__all__ = ["SHARDS", "SHARD_COUNT", "shard_of", "shards_of"]

SHARD_COUNT = 8
SHARDS: tuple[str, ...] = tuple(f"{i:02d}" for i in range(SHARD_COUNT))


def shard_of(document_id: UUID | str) -> str:
    """Return the shard (``"00"``..``"07"``) of a document: a stable hash of its id."""
    return f"{int(hashlib.sha256(str(document_id).encode()).hexdigest()[:8], 16) % SHARD_COUNT:02d}"


def shards_of(document_ids: Iterable[UUID | str]) -> frozenset[str]:
    """The shards of ``document_ids``."""
    return frozenset(shard_of(d) for d in document_ids)
