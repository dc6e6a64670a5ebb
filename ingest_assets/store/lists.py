"""Many keys as one statement parameter: a JSON text that the SQL casts to a list.

DuckDB's Python client binds a list parameter element by element, and for every element it
looks for pandas (to recognise pandas' missing-value markers). Its import cache keeps no
record of a failed import, so where pandas is not installed, as here, every element searches
``sys.path`` again: binding 20,000 keys as a Python list took 1.8 s, while the same keys as
one JSON text, cast in the SQL (``?::JSON::VARCHAR[]``, ``?::JSON::UUID[]``), took 0.025 s,
and at ten copies of the corpus the list parameters cost about 18 s of a 110 s ``ingest
run``. JSON escapes every character a key can hold, so the list DuckDB reads back is the one
given (a lone surrogate, which DuckDB refuses as a list element too, is refused here as well).

Write the parameter as ``json_list(keys)`` and the placeholder with its cast:
``WHERE set_key IN (SELECT unnest(?::JSON::VARCHAR[]))``, ``list_contains(?::JSON::VARCHAR[],
uri)``, ``unnest(?::JSON::UUID[])``. ``tests/ingest/test_store.py`` holds the store to it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

__all__ = ["SCAN_FILTER_KEYS", "json_list", "keys_filter"]


def json_list(values: Iterable[object]) -> str:
    """``values`` (strings, UUIDs: anything whose ``str`` is the key) as one JSON array text."""
    return json.dumps([str(value) for value in values])


# Up to this many keys, a key list filters a table in its scan (``list_contains``: only the
# rows it keeps are read in full, but each row is compared with every key); beyond, a
# semi-join (which reads the projected columns of every row, whatever the list). At ten
# copies of the corpus the scan filter reads one set's chunks in 1.5 ms, a semi-join in 90 ms;
# at 3,000 keys both take about 150 ms.
SCAN_FILTER_KEYS = 256


def keys_filter(column: str, count: int, cast: str = "VARCHAR") -> str:
    """The condition that ``column`` is one of ``count`` keys given as one ``json_list``
    parameter, in the form that reads least for that many keys."""
    if count <= SCAN_FILTER_KEYS:
        return f"list_contains(?::JSON::{cast}[], {column})"
    return f"{column} IN (SELECT unnest(?::JSON::{cast}[]))"
