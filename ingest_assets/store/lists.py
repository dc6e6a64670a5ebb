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

__all__ = ["json_list"]


def json_list(values: Iterable[object]) -> str:
    """``values`` (strings, UUIDs: anything whose ``str`` is the key) as one JSON array text."""
    return json.dumps([str(value) for value in values])
