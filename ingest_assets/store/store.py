"""The DuckDB store: versioned documents, chunk sets, plan membership, graph records, failures.

No Dagster here: the engine, the Dagster resource, the CLI and benchmarks all use this module.

Contracts:
    * A chunk set is written once, with all its chunks, in the transaction that first points a
      plan at it; a reader sees all of a document's new rows or none of them.
    * Batches go in as Arrow tables (one INSERT ... SELECT per table), never row by row; every
      value is a bound parameter or an Arrow column.
    * DuckDB allows one writing process per file: :meth:`IngestStore.connect` retries a locked
      file with backoff, and callers keep connections short (chunk first, then write).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager as ContextManager
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple
from uuid import UUID

import duckdb
import pyarrow as pa

from ingest_assets.store import host

__all__ = [
    "PREVIEW_ROWS",
    "SCHEMA_VERSION",
    "ChunkSetWrite",
    "DocumentWrite",
    "FailureWrite",
    "GraphSetWrite",
    "IngestStore",
    "MemberWrite",
    "SetSummary",
    "SourceRow",
    "StoreError",
    "deflate_body",
    "inflate_body",
]

SCHEMA_VERSION = 5
# How many first chunks of each set ``chunk_sets.preview`` holds.
PREVIEW_ROWS = 5
# Upgrades from older schema versions: version -> SQL that brings it to version + 1.
MIGRATIONS: dict[int, str] = {
    # 5: chunk sets keep a preview of their first chunks, so a step's metadata reads no chunk.
    4: "ALTER TABLE chunk_sets ADD COLUMN preview JSON; "
    "UPDATE chunk_sets SET preview = p.preview "
    'FROM (SELECT set_key, to_json(list(json_array(token_count, "index", left(text, 60)) '
    '      ORDER BY "index")) AS preview FROM chunks WHERE "index" < '
    f"{PREVIEW_ROWS} GROUP BY set_key) p "
    "WHERE chunk_sets.set_key = p.set_key; "
    "UPDATE chunk_sets SET preview = '[]' WHERE preview IS NULL;",
    # 4: sources remember the stat they were hashed under, so a settled, unchanged file is not
    # read again; document bodies move to small parts (a checkpoint after a parse rewrote every
    # body); chunk sets carry their token stats (metadata no longer scans every chunk). Bodies
    # are cut at multiples of 3 bytes through base64, DuckDB having no substring of a BLOB.
    3: "ALTER TABLE sources ADD COLUMN ctime_ns BIGINT; "
    "ALTER TABLE sources ADD COLUMN inode BIGINT; "
    "ALTER TABLE sources ADD COLUMN hashed_at_ns BIGINT; "
    "{table:document_body_parts} "
    "INSERT INTO document_body_parts "
    "SELECT document_id, version_id, i::INTEGER, from_base64(substr(to_base64(body), i * 2664 + 1, 2664)) "
    "FROM (SELECT document_id, version_id, body, "
    "      unnest(range(0, greatest(1, (octet_length(body) + 1997) // 1998))) AS i FROM documents); "
    "ALTER TABLE documents DROP COLUMN body; "
    "ALTER TABLE chunk_sets ADD COLUMN tokens_counted INTEGER; "
    "ALTER TABLE chunk_sets ADD COLUMN tokens_min INTEGER; "
    "ALTER TABLE chunk_sets ADD COLUMN tokens_max INTEGER; "
    "UPDATE chunk_sets SET tokens_counted = a.n, tokens_min = a.low, tokens_max = a.high "
    "FROM (SELECT set_key, count(token_count) AS n, min(token_count) AS low, max(token_count) AS high "
    "      FROM chunks GROUP BY set_key) a WHERE chunk_sets.set_key = a.set_key;",
    # 3: chunk nodes are stored without their text (the chunks table has it; writing it twice
    # more was a third of a full run's graph step) and the graph_nodes view joins it back. Older
    # rows that hold the text get the same text from the join.
    2: "DROP VIEW graph_nodes; {view:graph_nodes}",
    # 2: document bodies become zlib-compressed BLOBs (a body column of JSON text made every
    # batch read scan and cache all of them: memory grew with the corpus). Old bodies stay as
    # plain JSON bytes, which inflate_body tells apart; sets verified once are remembered.
    1: "ALTER TABLE documents ALTER COLUMN body SET DATA TYPE BLOB USING encode(body::VARCHAR); "
    "CREATE TABLE IF NOT EXISTS verified_sets (set_key VARCHAR PRIMARY KEY, verified_at TIMESTAMP NOT NULL);",
}


def _with_views(sql: str) -> str:
    """``sql`` with each ``{view:<name>}`` / ``{table:<name>}`` replaced by that view's or
    table's definition in schema.sql (so a migration creates exactly what a new store has)."""
    schema = resources.files("ingest_assets.store").joinpath("schema.sql").read_text()

    def definition(match: re.Match[str]) -> str:
        start = schema.index(f"CREATE {match[1].upper()} {match[2]} ")
        return schema[start : schema.index(";", start) + 1]

    return re.sub(r"\{(view|table):(\w+)\}", definition, sql)


# DuckDB's own default buffer pool (80% of RAM) keeps every page a step wrote or read until its
# connection closes, so a run's memory grew with the corpus (1.9x on ten copies); with a cap,
# pages are evicted (and big operators spill to disk): 1.35x on ten copies (docs/benchmarks.md).
DEFAULT_DUCKDB_MEMORY = "160MB"
# DuckDB's threads in a pipeline process. The store's statements are small (a step reads and
# writes one batch at a time) and the parsing and chunking run in worker processes: DuckDB's
# default pool (a thread per CPU) only added scheduling to every statement (10 ms of an edit's
# 150) and competed with the workers, and a full run took as long with one thread.
DEFAULT_DUCKDB_THREADS = "1"


def _duckdb_config() -> dict[str, str]:
    """DuckDB settings: ``INGEST_DUCKDB_MEMORY`` (default 160MB) caps its buffer pool and
    ``INGEST_DUCKDB_THREADS`` (default 1) sets its threads."""
    return {
        "memory_limit": os.environ.get("INGEST_DUCKDB_MEMORY") or DEFAULT_DUCKDB_MEMORY,
        "threads": os.environ.get("INGEST_DUCKDB_THREADS") or DEFAULT_DUCKDB_THREADS,
    }


def deflate_body(body: str) -> bytes:
    """Compress a document body for the store (level 1: fast, and JSON text shrinks about 8x)."""
    return zlib.compress(body.encode("utf-8"), 1)


