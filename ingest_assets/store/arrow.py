"""Arrow schemas of the tables' write batches, built on first use (no Dagster here).

pyarrow (and numpy, which it loads) takes about 0.2 s to import, a fifth of a no-op
``ingest run`` that writes nothing: a schema here is its column names and type names, and the
Arrow schema is made, with the import, when a batch is first written.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

__all__ = ["ArrowSchema", "arrow_table"]


def _arrow_type(name: str) -> Any:
    import pyarrow as pa

    if name.startswith("list<") and name.endswith(">"):
        return pa.list_(_arrow_type(name[5:-1]))
    types = {
        "string": pa.string(),
        "binary": pa.binary(),
        "bool": pa.bool_(),
        "int8": pa.int8(),
        "int32": pa.int32(),
        "int64": pa.int64(),
        "float32": pa.float32(),
        "timestamp": pa.timestamp("us"),
    }
    return types[name]


class ArrowSchema:
    """The columns of a batch: ``(name, type name)`` pairs (``string``, ``int64``, ``timestamp``
    (microseconds), ``list<string>``, ...), and the Arrow schema they make."""

    def __init__(self, fields: Sequence[tuple[str, str]]) -> None:
        self.fields = tuple(fields)
        self.names: tuple[str, ...] = tuple(name for name, _ in self.fields)

    @cached_property
    def arrow(self) -> Any:
        """The ``pyarrow.Schema`` (pyarrow is imported here, on first use)."""
        import pyarrow as pa

        return pa.schema([(name, _arrow_type(kind)) for name, kind in self.fields])


def arrow_table(rows: Sequence[dict[str, Any]], schema: ArrowSchema) -> Any:
    """``rows`` as one ``pyarrow.Table`` of ``schema``."""
    import pyarrow as pa

    return pa.Table.from_pylist(list(rows), schema=schema.arrow)
