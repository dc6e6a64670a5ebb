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

from ingest_assets.store.arrow import ArrowSchema

__all__ = [
    "CHUNK_COLUMNS",
    "PREVIEW_ROWS",
    "ChunkSetWrite",
    "CurrentDocument",
    "DocumentWrite",
    "FailureWrite",
    "GraphRow",
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


class GraphRow(NamedTuple):
    """What graph records need of one stored chunk (:meth:`IngestStore.graph_rows`): ids as
    text, ``provenance`` and ``metadata`` as undecoded JSON text."""

    id: str
    document_id: str
    index: int
    provenance: str
    heading_path: list[str]
    content_kind: str | None
    chunker: str
    chunker_hash: str
    level: int
    parent_id: str | None
    metadata: str
    created_at: datetime


# The columns of IngestStore.graph_rows, in order.
GRAPH_ROW_COLUMNS = GraphRow._fields

SUMMARY_COLUMNS = "s.chunk_count, s.token_total, s.tokens_counted, s.tokens_min, s.tokens_max, s.preview"

# ---------------------------------------------------------------- Arrow schemas of the tables

_UUID = "string"  # UUIDs travel as text and DuckDB casts them on insert.
SOURCES = ArrowSchema(
    [
        ("uri", "string"),
        ("path", "string"),
        ("document_id", _UUID),
        ("shard", "string"),
        ("content_hash", "string"),
        ("size", "int64"),
        ("mtime_ns", "int64"),
        ("deleted", "bool"),
        ("parse_key", "string"),
        ("version_id", _UUID),
        ("ctime_ns", "int64"),
        ("inode", "int64"),
        ("hashed_at_ns", "int64"),
        ("updated_at", "timestamp"),
    ]
)
DOCUMENTS = ArrowSchema(
    [
        ("document_id", _UUID),
        ("version_id", _UUID),
        ("source_uri", "string"),
        ("kind", "string"),
        ("title", "string"),
        ("text_length", "int64"),
        ("parsed_at", "timestamp"),
    ]
)
BODY_PARTS = ArrowSchema(
    [("document_id", _UUID), ("version_id", _UUID), ("part", "int32"), ("bytes", "binary")]
)
CHUNK_SETS = ArrowSchema(
    [
        ("set_key", "string"),
        ("document_id", _UUID),
        ("version_id", _UUID),
        ("level", "int8"),
        ("fingerprint", "string"),
        ("parent_fingerprint", "string"),
        ("chunk_count", "int32"),
        ("token_total", "int64"),
        ("tokens_counted", "int32"),
        ("tokens_min", "int32"),
        ("tokens_max", "int32"),
        ("created_at", "timestamp"),
        ("preview", "string"),
    ]
)
CHUNKS = ArrowSchema(
    [
        ("set_key", "string"),
        ("id", _UUID),
        ("document_id", _UUID),
        ("version_id", _UUID),
        ("level", "int8"),
        ("index", "int32"),
        ("text", "string"),
        ("chunker", "string"),
        ("chunker_hash", "string"),
        ("parent_id", _UUID),
        ("provenance", "string"),
        ("heading_path", "list<string>"),
        ("content_kind", "string"),
        ("token_count", "int32"),
        ("metadata", "string"),
        ("created_at", "timestamp"),
    ]
)
# The columns of a chunk row, in table order.
CHUNK_COLUMNS: tuple[str, ...] = CHUNKS.names
MEMBERS = ArrowSchema(
    [
        ("plan_key", "string"),
        ("document_id", _UUID),
        ("role", "string"),
        ("set_key", "string"),
        ("version_id", _UUID),
        ("based_on", "string"),
        ("updated_at", "timestamp"),
    ]
)
PROMOTIONS = ArrowSchema(
    [
        ("plan_key", "string"),
        ("document_id", _UUID),
        ("version_id", _UUID),
        ("parent_set", "string"),
        ("child_set", "string"),
        ("graph_set", "string"),
        ("embedding", "string"),
        ("seq", "int64"),
        ("run_id", "string"),
        ("at", "timestamp"),
    ]
)
GRAPH_SETS = ArrowSchema(
    [
        ("set_key", "string"),
        ("document_id", _UUID),
        ("version_id", _UUID),
        ("parent_set_key", "string"),
        ("child_set_key", "string"),
        ("node_count", "int32"),
        ("edge_count", "int32"),
        ("created_at", "timestamp"),
    ]
)
GRAPH_NODES = ArrowSchema(
    [("set_key", "string"), ("id", "string"), ("label", "string"), ("properties", "string")]
)
GRAPH_EDGES = ArrowSchema(
    [
        ("set_key", "string"),
        ("source_id", "string"),
        ("target_id", "string"),
        ("type", "string"),
        ("properties", "string"),
    ]
)