def inflate_body(blob: bytes) -> str:
    """Return a stored body as text: zlib data, or plain JSON written before schema 2."""
    data = bytes(blob)
    return (zlib.decompress(data) if data[:1] != b"{" else data).decode("utf-8")


_CHUNK_COLUMNS = (
    "set_key",
    "id",
    "document_id",
    "version_id",
    "level",
    "index",
    "text",
    "chunker",
    "chunker_hash",
    "parent_id",
    "provenance",
    "heading_path",
    "content_kind",
    "token_count",
    "metadata",
    "created_at",
)


class StoreError(RuntimeError):
    """The store file cannot be used as it is; the message says why and what to do."""


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
    # The stat the content was hashed under and when (see IngestEngine.scan); None: unknown.
    ctime_ns: int | None = None
    inode: int | None = None
    hashed_at_ns: int | None = None


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


@dataclass
class ChunkSetWrite:
    """A new chunk set with its chunks as plain rows (see ``_CHUNK_COLUMNS``)."""

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


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


# Writes this process made (by any store object), by what they change: a session's cached
# read (IngestStore._cached) is good while the count of its kind stands. While a session is
# open this process holds the file's lock, so no other process can change the file under it.
_writes = {"documents": 0, "members": 0, "failures": 0, "plans": 0, "sets": 0}
_writes_lock = threading.Lock()


@contextmanager
def _writing(*kinds: str) -> Iterator[None]:
    """Count a write of ``kinds`` when the block ends, committed or not."""
    try:
        yield
    finally:
        with _writes_lock:
            for kind in kinds:
                _writes[kind] += 1


# Inserts of at most this many rows go in as one VALUES list of parameters: building and
# scanning an Arrow table costs more than the rows themselves then (0.4-0.9 ms an insert).
_VALUES_ROWS = 4

# The largest body part: DuckDB keeps strings this small inline in its segments (a 4 kB part
# already went to overflow blocks and made checkpoints slower again). A multiple of 3, as the
# schema 4 migration cuts through base64.
BODY_PART_BYTES = 1998


def _compressed(document: DocumentWrite) -> bytes:
    """A document's body as the store keeps it (see :func:`deflate_body`)."""
    return document.body if isinstance(document.body, bytes) else deflate_body(document.body)


# A current_documents row: document_id, version_id, kind, shard, source_uri, content_hash,
# text_length.
CurrentRow = tuple[UUID, UUID, str, str, str, str, int]


def _current_rows(
    sources: Sequence[SourceRow], documents: Sequence[DocumentWrite], changed: set[str]
) -> dict[str, CurrentRow | None] | None:
    """The ``current_documents`` row (None: none) of each of ``sources`` once they and the
    ``documents`` parsed from them are written; None when a source in ``changed`` (the URIs
    the write points elsewhere) is not among them, so its row must be read again."""
    parsed = {d.uri: d for d in documents}
    rows: dict[str, CurrentRow | None] = {}
    for row in sources:
        if row.deleted or row.version_id is None:
            rows[row.uri] = None
        elif row.uri in parsed:
            d = parsed[row.uri]
            rows[row.uri] = (
                row.document_id, row.version_id, d.kind, row.shard, row.uri, row.content_hash, d.text_length
            )  # fmt: skip
    return None if changed - rows.keys() else rows


def _body_parts(documents: Sequence[DocumentWrite]) -> list[dict[str, Any]]:
    """The ``document_body_parts`` rows of ``documents``: each compressed body in order."""
    rows = []
    for d in documents:
        body = _compressed(d)
        document_id, version_id = str(d.document_id), str(d.version_id)
        for part, start in enumerate(range(0, max(len(body), 1), BODY_PART_BYTES)):
            rows.append(
                {
                    "document_id": document_id,
                    "version_id": version_id,
                    "part": part,
                    "bytes": body[start : start + BODY_PART_BYTES],
                }
            )
    return rows


class _Recent:
    """Content the store wrote or read lately, by key, up to ``budget`` bytes (oldest out first).

    Only what never changes under its key goes in: a document version's body, and a chunk
    set's rows (a set key hashes the document version and the chunkers that made it, and a set
    is written once). So a step reads none of what the step before it wrote (a run's parse ->
    parents -> children -> graph), with nothing to invalidate. Shared by the threads of a store.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._items: OrderedDict[tuple[str, ...], tuple[Any, int]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> Any:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            return item[0]

    def put(self, key: tuple[str, ...], value: Any, size: int) -> None:
        if size > self.budget:
            return
        with self._lock:
            old = self._items.pop(key, None)
            self._size += size - (old[1] if old else 0)
            self._items[key] = (value, size)
            while self._size > self.budget:
                _, (_, dropped) = self._items.popitem(last=False)
                self._size -= dropped


# What a store keeps of its latest writes and reads (see _Recent): a few documents' worth, so a
# run's steps pass one batch on without reading it back; memory stays bounded.
RECENT_BYTES = 8 * 1024 * 1024


# The columns of IngestStore.graph_rows, in order.
_GRAPH_ROW_COLUMNS = (
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


def _chunk_dict(row: dict[str, Any]) -> dict[str, Any]:
    """A written chunk row as :meth:`IngestStore.chunk_rows_many` reads one back."""
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


def _rows_size(rows: Sequence[dict[str, Any]]) -> int:
    """About the memory of a set's rows: their text plus a fixed cost per row."""
    return sum(len(row.get("text") or "") + 400 for row in rows)


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
        """The summary of a set of chunk rows (see ``_CHUNK_COLUMNS``)."""
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
        """The summary from its ``chunk_sets`` columns (``_SUMMARY_COLUMNS``)."""
        *numbers, preview = columns
        return cls(*numbers, tuple(tuple(row) for row in json.loads(preview or "[]")))  # type: ignore[arg-type]

    def columns(self) -> dict[str, Any]:
        """The ``chunk_sets`` columns of this summary."""
        return {**self._asdict(), "preview": json.dumps(self.preview, ensure_ascii=False)}


_SUMMARY_COLUMNS = "s.chunk_count, s.token_total, s.tokens_counted, s.tokens_min, s.tokens_max, s.preview"


