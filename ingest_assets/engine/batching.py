"""Batches of a step's work: bounded in documents and bytes, so memory per round stays bounded."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

__all__ = ["BATCH_BYTES", "BATCH_DOCUMENTS", "batches", "subset"]

# A read-chunk-write round closes at this many documents or this many bytes of source (parse)
# or text (chunking, graph), whichever comes first: memory per round stays bounded whatever the
# corpus holds (ten copies of the largest file next to each other included). The bytes bound
# memory; the count bounds a round of many small documents. Each round costs its reads and writes
# whatever its size (on a lake, catalog reads for every table a statement scans, and a scan of
# the stored rows the round's keys are looked up in), so rounds are as large as memory allows.
BATCH_DOCUMENTS = 128
BATCH_BYTES = 8 * 1024 * 1024

T = TypeVar("T")


def batches(items: Sequence[T], size_of: Callable[[T], int]) -> Iterator[list[T]]:
    """Consecutive batches of at most BATCH_DOCUMENTS items and (unless one item is bigger)
    BATCH_BYTES of ``size_of``."""
    batch: list[T] = []
    total = 0
    for item in items:
        size = max(size_of(item), 0)
        if batch and (len(batch) >= BATCH_DOCUMENTS or total + size > BATCH_BYTES):
            yield batch
            batch, total = [], 0
        batch.append(item)
        total += size
    if batch:
        yield batch


def subset(shards: Iterable[str], every: Iterable[str]) -> set[str] | None:
    """``shards`` as a filter: None when they are all of ``every``."""
    wanted = set(shards)
    return None if wanted >= set(every) else wanted
