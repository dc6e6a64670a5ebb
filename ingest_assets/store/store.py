"""The store facade: versioned documents, chunk sets, plan membership, graph records, failures.

No Dagster here: the engine, the Dagster resource, the CLI and benchmarks all use this class.
Every public method is one read or one transaction, and holds no data between calls (the only
memory is :mod:`~ingest_assets.store.recent`, whose keys can never go stale), so a write through
any method, or through :meth:`IngestStore.transaction`, is seen by the next read.

Contracts:
    * A chunk set is written once, with all its chunks, in the transaction that first points a
      plan at it; a reader sees all of a document's new rows or none of them.
    * Batches go in as Arrow tables (one INSERT ... SELECT per table), never row by row; every
      value is a bound parameter or an Arrow column.
    * DuckDB allows one writing process per file: connections retry a locked file with
      backoff, and callers keep connections short (chunk first, then write).
    * On a DuckLake store (``ducklake:...``) many processes write at once; a write method whose
      commit conflicted with another writer's runs again (``@retried``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar
from uuid import UUID

import duckdb

from ingest_assets.settings import Settings
from ingest_assets.store import compaction, lake
from ingest_assets.store.changes import ViewScope, local_run_id, tracked
from ingest_assets.store.connection import Connections, retried
from ingest_assets.store.errors import StoreError
from ingest_assets.store.lists import json_list
from ingest_assets.store.plan_serving import PlanServing
from ingest_assets.store.recent import Recent
from ingest_assets.store.rows import (
    BODY_PARTS,
    CHUNK_SETS,
    CHUNKS,
    DOCUMENTS,
    GRAPH_EDGES,
    GRAPH_NODES,
    GRAPH_ROW_COLUMNS,
    GRAPH_SETS,
    SUMMARY_COLUMNS,
    ChunkSetWrite,
    CurrentDocument,
    DocumentWrite,
    FailureWrite,
    GraphRow,
    GraphSetWrite,
    MemberWrite,
    SetSummary,
    SourceRow,
    chunk_dict,
    rows_size,
    utc_now,
)
from ingest_assets.store.set_rows import CHUNK_COLUMNS, EMBED_COLUMNS, GRAPH_COLUMNS, chunk_dicts, rows_by_set
from ingest_assets.store.shards import shards_of
from ingest_assets.store.writes import (
    body_parts,
    chunk_set_rows,
    compressed_body,
    document_rows,
    graph_set_rows,
    inflate_body,
    insert,
    member_rows,
    source_rows,
    stored_keys,
    supersede,
)

__all__ = ["ROLES", "TABLES", "IngestStore"]

T = TypeVar("T")

ROLES = ("parent", "child", "graph")
TABLES = (
    "source_rows",
    "documents",
    "plans",
    "chunk_sets",
    "chunks",
    "member_rows",
    "graph_sets",
    "graph_node_rows",
    "graph_edge_rows",
    "failure_log",
    "chunk_changes",
    "step_timings",
    "step_results",
)


class IngestStore(PlanServing):
    """A DuckDB file holding every parsed version, chunk set and graph record.

    Args:
        path: The database file; created (with its folder) on first use.
        lock_timeout: Seconds to keep retrying while another process holds the file.
        settings: The pipeline's settings: the DuckDB settings and the lake's data folder come
            from here, and an engine over this store runs under them unless given others
            (default: ``Settings()``, the environment's).
        run_id: The run its writes are recorded under in ``chunk_changes`` and ``step_timings``
            (Dagster's run id inside a run); default a generated ``local-...`` id.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        lock_timeout: float = 60.0,
        settings: Settings | None = None,
        run_id: str | None = None,
    ) -> None:
        settings = settings or Settings()
        self.settings = settings
        self._connections = Connections(path, lock_timeout, settings.duckdb_config(), settings.lake_data)
        # The file's Path, or the lake's location (``ducklake:...``) as given.
        self.path = self._connections.path
        self.is_lake = self._connections.is_lake
        self.run_id = run_id or local_run_id()
        self._recent = Recent()

    # ------------------------------------------------------------------ connections

    def session(self) -> Any:
        """Keep one connection open for the calls made inside this block (one engine step);
        see :meth:`Connections.session`."""
        return self._connections.session()

    def snapshot(self) -> Any:
        """Yield a session reading one state of the store, unlocked; see :meth:`Connections.snapshot`."""
        return self._connections.snapshot()

    def connect(self) -> Any:
        """Yield a writable connection (the session's, inside one); see :meth:`Connections.connect`."""
        return self._connections.connect()

    def retrying(self, work: Callable[[], T]) -> T:
        """``work()`` (one :meth:`transaction`), run again while it conflicts with another
        writer of a lake (see :func:`~ingest_assets.store.connection.retried`)."""
        return self._connections.retrying(work)

    def transaction(self, shards: Iterable[str] | None = None) -> Any:
        """Yield a connection inside one transaction: committed on success, rolled back on error.

        ``shards``: the shards whose documents' rows it writes, by inserts only (on a lake,
        writers of other shards go on meanwhile); None (the default): any rows, alone. See
        :meth:`Connections.transaction`.
        """
        return self._connections.transaction(shards)

    def check(self) -> None:
        """Open the store once so a bad file fails early; see :meth:`Connections.check`."""
        self._connections.check()

    def maintain_lake(self, keep_hours: float = 24.0) -> dict[str, int]:
        """Drop superseded rows (:meth:`compact`), then merge a DuckLake store's files and expire
        its old snapshots (see :func:`lake.maintain`).

        Raises:
            StoreError: The store is a DuckDB file (which needs no file maintenance).
        """
        if not self.is_lake:
            raise StoreError(
                f"{self.path}: is a DuckDB file; only a DuckLake store (INGEST_STORE) is maintained"
            )
        dropped = self.compact()
        with self.connect() as con:
            return {**dropped, **lake.maintain(con, keep_hours)}

    def compact(self) -> dict[str, int]:
        """Delete the rows newer ones superseded; see :func:`.compaction.compact`."""
        return compaction.compact(self)

    # ------------------------------------------------------------------ sources, documents

    def sources(self, shards: Iterable[str] | None = None) -> dict[str, SourceRow]:
        """Return the known sources (deleted ones included), by URI, optionally for some shards."""
        query = (
            "SELECT uri, path, document_id, shard, content_hash, size, mtime_ns, deleted, "
            "parse_key, version_id, ctime_ns, inode, hashed_at_ns FROM sources"
        )
        params: list[Any] = []
        if shards is not None:
            query += " WHERE list_contains(?::JSON::VARCHAR[], shard)"
            params.append(json_list(sorted(shards)))
        return {row[0]: SourceRow(*row) for row in self.query(query, params)}

    @retried
    def write_sources(self, rows: Sequence[SourceRow]) -> None:
        """Record source rows (new, changed or deleted files) as their newest, in one transaction."""
        if not rows:
            return
        now = utc_now()
        with (
            self.transaction({r.shard for r in rows}) as con,
            tracked(con, self.run_id, ViewScope.documents(r.document_id for r in rows), now),
        ):
            supersede(con, "source_rows", source_rows(rows, now))

    @retried
    def write_parsed(self, documents: Sequence[DocumentWrite], failures: Sequence[FailureWrite]) -> None:
        """Store parsed documents and parse failures, and point their sources at them, atomically.

        A document version stored already (same ids) is not written again. A failed source
        keeps ``version_id`` NULL (it leaves ``current_documents``) and records its parse key,
        so the same bytes are not parsed again; a source that parses now loses its old parse
        failures.
        """
        if not documents and not failures:
            return
        now = utc_now()
        keys = [f"{d.document_id}/{d.version_id}" for d in documents]
        # What each source now points at: its new version, or none (it failed) with the parse
        # key of the bytes not to parse again.
        pointers = {d.uri: (str(d.version_id), d.parse_key) for d in documents}
        pointers.update({f.source_uri: (None, f.parse_key) for f in failures if f.parse_key is not None})
        with self.transaction(_scope([d.document_id for d in documents], failures)) as con:
            known = {
                r[0]
                for r in con.execute(
                    "SELECT document_id::VARCHAR || '/' || version_id::VARCHAR FROM documents "
                    "WHERE list_contains(?::JSON::VARCHAR[], "
                    "document_id::VARCHAR || '/' || version_id::VARCHAR)",
                    [json_list(keys)],
                ).fetchall()
            }
            fresh = [d for d, key in zip(documents, keys, strict=True) if key not in known]
            insert(con, "documents", document_rows(fresh, now), DOCUMENTS)
            insert(con, "document_body_parts", body_parts(fresh), BODY_PARTS)
            if pointers:
                uris = sorted(pointers)
                # One statement for the batch: each source's newest row again, pointing anew.
                con.execute(
                    "INSERT INTO source_rows SELECT s.uri, s.path, s.document_id, s.shard, s.content_hash, "
                    "s.size, s.mtime_ns, s.ctime_ns, s.inode, s.hashed_at_ns, s.deleted, p.parse_key, "
                    "p.version_id, $1, s.seq + 1 "
                    "FROM (SELECT * FROM source_rows WHERE list_contains($2::JSON::VARCHAR[], uri) "
                    "      QUALIFY row_number() OVER (PARTITION BY uri ORDER BY seq DESC) = 1) s "
                    "JOIN (SELECT unnest($2::JSON::VARCHAR[]) AS uri, "
                    "      nullif(unnest($3::JSON::VARCHAR[]), '')::UUID AS version_id, "
                    "      unnest($4::JSON::VARCHAR[]) AS parse_key) p ON p.uri = s.uri",
                    [now, json_list(uris), json_list(pointers[u][0] or "" for u in uris),
                     json_list(pointers[u][1] for u in uris)],
                )  # fmt: skip
            self._record_failures(con, failures, now)
        for d in fresh:  # committed: the next step chunks them
            body = compressed_body(d)
            self._recent.put(("body", str(d.document_id), str(d.version_id)), body, len(body))

    def current_documents(self, shards: Iterable[str] | None = None) -> list[CurrentDocument]:
        """Return the current documents (of ``shards``, or all), by source URI."""
        query = (
            "SELECT document_id, version_id, kind, shard, source_uri, content_hash, text_length "
            "FROM current_documents"
        )
        if shards is None:
            rows = self.query(query)
        else:
            rows = self.query(
                query + " WHERE list_contains(?::JSON::VARCHAR[], shard)", [json_list(sorted(set(shards)))]
            )
        # Sorted here: DuckDB's sort of a short result cost more than the read.
        return sorted((CurrentDocument(*row) for row in rows), key=lambda row: row.source_uri)

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
            # A join on the key: DuckDB reads the bodies of these rows only.
            rows = self.query(
                "SELECT p.document_id::VARCHAR || '/' || p.version_id::VARCHAR AS key, p.bytes "
                "FROM document_body_parts p "
                "JOIN (SELECT unnest(?::JSON::UUID[]) AS document_id, "
                "unnest(?::JSON::UUID[]) AS version_id) w "
                "USING (document_id, version_id) ORDER BY key, p.part",
                [json_list(d for d, _ in missing), json_list(v for _, v in missing)],
            )
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

    # ------------------------------------------------------------------ failures

    @retried
    def record_failures(self, failures: Sequence[FailureWrite]) -> None:
        """Record failures not yet recorded for the same source content, stage and plan."""
        if failures:
            with self.transaction(_scope([], failures)) as con:
                self._record_failures(con, failures, utc_now())

    @staticmethod
    def _record_failures(con: duckdb.DuckDBPyConnection, failures: Sequence[FailureWrite], now: Any) -> None:
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
        rows = self.query(
            "SELECT source_uri, content_hash FROM failure_log "
            "WHERE stage = ? AND plan_key IS NOT DISTINCT FROM ?",
            [stage, plan_key],
        )
        return {(uri, digest) for uri, digest in rows}

    # ------------------------------------------------------------------ chunk sets, members

    def existing_sets(self, set_keys: Iterable[str], table: str = "chunk_sets") -> set[str]:
        """Return which of ``set_keys`` are stored in ``table`` (chunk_sets or graph_sets)."""
        if table not in ("chunk_sets", "graph_sets"):
            raise ValueError(f"unknown set table {table!r}")
        with self.connect() as con:
            return stored_keys(con, table, sorted(set(set_keys)))

    def set_shards(self, set_keys: Iterable[str]) -> frozenset[str] | None:
        """The shards of the documents of ``set_keys`` (chunk or graph sets): the write lock a
        transaction writing rows of these sets takes; None (the whole store) when one of them
        is not stored."""
        keys = sorted(set(set_keys))
        if not keys:
            return frozenset()
        rows = self.query(
            "SELECT set_key, document_id FROM chunk_sets WHERE list_contains($1::JSON::VARCHAR[], set_key) "
            "UNION ALL SELECT set_key, document_id FROM graph_sets "
            "WHERE list_contains($1::JSON::VARCHAR[], set_key)",
            [json_list(keys)],
        )
        if {key for key, _ in rows} != set(keys):
            return None
        return shards_of(document for _, document in rows)

    def set_summaries(self, set_keys: Iterable[str]) -> dict[str, SetSummary]:
        """Return the summary of each of ``set_keys`` that is stored in ``chunk_sets``."""
        keys = sorted(set(set_keys))
        if not keys:
            return {}
        rows = self.query(
            "SELECT s.set_key, "
            + SUMMARY_COLUMNS
            + " FROM chunk_sets s WHERE list_contains(?::JSON::VARCHAR[], s.set_key)",
            [json_list(keys)],
        )
        return {key: SetSummary.stored(*rest) for key, *rest in rows}

    def members(self, plan_key: str, role: str) -> dict[UUID, tuple[str, str]]:
        """Return ``{document_id: (set_key, based_on)}`` for one plan and role."""
        rows = self.query(
            "SELECT document_id, set_key, based_on FROM plan_members WHERE plan_key = ? AND role = ?",
            [plan_key, role],
        )
        return {doc: (key, based) for doc, key, based in rows}

    def members_by_role(self, plan_key: str) -> dict[str, dict[UUID, tuple[str, str]]]:
        """:meth:`members` of every role (``parent``, ``child``, ``graph``) in one read."""
        found: dict[str, dict[UUID, tuple[str, str]]] = {role: {} for role in ROLES}
        rows = self.query(
            "SELECT role, document_id, set_key, based_on FROM plan_members WHERE plan_key = ?", [plan_key]
        )
        for role, doc, key, based in rows:
            found.setdefault(role, {})[doc] = (key, based)
        return found

    @retried
    def write_chunk_sets(self, sets: Sequence[ChunkSetWrite], members: Sequence[MemberWrite]) -> int:
        """Write new chunk sets and point plans at sets, all in one transaction.

        A set stored meanwhile by another writer is skipped (same key, same content), so two
        runs writing at once never duplicate rows.

        Returns:
            The number of chunk rows inserted.
        """
        if not sets and not members:
            return 0
        now = utc_now()
        documents = [*(s.document_id for s in sets), *(m.document_id for m in members)]
        with self.transaction(_scope(documents, [])) as con:
            present = stored_keys(con, "chunk_sets", [s.set_key for s in sets])
            fresh = [s for s in sets if s.set_key not in present]
            insert(con, "chunk_sets", chunk_set_rows(fresh, now), CHUNK_SETS)
            rows = [row for s in fresh for row in s.rows]
            insert(con, "chunks", rows, CHUNKS)
            self._write_members(con, members, now)
        for s in sets:  # committed (by this writer or, the same rows, another): the next step reads them
            ordered = sorted(s.rows, key=lambda row: row["index"])
            self._recent.put(("set", s.set_key), ordered, rows_size(ordered))
        return len(rows)

    @retried
    def write_graph_sets(self, sets: Sequence[GraphSetWrite], members: Sequence[MemberWrite]) -> int:
        """Write new graph sets and point plans at them in one transaction; returns rows inserted."""
        if not sets and not members:
            return 0
        now = utc_now()
        documents = [*(s.document_id for s in sets), *(m.document_id for m in members)]
        with self.transaction(_scope(documents, [])) as con:
            present = stored_keys(con, "graph_sets", [s.set_key for s in sets])
            fresh = [s for s in sets if s.set_key not in present]
            insert(con, "graph_sets", graph_set_rows(fresh, now), GRAPH_SETS)
            nodes = [{"set_key": s.set_key, **n} for s in fresh for n in s.nodes]
            edges = [{"set_key": s.set_key, **e} for s in fresh for e in s.edges]
            insert(con, "graph_node_rows", nodes, GRAPH_NODES)
            insert(con, "graph_edge_rows", edges, GRAPH_EDGES)
            self._write_members(con, members, now)
        return len(nodes) + len(edges)

    @staticmethod
    def _write_members(con: duckdb.DuckDBPyConnection, members: Sequence[MemberWrite], now: Any) -> None:
        """Point each (plan_key, document_id, role) at its new set, replacing the old pointer (the
        plan's work; readers see it once :meth:`publish` promotes it)."""
        supersede(con, "member_rows", member_rows(members, now))

    def chunk_rows_many(self, set_keys: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """Return the chunks of each set as ``Chunk``-shaped dicts (JSON decoded), in index order."""
        recent, missing = self._recent_sets(set_keys)
        result = {key: [chunk_dict(row) for row in rows] for key, rows in recent.items()}
        with self.connect() as con:
            names, grouped = rows_by_set(con, CHUNK_COLUMNS, missing)
        result.update({key: chunk_dicts(names, rows) for key, rows in grouped.items()})
        return result

    def embedding_rows(self, set_keys: Iterable[str]) -> dict[str, list[tuple[str, str, list[str], str]]]:
        """Return, per set and in index order, what an embedded text needs of each chunk: (id as
        text, text, heading path, metadata as JSON text). Only these columns are read."""
        recent, missing = self._recent_sets(set_keys)
        result = {
            key: [(str(r["id"]), r["text"], list(r["heading_path"]), r["metadata"]) for r in rows]
            for key, rows in recent.items()
        }
        with self.connect() as con:
            result.update(rows_by_set(con, EMBED_COLUMNS, missing)[1])  # type: ignore[arg-type]
        return result

    def graph_rows(self, set_keys: Iterable[str]) -> dict[str, list[GraphRow]]:
        """Return, per set and in index order, what graph records need of each chunk
        (:class:`GraphRow`), ids as text and JSON undecoded (the worker that builds the
        records decodes it)."""
        recent, missing = self._recent_sets(set_keys)
        result = {
            key: [GraphRow._make(row[name] for name in GRAPH_ROW_COLUMNS) for row in rows]
            for key, rows in recent.items()
        }
        with self.connect() as con:
            stored = rows_by_set(con, GRAPH_COLUMNS, missing)[1]
        result.update({key: [GraphRow._make(row) for row in rows] for key, rows in stored.items()})
        return result

    def _recent_sets(self, set_keys: Iterable[str]) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
        """The rows (as written) of the sets this store wrote lately, and the keys of the others."""
        keys = sorted(set(set_keys))
        recent = {key: rows for key in keys if (rows := self._recent.get(("set", key))) is not None}
        return recent, [key for key in keys if key not in recent]

    @retried
    def record_timing(self, step: str, plan_key: str | None, items: int, work: int, seconds: float) -> None:
        """Record how long ``step`` took over ``items`` (``work`` bytes or characters); see
        ``step_timings`` in schema.sql."""
        with self.transaction(()) as con:  # a row of no document
            con.execute(
                "INSERT INTO step_timings VALUES (?, ?, ?, ?, ?, ?, ?)",
                [self.run_id, step, plan_key, items, work, seconds, utc_now()],
            )

    # ------------------------------------------------------------------ reading

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read query and return all rows (for checks, tests and the CLI)."""
        with self.connect() as con:
            return con.execute(sql, list(params)).fetchall()

    def table_counts(self) -> dict[str, int]:
        """Return the row count of every stored table (a no-op run leaves these unchanged)."""
        with self.connect() as con:
            return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def _scope(document_ids: Iterable[Any], failures: Sequence[FailureWrite]) -> frozenset[str] | None:
    """The shards a write of rows of ``document_ids`` and ``failures`` locks; None (the whole
    store) when a failure does not name its document."""
    if any(f.document_id is None for f in failures):
        return None
    return shards_of([*document_ids, *(f.document_id for f in failures)])
