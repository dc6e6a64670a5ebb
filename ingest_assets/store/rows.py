"""The rows the store reads and writes, and the Arrow schemas batches travel in.

No Dagster here. Every row type is immutable data: the engine builds them, the store writes
them in one transaction each, and reads come back as the same types (never positional tuples).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple
from uuid import UUID

import pyarrow as pa

__all__ = [
    "CHUNK_COLUMNS",
    "PREVIEW_ROWS",
    "ChunkSetWrite",
    "CurrentDocument",
    "DocumentWrite",
    "FailureWrite",
    "GraphSetWrite",
    "MemberWrite",
    "SetSummary",
    "SourceRow",
    "chunk_dict",
    "rows_size",
    "utc_now",
]

# How many first chunks of each set ``chunk_sets.preview`` holds.
PREVIEW_ROWS = 5


def utc_now() -> datetime:
    """Now in UTC without a time zone (how the store's TIMESTAMP columns hold time)."""
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class SourceRow:
    """One inbox file as the store knows it."""

    uri: str
    path: str
    document_id: UUID
    shard: str
    content_hash: str
    size: int
    mtime_ns: int
    deleted: bool = False
    parse_key: str | None = None
    version_id: UUID | None = None
    # The stat the content was hashed under and when (see engine.scan); None: unknown.
    ctime_ns: int | None = None
    inode: int | None = None
    hashed_at_ns: int | None = None


class CurrentDocument(NamedTuple):
    """A row of the ``current_documents`` view, as the steps need it."""

    document_id: UUID
    version_id: UUID
    kind: str
    shard: str
    source_uri: str
    content_hash: str
    text_length: int


@dataclass(frozen=True)
class DocumentWrite:
    """A parsed document version and the source content it came from."""

    uri: str
    parse_key: str
    document_id: UUID
    version_id: UUID
    kind: str
    title: str
    text_length: int
    body: str | bytes  # the Document JSON, or those bytes compressed with deflate_body


@dataclass(frozen=True)
class FailureWrite:
    """A failure to record against the current content of a source."""

    source_uri: str
    content_hash: str
    stage: str
    error: str
    plan_key: str | None = None
    parse_key: str | None = None  # set for parse failures: the bytes not to parse again
    document_id: UUID | None = None  # the source's document (its shard's write lock is taken)


@dataclass
class ChunkSetWrite:
    """A new chunk set with its chunks as plain rows (see :data:`CHUNK_COLUMNS`)."""

    set_key: str
    document_id: UUID
    version_id: UUID
    level: int
    fingerprint: str
    parent_fingerprint: str
    rows: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class MemberWrite:
    """Point ``plan_key`` at ``set_key`` for one document and role."""

    plan_key: str
    document_id: UUID
    role: str
    set_key: str
    version_id: UUID
    based_on: str = ""


@dataclass
class GraphSetWrite:
    """Graph node and edge records for one (parent set, child set) pair."""

    set_key: str
    document_id: UUID
    version_id: UUID
    parent_set_key: str
    child_set_key: str
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)


PreviewRow = tuple[int | None, int, str]  # token_count, index, first 60 characters


class SetSummary(NamedTuple):
    """A chunk set as its ``chunk_sets`` row sums it up: chunks; over the chunks with a token
    count, the total, how many, the smallest and the largest; and its first chunks."""

    chunk_count: int
    token_total: int
    tokens_counted: int | None
    tokens_min: int | None
    tokens_max: int | None
    preview: tuple[PreviewRow, ...] = ()

    @classmethod
    def of_rows(cls, rows: Sequence[dict[str, Any]]) -> SetSummary:
        """The summary of a set of chunk rows (see :data:`CHUNK_COLUMNS`)."""
        counts = [r["token_count"] for r in rows if r.get("token_count") is not None]
        # Rows are checked by the insert that follows (a bad one fails it), not here.
        first = sorted(rows, key=lambda r: r.get("index") or 0)[:PREVIEW_ROWS]
        return cls(
            len(rows),
            sum(counts),
            len(counts),
            min(counts, default=None),
            max(counts, default=None),
            tuple((r.get("token_count"), r.get("index"), str(r.get("text", ""))[:60]) for r in first),
        )

    @classmethod
    def stored(cls, *columns: Any) -> SetSummary:
        """The summary from its ``chunk_sets`` columns (:data:`SUMMARY_COLUMNS`)."""
        *numbers, preview = columns
        return cls(*numbers, tuple(tuple(row) for row in json.loads(preview or "[]")))  # type: ignore[arg-type]

    def columns(self) -> dict[str, Any]:
        """The ``chunk_sets`` columns of this summary."""
        return {**self._asdict(), "preview": json.dumps(self.preview, ensure_ascii=False)}


def chunk_dict(row: dict[str, Any]) -> dict[str, Any]:
    """A chunk row as written (:data:`CHUNK_COLUMNS`) as ``IngestStore.chunk_rows_many`` reads one back."""
    return {
        "id": UUID(row["id"]),
        "document_id": UUID(row["document_id"]),
        "index": row["index"],
        "text": row["text"],
        "provenance": json.loads(row["provenance"]),
        "heading_path": list(row["heading_path"]),
        "content_kind": row["content_kind"],
        "chunker": row["chunker"],
        "chunker_hash": row["chunker_hash"],
        "level": row["level"],
        "parent_id": None if row["parent_id"] is None else UUID(row["parent_id"]),
        "metadata": json.loads(row["metadata"]),
        "created_at": row["created_at"],
    }


