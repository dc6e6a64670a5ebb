"""A small content-addressed memory of what a store object wrote or read lately.

No Dagster here. Only values that never change under their key go in: a document version's
body (keyed by document and version id) and a chunk set's rows (a set key hashes the document
version and the chunkers that made it; a set is written once). So nothing can ever be stale and
nothing needs invalidating: a run's steps hand one batch on (parse -> parents -> children ->
graph) without reading it back, and memory stays bounded by the byte budget.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

__all__ = ["RECENT_BYTES", "Recent"]

# A few documents' worth: one batch handed from a step to the next.
RECENT_BYTES = 8 * 1024 * 1024


class Recent:
    """Values by immutable key, up to ``budget`` bytes (least recently used out first)."""

    def __init__(self, budget: int = RECENT_BYTES) -> None:
        self.budget = budget
        self._items: OrderedDict[tuple[str, ...], tuple[Any, int]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> Any:
        """The value under ``key``, or None."""
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            return item[0]

    def put(self, key: tuple[str, ...], value: Any, size: int) -> None:
        """Keep ``value`` (about ``size`` bytes) under ``key``; a value over the budget is not kept."""
        if size > self.budget:
            return
        with self._lock:
            old = self._items.pop(key, None)
            self._size += size - (old[1] if old else 0)
            self._items[key] = (value, size)
            while self._size > self.budget:
                _, (_, dropped) = self._items.popitem(last=False)
                self._size -= dropped