def _open_error(path: Path, error: Exception) -> str:
    """A message for a store file that cannot be opened or written, other than a lock."""
    text = str(error)
    lower = text.lower()
    if any(w in lower for w in ("permission denied", "not permitted", "read-only", "read only")):
        return (
            f"{path}: the store cannot be written ({text.strip()}); make the file and its folder "
            "writable by this user, or pass another --db / INGEST_DUCKDB"
        )
    if "not a valid duckdb" in lower or "database file" in lower or "serializ" in lower:
        return (
            f"{path}: is not a DuckDB database this DuckDB {duckdb.__version__} can read "
            f"({text.strip()}); pass another --db / INGEST_DUCKDB (nothing was written to it)"
        )
    return f"{path}: cannot open the store ({text.strip()}); check the path given to --db / INGEST_DUCKDB"


def _is_lock_error(error: Exception) -> bool:
    text = str(error).lower()
    return "lock" in text or "conflicting" in text or "being used by another process" in text


class IngestStore:
    """A DuckDB file holding every parsed version, chunk set and graph record.

    Args:
        path: The database file; created (with its folder) on first write.
        lock_timeout: Seconds to keep retrying while another process holds the file.
        connect: Optional factory for connections (the Dagster resource passes dagster-duckdb's);
            it must return a context manager yielding a writable connection.
    """

    def __init__(self, path: str | Path, *, lock_timeout: float = 60.0, connect: Any = None) -> None:
        self.path = Path(path)
        self.lock_timeout = lock_timeout
        self._connect_factory = connect
        self._schema_checked = False
        self._folder_ready = False
        # The connection of the open session (see :meth:`session`), per thread: DuckDB
        # connections are not shared between threads.
        self._local = threading.local()
        self._recent = _Recent(RECENT_BYTES)

    # ------------------------------------------------------------------ connections, schema

    @contextmanager
    def session(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Keep one connection open for the calls made inside this block (one engine step).

        Every :meth:`connect` / :meth:`transaction` inside the block uses it instead of opening
        and closing the file per call; nested sessions reuse the outer one. The connection holds
        DuckDB's file lock, so callers keep a session to one step and close it between steps:
        another process waiting on the lock gets in then.

        Raises:
            StoreError: As :meth:`connect`.
        """
        current = getattr(self._local, "con", None)
        if current is not None:
            yield current
            return
        with self._open() as con:
            self._local.con = con
            self._local.cache = {}  # see _cached
            try:
                yield con
            finally:
                self._local.con = None
                self._local.cache = {}

    @contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Yield a writable connection with the schema in place, retrying a locked file.

        Inside :meth:`session` this is the session's connection (left open); otherwise a new
        connection, closed on exit.

        Raises:
            StoreError: The file stayed locked past ``lock_timeout`` or has a schema this code
                cannot use.
        """
        current = getattr(self._local, "con", None)
        if current is not None:
            yield current
            return
        with self._open() as con:
            yield con

    @contextmanager
    def _open(self) -> Iterator[duckdb.DuckDBPyConnection]:
        if self._connect_factory is not None:
            with self._connect_factory() as con:
                self._ensure_schema(con)
                yield con
            return
        if self.path.is_dir():
            raise StoreError(f"{self.path}: is a folder, not a DuckDB file; pass a file path to --db")
        if not self._folder_ready:  # once per store object, not per connection
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StoreError(
                    f"{self.path}: cannot create the folder of the store ({error.strerror}); "
                    "pass a writable path to --db or set INGEST_DUCKDB"
                ) from error
            self._folder_ready = True
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.05
        while True:
            try:
                con = host.attach(self.path, _duckdb_config())
                break
            except duckdb.Error as error:
                if not _is_lock_error(error):
                    raise StoreError(_open_error(self.path, error)) from error
                if time.monotonic() > deadline:
                    raise StoreError(
                        f"{self.path}: cannot open the store ({error}); another process holds it "
                        f"longer than {self.lock_timeout:.0f} s: wait for it, or raise lock_timeout"
                    ) from error
                time.sleep(delay)
                delay = min(delay * 2, 1.0)
        try:
            self._ensure_schema(con)
            yield con
        finally:
            host.detach(self.path, con)

    def check(self) -> None:
        """Open the store once (creating it, or migrating an older schema) so a bad file fails early.

        Raises:
            StoreError: The file cannot be opened for writing, is not an ingest store, or has a
                schema this code cannot use; the message says what to do.
        """
        with self.connect() as con:
            try:
                # A read-only file can be opened and read; the first write would fail mid-run.
                con.execute("CHECKPOINT")
            except duckdb.Error as error:
                raise StoreError(_open_error(self.path, error)) from error

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Yield a connection inside one transaction: committed on success, rolled back on error."""
        with self.connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def _ensure_schema(self, con: duckdb.DuckDBPyConnection) -> None:
        if self._schema_checked:
            return
        try:
            # The usual case in one cheap query: listing the tables first made DuckDB load every
            # table's metadata (5-9 ms per connection, a tenth of a no-op run).
            version = con.execute("SELECT max(version) FROM schema_version").fetchone()[0]
            versioned = True
        except duckdb.CatalogException:
            versioned = False
        if not versioned:
            tables = "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()"
            if con.execute(tables).fetchone()[0]:
                raise StoreError(
                    f"{self.path}: holds tables but no schema_version table, so it was not written by "
                    "ingest_assets; point --db / INGEST_DUCKDB at another file"
                )
            schema = resources.files("ingest_assets.store").joinpath("schema.sql").read_text()
            con.execute("BEGIN TRANSACTION")
            con.execute(schema)
            con.execute("INSERT INTO schema_version VALUES (?, ?)", [SCHEMA_VERSION, _now()])
            con.execute("COMMIT")
        else:
            if version is None or version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: schema version {version} is unknown to this code (it knows "
                    f"{SCHEMA_VERSION}); upgrade the project or use another database file"
                )
            while version < SCHEMA_VERSION:
                if version not in MIGRATIONS:
                    raise StoreError(
                        f"{self.path}: schema version {version} has no migration to "
                        f"{SCHEMA_VERSION}; re-ingest into a new database file"
                    )
                con.execute("BEGIN TRANSACTION")
                try:
                    con.execute(_with_views(MIGRATIONS[version]))
                    con.execute("INSERT INTO schema_version VALUES (?, ?)", [version + 1, _now()])
                    con.execute("COMMIT")
                except duckdb.Error as error:
                    con.execute("ROLLBACK")
                    raise StoreError(
                        f"{self.path}: the migration from schema version {version} to {version + 1} "
                        f"failed ({error}); it was rolled back and the file is unchanged: report it, "
                        "or re-ingest into a new database file"
                    ) from error
                version += 1
        self._schema_checked = True

    @staticmethod
    def _insert(
        con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[dict[str, Any]], schema: pa.Schema
    ) -> None:
        """Insert ``rows`` through one Arrow table, or a handful as one VALUES list of bound
        parameters; an empty batch is a no-op."""
        if not rows:
            return
        columns = ", ".join(f'"{name}"' for name in schema.names)
        if len(rows) <= _VALUES_ROWS:
            # The insert casts each value to its column's type, as it casts the Arrow columns.
            marks = "(" + ", ".join("?" for _ in schema.names) + ")"
            placeholders = ", ".join(marks for _ in rows)
            con.execute(
                f"INSERT INTO {table} ({columns}) VALUES {placeholders}",
                [row.get(name) for row in rows for name in schema.names],
            )
            return
        _batch = pa.Table.from_pylist(list(rows), schema=schema)  # read by name in the SQL below
        # DuckDB finds the local Arrow table by its name (a replacement scan): about 1 ms less
        # per insert than registering and unregistering a view, which most small writes are.
        con.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM _batch")

    # ------------------------------------------------------------------ plans

    def sync_plans(self, plans: Iterable[tuple[str, str, str, dict[str, Any]]]) -> list[str]:
        """Make exactly ``plans`` live: (plan_key, name, fingerprint, settings) each.

        Plans not listed are retired: their rows leave the views but stay stored, so putting
        the old settings back reuses them. Rows are written only when something changed.

        Returns:
            The plan keys that were newly registered or brought back.
        """
        wanted = {key: (name, fp, settings) for key, name, fp, settings in plans}
        known = self._plans()
        added = [k for k in wanted if known.get(k) is not True]
        retire = [k for k, live in known.items() if live and k not in wanted]
        if not added and not retire:
            return []
        with _writing("plans"), self.transaction() as con:
            for key in retire:
                con.execute("UPDATE plans SET live = FALSE WHERE plan_key = ?", [key])
            for key in added:
                name, fp, settings = wanted[key]
                con.execute(
                    "INSERT OR REPLACE INTO plans VALUES (?, ?, ?, ?, TRUE, ?)",
                    [key, name, fp, json.dumps(settings, sort_keys=True), _now()],
                )
        return added

    def live_plans(self) -> list[str]:
        """Return the keys of live plans, sorted."""
        return sorted(key for key, live in self._plans().items() if live)

    def _plans(self) -> dict[str, bool]:
        """Every stored plan key and whether it is live (kept for the session: see _cached)."""

        def read() -> dict[str, bool]:
            with self.connect() as con:
                return dict(con.execute("SELECT plan_key, live FROM plans").fetchall())

        return dict(self._cached(("plans",), "plans", read))

    # ------------------------------------------------------------------ sources, documents

    def sources(self, shards: Iterable[str] | None = None) -> dict[str, SourceRow]:
        """Return the known sources (deleted ones included), by URI, optionally for some shards."""
        query = (
            "SELECT uri, path, document_id, shard, content_hash, size, mtime_ns, deleted, "
            "parse_key, version_id, ctime_ns, inode, hashed_at_ns "
            "FROM sources"
        )
        params: list[Any] = []
        if shards is not None:
            query += " WHERE list_contains(?, shard)"
            params.append(sorted(shards))
        with self.connect() as con:
            return {row[0]: SourceRow(*row) for row in con.execute(query, params).fetchall()}

    def write_sources(self, rows: Sequence[SourceRow]) -> None:
        """Insert or replace source rows in one transaction (new, changed or deleted files)."""
        if not rows:
            return
        with _writing("documents"), self.transaction() as con:
            self._write_sources(con, rows, _now())

    def _write_sources(
        self, con: duckdb.DuckDBPyConnection, rows: Sequence[SourceRow], now: datetime
    ) -> None:
        batch = [
            {
                **r.__dict__,
                "document_id": str(r.document_id),
                "version_id": str(r.version_id) if r.version_id else None,
                "updated_at": now,
            }
            for r in rows
        ]
        self._replace(con, "sources", batch, _SOURCES)

    def write_parsed(
        self,
        documents: Sequence[DocumentWrite],
        failures: Sequence[FailureWrite],
        sources: Sequence[SourceRow] = (),
    ) -> None:
        """Store parsed documents and parse failures, and point their sources at them, atomically.

        A failed source keeps ``version_id`` NULL (it leaves ``current_documents``) and records
        its parse key, so the same bytes are not parsed again. ``sources`` are rows of these
        documents' (or failures') files that a scan found and did not write yet: they are
        written whole, with the parse result, instead of being written first and updated here.
        """
        if not documents and not failures and not sources:
            return
        now = _now()
        parsed: dict[str, tuple[UUID | None, str]] = {
            **{f.source_uri: (None, f.parse_key) for f in failures if f.parse_key is not None},
            **{d.uri: (d.version_id, d.parse_key) for d in documents},
        }
        scanned = [
            replace(row, version_id=parsed[row.uri][0], parse_key=parsed[row.uri][1])
            if row.uri in parsed
            else row
            for row in sources
        ]
        written = {row.uri for row in scanned}
        current = _current_rows(scanned, documents, set(parsed))
        # A source that parses now (its file was fixed, or a limit was raised) no longer has a
        # parse failure to show; usually none had one, and the delete is not needed.
        uris = {d.uri for d in documents}
        cleared = sorted(
            {uri for (stage, _), pairs in self._failures().items() if stage == "parse" for uri, _ in pairs}
            & uris
        )
        with self._writing_documents(current), _writing("failures"), self.transaction() as con:
            known = {
                r[0]
                for r in con.execute(
                    "SELECT document_id::VARCHAR || '/' || version_id::VARCHAR FROM documents "
                    "WHERE list_contains(?, document_id::VARCHAR || '/' || version_id::VARCHAR)",
                    [[f"{d.document_id}/{d.version_id}" for d in documents]],
                ).fetchall()
            }
            fresh = [d for d in documents if f"{d.document_id}/{d.version_id}" not in known]
            self._insert(
                con,
                "documents",
                [
                    {
                        "document_id": str(d.document_id),
                        "version_id": str(d.version_id),
                        "source_uri": d.uri,
                        "kind": d.kind,
                        "title": d.title,
                        "text_length": d.text_length,
                        "parsed_at": now,
                    }
                    for d in fresh
                ],
                _DOCUMENTS,
            )
            self._insert(con, "document_body_parts", _body_parts(fresh), _BODY_PARTS)
            self._write_sources(con, scanned, now)
            for d in documents:
                if d.uri in written:
                    continue
                con.execute(
                    "UPDATE sources SET version_id = ?, parse_key = ?, updated_at = ? WHERE uri = ?",
                    [str(d.version_id), d.parse_key, now, d.uri],
                )
            if cleared:
                con.execute(
                    "DELETE FROM failure_log WHERE stage = 'parse' AND list_contains(?, source_uri)",
                    [cleared],
                )
            for f in failures:
                if f.parse_key is not None and f.source_uri not in written:
                    con.execute(
                        "UPDATE sources SET version_id = NULL, parse_key = ?, updated_at = ? WHERE uri = ?",
                        [f.parse_key, now, f.source_uri],
                    )
            self._record_failures(con, failures, now)
        for d in fresh:  # committed: the next step chunks them
            body = _compressed(d)
            self._recent.put(("body", str(d.document_id), str(d.version_id)), body, len(body))

    def record_failures(self, failures: Sequence[FailureWrite]) -> None:
        """Record failures not yet recorded for the same source content, stage and plan."""
        if failures:
            with _writing("failures"), self.transaction() as con:
                self._record_failures(con, failures, _now())

    def _record_failures(
        self, con: duckdb.DuckDBPyConnection, failures: Sequence[FailureWrite], now: datetime
    ) -> None:
        for f in failures:
            seen = con.execute(
                "SELECT 1 FROM failure_log WHERE source_uri = ? AND content_hash = ? AND stage = ? "
                "AND plan_key IS NOT DISTINCT FROM ?",
                [f.source_uri, f.content_hash, f.stage, f.plan_key],
            ).fetchone()
            if seen is None:
                con.execute(
                    "INSERT INTO failure_log VALUES (?, ?, ?, ?, ?, ?)",
                    [f.source_uri, f.content_hash, f.stage, f.plan_key, f.error, now],
                )

    def failed_keys(self, stage: str, plan_key: str | None) -> set[tuple[str, str]]:
        """Return (source_uri, content_hash) pairs already failed at ``stage`` for ``plan_key``."""
        return set(self._failures().get((stage, plan_key), ()))

    def _failures(self) -> dict[tuple[str, str | None], set[tuple[str, str]]]:
        """Every recorded failure as (stage, plan_key) -> {(source_uri, content_hash)}, read in
        one query and kept for the session (see :meth:`_cached`): a run asks per step and plan,
        and the log is short (one row per failed content). Callers copy what they hand out."""

        def read() -> dict[tuple[str, str | None], set[tuple[str, str]]]:
            with self.connect() as con:
                rows = con.execute(
                    "SELECT stage, plan_key, source_uri, content_hash FROM failure_log"
                ).fetchall()
            found: dict[tuple[str, str | None], set[tuple[str, str]]] = {}
            for stage, plan_key, uri, digest in rows:
                found.setdefault((stage, plan_key), set()).add((uri, digest))
            return found

        return self._cached(("failures",), "failures", read)

    def _cached(self, key: tuple[Any, ...], kind: str, read: Callable[[], Any]) -> Any:
        """``read()``, kept for the rest of the :meth:`session` while this process writes
        nothing of ``kind`` (``documents``, ``members``, ``failures``, ``plans``): every step of a run asks
        again for the same rows, which only the steps' own writes change. Callers copy what
        they hand out."""
        cache = getattr(self._local, "cache", None)
        if cache is None:
            return read()
        found = cache.get(key)
        if found is not None and found[0] == _writes[kind]:
            return found[1]
        writes = _writes[kind]  # before the read: a write meanwhile invalidates it
        value = read()
        cache[key] = (writes, value)
        return value

    def current_documents(self, shards: Iterable[str] | None = None) -> list[CurrentRow]:
        """Return (document_id, version_id, kind, shard, source_uri, content_hash, text_length)
        of current documents (of ``shards``, or all), by source URI.

        Inside a :meth:`session` the answer is kept until this process writes sources or
        documents: every step of a run asks again, and only the scan and the parse change it.
        """
        wanted = None if shards is None else tuple(sorted(set(shards)))

        def read() -> list[CurrentRow]:
            query = (
                "SELECT document_id, version_id, kind, shard, source_uri, content_hash, text_length "
                "FROM current_documents"
            )
            with self.connect() as con:
                if wanted is None:
                    rows = con.execute(query).fetchall()
                else:
                    rows = con.execute(query + " WHERE list_contains(?, shard)", [list(wanted)]).fetchall()
            rows.sort(key=lambda row: row[4])  # here: DuckDB's sort cost more than the read (1 ms)
            return rows

        return list(self._cached(("documents", wanted), "documents", read))

    def _writing_documents(self, current: dict[str, CurrentRow | None] | None) -> ContextManager[None]:
        """Count a write of sources or documents; once it is committed, apply ``current``
        (source URI -> its :meth:`current_documents` row, None for none) to this session's kept
        rows (see :meth:`_writing_through`); with ``current`` None they are read again."""

        if current is None:
            return self._writing_through("documents", lambda key: True, None)
        changed = current

        def apply(key: tuple[Any, ...], rows: list[CurrentRow]) -> list[CurrentRow]:
            wanted = key[1]
            kept = [row for row in rows if row[4] not in changed]
            kept += [row for row in changed.values() if row and (wanted is None or row[3] in wanted)]
            return sorted(kept, key=lambda row: row[4])

        return self._writing_through("documents", lambda key: True, apply)

    @contextmanager
    def _writing_through(
        self,
        kind: str,
        applies_to: Callable[[tuple[Any, ...]], bool],
        apply: Callable[[tuple[Any, ...], Any], Any] | None,
    ) -> Iterator[None]:
        """Count a write of ``kind`` (see :func:`_writing`); once it is committed, replace each
        of this session's kept reads of that kind whose key ``applies_to`` by ``apply(key, value)``
        (the write applied to it), unless ``apply`` is None or another write of the kind came in
        between: then the read is dropped and made again when next asked."""
        before = _writes[kind]
        with _writing(kind):
            yield
        cache = getattr(self._local, "cache", None)
        if cache is None:
            return
        with _writes_lock:
            for key in [k for k in cache if k[0] == kind and applies_to(k)]:
                found = cache.pop(key)
                if apply is None or found[0] != before or _writes[kind] != before + 1:
                    continue  # read again next time
                cache[key] = (_writes[kind], apply(key, found[1]))

    def document_bodies(
        self, keys: Sequence[tuple[UUID, UUID]], *, compressed: bool = False
    ) -> dict[str, str | bytes]:
        """Return stored ``Document`` JSON by ``"<document_id>/<version_id>"`` for the given versions;
        with ``compressed``, the stored bytes as they are (for :func:`inflate_body`).

        Raises:
            StoreError: A requested version is not stored (run ``documents`` first).
        """
        wanted = sorted({(str(d), str(v)) for d, v in keys})
        found: dict[str, bytes] = {}
        missing = []
        for d, v in wanted:
            body = self._recent.get(("body", d, v))
            if body is None:
                missing.append((d, v))
            else:
                found[f"{d}/{v}"] = body
        if missing:
            with self.connect() as con:
                # A join on the key: DuckDB reads the bodies of these rows only.
                rows = con.execute(
                    "SELECT p.document_id::VARCHAR || '/' || p.version_id::VARCHAR AS key, p.bytes "
                    "FROM document_body_parts p "
                    "JOIN (SELECT unnest(?::UUID[]) AS document_id, unnest(?::UUID[]) AS version_id) w "
                    "USING (document_id, version_id) ORDER BY key, p.part",
                    [[d for d, _ in missing], [v for _, v in missing]],
                ).fetchall()
            parts: dict[str, list[bytes]] = {}
            for key, part in rows:
                parts.setdefault(key, []).append(part)
            for key, chunks in parts.items():
                body = found[key] = b"".join(chunks)
                self._recent.put(("body", *key.split("/")), body, len(body))
        lost = [f"{d}/{v}" for d, v in missing if f"{d}/{v}" not in found]
        if lost:
            raise StoreError(f"document versions {lost[:3]} are not stored; materialize documents first")
        return {key: body if compressed else inflate_body(body) for key, body in found.items()}

    # ------------------------------------------------------------------ chunk sets, members

    def existing_sets(self, set_keys: Iterable[str], table: str = "chunk_sets") -> set[str]:
        """Return which of ``set_keys`` are stored in ``table`` (chunk_sets or graph_sets)."""
        if table not in ("chunk_sets", "graph_sets"):
            raise ValueError(f"unknown set table {table!r}")
        keys = sorted(set(set_keys))
        if not keys:
            return set()
        writes = _writes["sets"]
        with self.connect() as con:
            rows = con.execute(
                f"SELECT set_key FROM {table} WHERE list_contains(?, set_key)", [keys]
            ).fetchall()
        found = {r[0] for r in rows}
        self._note_absent(table, keys, found, writes)
        return found

    def members(self, plan_key: str, role: str) -> dict[UUID, tuple[str, str]]:
        """Return ``{document_id: (set_key, based_on)}`` for one plan and role."""
        return self.members_by_role(plan_key).get(role, {})

    def members_by_role(self, plan_key: str) -> dict[str, dict[UUID, tuple[str, str]]]:
        """:meth:`members` of every role (``parent``, ``child``, ``graph``) in one read, kept
        for the session (see :meth:`_cached`) and brought up to date by its own writes."""

        def read() -> dict[str, dict[UUID, tuple[str, str]]]:
            found: dict[str, dict[UUID, tuple[str, str]]] = {"parent": {}, "child": {}, "graph": {}}
            with self.connect() as con:
                rows = con.execute(
                    "SELECT role, document_id, set_key, based_on FROM plan_members WHERE plan_key = ?",
                    [plan_key],
                ).fetchall()
            for role, doc, key, based in rows:
                found.setdefault(role, {})[doc] = (key, based)
            return found

        return {role: dict(m) for role, m in self._cached(("members", plan_key), "members", read).items()}

    def _writing_members(self, members: Sequence[MemberWrite]) -> ContextManager[None]:
        """Count a write of ``members``; once it is committed, apply it to this session's kept
        members too (see :meth:`_writing_through`)."""
        plan_keys = {m.plan_key for m in members}

        def apply(key: tuple[Any, ...], by_role: dict[str, dict[UUID, tuple[str, str]]]) -> Any:
            for m in members:
                if m.plan_key == key[1]:
                    by_role.setdefault(m.role, {})[m.document_id] = (m.set_key, m.based_on)
            return by_role

        return self._writing_through("members", lambda key: key[1] in plan_keys, apply)

    def chunk_rows_many(self, set_keys: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """Return the chunks of each set as ``Chunk``-shaped dicts (JSON decoded), in index order."""
        recent, missing = self._recent_sets(set_keys)
        result = {key: [_chunk_dict(row) for row in rows] for key, rows in recent.items()}
        names, grouped = self._rows_by_set(
            'id, document_id, "index", text, provenance, heading_path, content_kind, chunker, '
            "chunker_hash, level, parent_id, metadata, created_at",
            missing,
        )
        for key, rows in grouped.items():
            result[key] = []
            for values in rows:
                row = dict(zip(names, values, strict=True))
                row["provenance"] = json.loads(row["provenance"])
                row["metadata"] = json.loads(row["metadata"])
                result[key].append(row)
        return result

    def graph_rows(self, set_keys: Iterable[str]) -> dict[str, list[tuple[Any, ...]]]:
        """Return, per set and in index order, what graph records need of each chunk: ``(id,
        document_id, index, provenance, heading_path, content_kind, chunker, chunker_hash, level,
        parent_id, metadata, created_at)``, ids as text and JSON undecoded (the worker that
        builds the records decodes it)."""
        recent, missing = self._recent_sets(set_keys)
        result = {
            key: [tuple(row[name] for name in _GRAPH_ROW_COLUMNS) for row in rows]
            for key, rows in recent.items()
        }
        result.update(
            self._rows_by_set(
                'id::VARCHAR, document_id::VARCHAR, "index", provenance::VARCHAR, heading_path, '
                "content_kind, chunker, chunker_hash, level, parent_id::VARCHAR, metadata::VARCHAR, "
                "created_at",
                missing,
            )[1]
        )
        return result

    def _recent_sets(self, set_keys: Iterable[str]) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
        """The rows (as written, see ``_CHUNK_COLUMNS``) of the sets this store wrote lately,
        and the keys of the others."""
        recent, missing = {}, []
        for key in sorted(set(set_keys)):
            rows = self._recent.get(("set", key))
            if rows is None:
                missing.append(key)
            else:
                recent[key] = rows
        return recent, missing

    def _rows_by_set(
        self, columns: str, set_keys: Iterable[str]
    ) -> tuple[list[str], dict[str, list[tuple[Any, ...]]]]:
        """The column names and, per set (every requested key present), its chunk rows in index
        order; ``columns`` is SQL written in this module, never input."""
        keys = sorted(set(set_keys))
        if not keys:
            return [], {}
        with self.connect() as con:
            cursor = con.execute(
                # A semi-join, not list_contains: DuckDB then fetches the other columns of the
                # matching rows only (4x faster on a store of 30,000 chunks).
                "SELECT set_key, " + columns + " FROM chunks WHERE set_key IN (SELECT unnest(?::VARCHAR[])) "
                'ORDER BY set_key, "index"',
                [keys],
            )
            names = [d[0] for d in cursor.description][1:]
            rows = cursor.fetchall()
        grouped: dict[str, list[tuple[Any, ...]]] = {key: [] for key in keys}
        for row in rows:
            grouped[row[0]].append(row[1:])
        return names, grouped

    def chunk_sizes(self, set_keys: Iterable[str]) -> list[tuple[int | None, str, int, str]]:
        """Return (token_count, source_uri, index, first 60 characters) of every chunk in the sets."""
        keys = sorted(set(set_keys))
        if not keys:
            return []
        with self.connect() as con:
            return con.execute(
                'SELECT c.token_count, d.source_uri, c."index", left(c.text, 60) FROM chunks c '
                "JOIN documents d ON d.document_id = c.document_id AND d.version_id = c.version_id "
                'WHERE c.set_key IN (SELECT unnest(?::VARCHAR[])) ORDER BY d.source_uri, c."index"',
                [keys],
            ).fetchall()

    def chunk_size_stats(self, set_keys: Iterable[str], preview_rows: int = PREVIEW_ROWS) -> dict[str, Any]:
        """Aggregate token counts of the chunks in the sets, plus the first chunks.

        The aggregates and the preview come from each set's own row (written with the set),
        not from a scan of its chunks.

        Returns:
            As :meth:`summarize`.
        """
        keys = sorted(set(set_keys))
        if not keys:
            return self.summarize({}, preview_rows)
        with self.connect() as con:
            sets = con.execute(
                "SELECT s.set_key, d.source_uri, " + _SUMMARY_COLUMNS + " FROM chunk_sets s "
                "LEFT JOIN documents d ON d.document_id = s.document_id AND d.version_id = s.version_id "
                "WHERE s.set_key IN (SELECT unnest(?::VARCHAR[]))",
                [keys],
            ).fetchall()
        summaries = {key: (uri, SetSummary.stored(*rest)) for key, uri, *rest in sets}
        return self.summarize(summaries, preview_rows)

    @staticmethod
    def summarize(
        sets: dict[str, tuple[str | None, SetSummary]], preview_rows: int = PREVIEW_ROWS
    ) -> dict[str, Any]:
        """Aggregate the summaries of sets (set key -> source URI, summary); reads nothing.

        Returns:
            ``chunks`` (rows), ``tokens_min`` / ``tokens_mean`` / ``tokens_max`` over non-null
            counts (0 when none), and ``preview``: (token_count, source_uri, index, first 60
            characters) of the first ``preview_rows`` chunks by source URI and index (the same
            rows :meth:`chunk_sizes` starts with).

        Raises:
            ValueError: ``preview_rows`` is over the :data:`PREVIEW_ROWS` a set keeps.
        """
        if preview_rows > PREVIEW_ROWS:
            raise ValueError(f"preview_rows={preview_rows}: a set keeps its first {PREVIEW_ROWS} chunks")
        ordered = sorted(
            ((uri, summary) for uri, summary in sets.values() if uri is not None),
            key=lambda entry: entry[0],
        )
        preview: list[tuple[int | None, str, int, str]] = []
        for uri, summary in ordered:
            if len(preview) >= preview_rows:
                break
            preview += [(tokens, uri, index, text) for tokens, index, text in summary.preview]
        summaries = [summary for _, summary in sets.values()]
        counted = sum(s.tokens_counted or 0 for s in summaries)
        lows = [s.tokens_min for s in summaries if s.tokens_min is not None]
        highs = [s.tokens_max for s in summaries if s.tokens_max is not None]
        return {
            "chunks": sum(s.chunk_count for s in summaries),
            "tokens_min": min(lows, default=0),
            "tokens_mean": round(sum(s.token_total or 0 for s in summaries) / counted, 1) if counted else 0.0,
            "tokens_max": max(highs, default=0),
            "preview": preview[:preview_rows],
        }

    def set_summaries(self, set_keys: Iterable[str]) -> dict[str, SetSummary]:
        """Return the summary of each of ``set_keys`` that is stored in ``chunk_sets``."""
        keys = sorted(set(set_keys))
        if not keys:
            return {}
        writes = _writes["sets"]
        with self.connect() as con:
            rows = con.execute(
                "SELECT s.set_key, " + _SUMMARY_COLUMNS + " FROM chunk_sets s "
                "WHERE list_contains(?, s.set_key)",
                [keys],
            ).fetchall()
        found = {key: SetSummary.stored(*rest) for key, *rest in rows}
        self._note_absent("chunk_sets", keys, found, writes)
        return found

    def _note_absent(self, table: str, asked: Iterable[str], found: Iterable[str], writes: int) -> None:
        """Keep for the session which of ``asked`` keys ``table`` lacked at a read that began
        when this process had made ``writes`` set writes (see :meth:`_stored_keys`)."""
        cache = getattr(self._local, "cache", None)
        if cache is not None:
            cache[("absent", table)] = (writes, set(asked) - set(found))

    def _stored_keys(self, con: duckdb.DuckDBPyConnection, table: str, keys: list[str]) -> set[str]:
        """Which of ``keys`` ``table`` holds, asked inside a write so a set stored meanwhile is
        skipped. Known without asking when this session read them all as missing and this
        process wrote no set since (while the session is open, no other process can): the
        usual write, whose step has just looked its keys up."""
        if not keys:
            return set()
        cache = getattr(self._local, "cache", None)
        absent = None if cache is None else cache.get(("absent", table))
        if absent is not None and absent[0] == _writes["sets"] and absent[1].issuperset(keys):
            return set()
        rows = con.execute(f"SELECT set_key FROM {table} WHERE list_contains(?, set_key)", [keys]).fetchall()
        return {r[0] for r in rows}

    def write_chunk_sets(self, sets: Sequence[ChunkSetWrite], members: Sequence[MemberWrite]) -> int:
        """Write new chunk sets and point plans at sets, all in one transaction.

        A set stored meanwhile by another writer is skipped (same key, same content), so two
        runs writing at once never duplicate rows.

        Returns:
            The number of chunk rows inserted.
        """
        if not sets and not members:
            return 0
        now = _now()
        with self._writing_members(members), _writing("sets"), self.transaction() as con:
            present = self._stored_keys(con, "chunk_sets", [s.set_key for s in sets])
            fresh = [s for s in sets if s.set_key not in present]
            self._insert(
                con,
                "chunk_sets",
                [
                    {
                        "set_key": s.set_key,
                        "document_id": str(s.document_id),
                        "version_id": str(s.version_id),
                        "level": s.level,
                        "fingerprint": s.fingerprint,
                        "parent_fingerprint": s.parent_fingerprint,
                        **SetSummary.of_rows(s.rows).columns(),
                        "created_at": now,
                    }
                    for s in fresh
                ],
                _CHUNK_SETS,
            )
            rows = [row for s in fresh for row in s.rows]
            self._insert(con, "chunks", rows, _CHUNKS)
            self._write_members(con, members, now)
        for s in sets:  # committed (by this writer or, the same rows, another): the next step reads them
            ordered = sorted(s.rows, key=lambda row: row["index"])
            self._recent.put(("set", s.set_key), ordered, _rows_size(ordered))
        return len(rows)

    def write_graph_sets(self, sets: Sequence[GraphSetWrite], members: Sequence[MemberWrite]) -> int:
        """Write new graph sets and point plans at them in one transaction; returns rows inserted."""
        if not sets and not members:
            return 0
        now = _now()
        with self._writing_members(members), _writing("sets"), self.transaction() as con:
            present = self._stored_keys(con, "graph_sets", [s.set_key for s in sets])
            fresh = [s for s in sets if s.set_key not in present]
            self._insert(
                con,
                "graph_sets",
                [
                    {
                        "set_key": s.set_key,
                        "document_id": str(s.document_id),
                        "version_id": str(s.version_id),
                        "parent_set_key": s.parent_set_key,
                        "child_set_key": s.child_set_key,
                        "node_count": len(s.nodes),
                        "edge_count": len(s.edges),
                        "created_at": now,
                    }
                    for s in fresh
                ],
                _GRAPH_SETS,
            )
            nodes = [{"set_key": s.set_key, **n} for s in fresh for n in s.nodes]
            edges = [{"set_key": s.set_key, **e} for s in fresh for e in s.edges]
            self._insert(con, "graph_node_rows", nodes, _GRAPH_NODES)
            self._insert(con, "graph_edge_rows", edges, _GRAPH_EDGES)
            self._write_members(con, members, now)
        return len(nodes) + len(edges)

    def _write_members(
        self, con: duckdb.DuckDBPyConnection, members: Sequence[MemberWrite], now: datetime
    ) -> None:
        """Point each (plan_key, document_id, role) at its new set, replacing the old pointer."""
        rows = [
            {
                "plan_key": m.plan_key,
                "document_id": str(m.document_id),
                "role": m.role,
                "set_key": m.set_key,
                "version_id": str(m.version_id),
                "based_on": m.based_on,
                "updated_at": now,
            }
            for m in members
        ]
        self._replace(con, "plan_members", rows, _MEMBERS)

    def _replace(
        self, con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[dict[str, Any]], schema: pa.Schema
    ) -> None:
        """Insert ``rows`` into ``table`` (``plan_members`` or ``sources``), replacing those with
        the same key. A handful (an edit's) are updated in place by key, and inserted when no
        row was there: three statements less than a delete and an insert; more are deleted by
        key and inserted in one batch."""
        if not rows:
            return
        update, delete, key_columns = _REPLACE[table]
        if len(rows) <= _VALUES_ROWS:
            set_columns = [name for name in schema.names if name not in key_columns]
            missing = [
                row
                for row in rows
                if con.execute(update, [row[c] for c in (*set_columns, *key_columns)]).fetchone()[0] == 0
            ]
            self._insert(con, table, missing, schema)
            return
        con.execute(delete, [["/".join(str(row[c]) for c in key_columns) for row in rows]])
        self._insert(con, table, rows, schema)

    # ------------------------------------------------------------------ reading

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read query and return all rows (for checks, tests and the CLI)."""
        with self.connect() as con:
            return con.execute(sql, list(params)).fetchall()

    def table_counts(self) -> dict[str, int]:
        """Return the row count of every stored table (a no-op run leaves these unchanged)."""
        tables = (
            "sources",
            "documents",
            "plans",
            "chunk_sets",
            "chunks",
            "plan_members",
            "graph_sets",
            "graph_node_rows",
            "graph_edge_rows",
            "failure_log",
        )
        with self.connect() as con:
            return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


_UUID = pa.string()  # UUIDs travel as text and DuckDB casts them on insert.
_SOURCES = pa.schema(
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
_DOCUMENTS = pa.schema(
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
_BODY_PARTS = pa.schema(
    [("document_id", _UUID), ("version_id", _UUID), ("part", pa.int32()), ("bytes", pa.binary())]
)
_CHUNK_SETS = pa.schema(
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
_CHUNKS = pa.schema(
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
_MEMBERS = pa.schema(
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
_GRAPH_SETS = pa.schema(
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
_GRAPH_NODES = pa.schema(
    [("set_key", pa.string()), ("id", pa.string()), ("label", pa.string()), ("properties", pa.string())]
)
_GRAPH_EDGES = pa.schema(
    [
        ("set_key", pa.string()),
        ("source_id", pa.string()),
        ("target_id", pa.string()),
        ("type", pa.string()),
        ("properties", pa.string()),
    ]
)
assert tuple(_CHUNKS.names) == _CHUNK_COLUMNS
# IngestStore._replace, per table: the UPDATE of one row by its key (the other columns in
# schema order, then the key columns), the DELETE of the rows whose keys (joined by "/") are in
# a list, and the key columns.
_REPLACE: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "plan_members": (
        "UPDATE plan_members SET set_key = ?, version_id = ?, based_on = ?, updated_at = ? "
        "WHERE plan_key = ? AND document_id = ? AND role = ?",
        "DELETE FROM plan_members "
        "WHERE list_contains(?, plan_key || '/' || document_id::VARCHAR || '/' || role)",
        ("plan_key", "document_id", "role"),
    ),
    "sources": (
        "UPDATE sources SET path = ?, document_id = ?, shard = ?, content_hash = ?, size = ?, "
        "mtime_ns = ?, deleted = ?, parse_key = ?, version_id = ?, ctime_ns = ?, inode = ?, "
        "hashed_at_ns = ?, updated_at = ? WHERE uri = ?",
        "DELETE FROM sources WHERE list_contains(?, uri)",
        ("uri",),
    ),
}