def rows_size(rows: Sequence[dict[str, Any]]) -> int:
    """About the memory of a set's rows: their text plus a fixed cost per row."""
    return sum(len(row.get("text") or "") + 400 for row in rows)


# The columns of IngestStore.graph_rows, in order.
GRAPH_ROW_COLUMNS = (
    "id",
    "document_id",
    "index",
    "provenance",
    "heading_path",
    "content_kind",
    "chunker",
    "chunker_hash",
    "level",
    "parent_id",
    "metadata",
    "created_at",
)

SUMMARY_COLUMNS = "s.chunk_count, s.token_total, s.tokens_counted, s.tokens_min, s.tokens_max, s.preview"

# ---------------------------------------------------------------- Arrow schemas of the tables

_UUID = pa.string()  # UUIDs travel as text and DuckDB casts them on insert.
SOURCES = pa.schema(
    [
        ("uri", pa.string()),
        ("path", pa.string()),
        ("document_id", _UUID),
        ("shard", pa.string()),
        ("content_hash", pa.string()),
        ("size", pa.int64()),
        ("mtime_ns", pa.int64()),
        ("deleted", pa.bool_()),
        ("parse_key", pa.string()),
        ("version_id", _UUID),
        ("ctime_ns", pa.int64()),
        ("inode", pa.int64()),
        ("hashed_at_ns", pa.int64()),
        ("updated_at", pa.timestamp("us")),
    ]
)
DOCUMENTS = pa.schema(
    [
        ("document_id", _UUID),
        ("version_id", _UUID),
        ("source_uri", pa.string()),
        ("kind", pa.string()),
        ("title", pa.string()),
        ("text_length", pa.int64()),
        ("parsed_at", pa.timestamp("us")),
    ]
)
BODY_PARTS = pa.schema(
    [("document_id", _UUID), ("version_id", _UUID), ("part", pa.int32()), ("bytes", pa.binary())]
)
CHUNK_SETS = pa.schema(
    [
        ("set_key", pa.string()),
        ("document_id", _UUID),
        ("version_id", _UUID),
        ("level", pa.int8()),
        ("fingerprint", pa.string()),
        ("parent_fingerprint", pa.string()),
        ("chunk_count", pa.int32()),
        ("token_total", pa.int64()),
        ("tokens_counted", pa.int32()),
        ("tokens_min", pa.int32()),
        ("tokens_max", pa.int32()),
        ("created_at", pa.timestamp("us")),
        ("preview", pa.string()),
    ]
)
CHUNKS = pa.schema(
    [
        ("set_key", pa.string()),
        ("id", _UUID),
        ("document_id", _UUID),
        ("version_id", _UUID),
        ("level", pa.int8()),
        ("index", pa.int32()),
        ("text", pa.string()),
        ("chunker", pa.string()),
        ("chunker_hash", pa.string()),
        ("parent_id", _UUID),
        ("provenance", pa.string()),
        ("heading_path", pa.list_(pa.string())),
        ("content_kind", pa.string()),
        ("token_count", pa.int32()),
        ("metadata", pa.string()),
        ("created_at", pa.timestamp("us")),
    ]
)
# The columns of a chunk row, in table order.
CHUNK_COLUMNS: tuple[str, ...] = tuple(CHUNKS.names)
MEMBERS = pa.schema(
    [
        ("plan_key", pa.string()),
        ("document_id", _UUID),
        ("role", pa.string()),
        ("set_key", pa.string()),
        ("version_id", _UUID),
        ("based_on", pa.string()),
        ("updated_at", pa.timestamp("us")),
    ]
)
PROMOTIONS = pa.schema(
    [
        ("plan_key", pa.string()),
        ("document_id", _UUID),
        ("version_id", _UUID),
        ("parent_set", pa.string()),
        ("child_set", pa.string()),
        ("graph_set", pa.string()),
        ("embedding", pa.string()),
        ("seq", pa.int64()),
        ("run_id", pa.string()),
        ("at", pa.timestamp("us")),
    ]
)
GRAPH_SETS = pa.schema(
    [
        ("set_key", pa.string()),
        ("document_id", _UUID),
        ("version_id", _UUID),
        ("parent_set_key", pa.string()),
        ("child_set_key", pa.string()),
        ("node_count", pa.int32()),
        ("edge_count", pa.int32()),
        ("created_at", pa.timestamp("us")),
    ]
)
GRAPH_NODES = pa.schema(
    [("set_key", pa.string()), ("id", pa.string()), ("label", pa.string()), ("properties", pa.string())]
)
GRAPH_EDGES = pa.schema(
    [
        ("set_key", pa.string()),
        ("source_id", pa.string()),
        ("target_id", pa.string()),
        ("type", pa.string()),
        ("properties", pa.string()),
    ]
)
