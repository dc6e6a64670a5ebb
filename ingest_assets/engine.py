"""The incremental engine the assets call: scan, parse, chunk parents, chunk children, graph.

No Dagster here, so benchmarks and tests can time it alone. Every step works on a set of
shards (and a plan) and returns a stats dict. Reuse is decided from keys alone, before any
document is loaded:

* a parent set is keyed by (document id, version id, level 1, parent fingerprint);
* a child set by (document id, version id, level 0, child fingerprint, parent fingerprint);
* a graph set by (parent set key, child set key).

A key that is stored means reuse; a plan that already points at it means nothing to do, not
even a write. So a run with nothing changed makes no parser or chunker call and writes no row.
Chunking happens between short reads and one short write transaction per batch.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import stat as stat_module
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, wraps
from pathlib import Path
from typing import Any
from uuid import UUID

from chunking import Document, ParseError
from chunking.ids import settings_hash
from chunking.parsers import ParseLimits
from ingest_assets.plans import Plan, Route
from ingest_assets.store import (
    PREVIEW_ROWS,
    ChunkSetWrite,
    DocumentWrite,
    FailureWrite,
    GraphSetWrite,
    IngestStore,
    MemberWrite,
    SetSummary,
    SourceRow,
)
from ingest_assets.tasks import (
    ChunkTask,
    GraphTask,
    ParseTask,
    chunk_document,
    graph_records,
    parse_source,
)
from ingest_assets.workers import run_batches

__all__ = [
    "LIMIT_ENV",
    "SHARDS",
    "IngestEngine",
    "child_set_key",
    "graph_set_key",
    "parent_set_key",
    "pipeline_limits",
    "shard_of",
]

SHARD_COUNT = 8
SHARDS: tuple[str, ...] = tuple(f"{i:02d}" for i in range(SHARD_COUNT))
# A read-chunk-write round closes at this many documents or this many bytes of source (parse)
# or text (chunking, graph), whichever comes first: memory per round stays bounded whatever the
# corpus holds (ten copies of the largest file next to each other included).
BATCH_DOCUMENTS = 32
BATCH_BYTES = 8 * 1024 * 1024

# Per-document limits of the pipeline: environment variable -> (ParseLimits field, default).
# The byte default is lower than the library's: a document's chunking time and memory grow with
# its size (a 50 MB text file takes minutes and several GB to chunk), so the pipeline refuses
# bigger files with a failure that names the limit, unless the limit is raised.
LIMIT_ENV: dict[str, tuple[str, int]] = {
    "INGEST_MAX_BYTES": ("max_bytes", 16 * 1024 * 1024),
    "INGEST_MAX_PAGES": ("max_pages", 2000),
    "INGEST_MAX_ROWS": ("max_rows", 1_000_000),
}
_FLAGS = {"max_bytes": "--max-bytes", "max_pages": "--max-pages", "max_rows": "--max-rows"}
_OVER_LIMIT = re.compile(r"^(\d+) [\w ]+? is over the limit (max_\w+)=")


def pipeline_limits(environ: dict[str, str] | None = None) -> ParseLimits:
    """Return the parse limits of the pipeline: ``INGEST_MAX_BYTES``, ``INGEST_MAX_PAGES`` and
    ``INGEST_MAX_ROWS`` from the environment, else the defaults in :data:`LIMIT_ENV`.

    Raises:
        ValueError: A variable is not a positive whole number; the message names it.
    """
    environ = os.environ if environ is None else environ
    values = {}
    for variable, (field, default) in LIMIT_ENV.items():
        raw = environ.get(variable, "").strip().replace("_", "")
        if not raw:
            values[field] = default
            continue
        try:
            values[field] = int(raw)
        except ValueError:
            values[field] = -1
        if values[field] <= 0:
            raise ValueError(f"{variable}={environ[variable]!r} is not a positive whole number")
    return ParseLimits(**values)


def _limit_message(error: ParseError) -> str:
    """The failure message of a parse error; a limit error says how to raise the limit here."""
    match = _OVER_LIMIT.match(error.reason)
    if match is None:
        return str(error)
    value, field = match.groups()
    variable = next(v for v, (f, _) in LIMIT_ENV.items() if f == field)
    return (
        f"{error.source}: {error.reason} (the pipeline limit {variable}; to ingest this file set "
        f"{variable}={value} or more, or run `ingest run {_FLAGS[field]} {value}`)"
    )


def shard_of(document_id: UUID) -> str:
    """Return the shard (``"00"``..``"07"``) of a document: a stable hash of its id."""
    return f"{int(hashlib.sha256(str(document_id).encode()).hexdigest()[:8], 16) % SHARD_COUNT:02d}"


def parent_set_key(document_id: UUID, version_id: UUID, parent_fingerprint: str) -> str:
    """Key of the parent chunk set of one document version under one parent chunker."""
    return settings_hash([str(document_id), str(version_id), 1, parent_fingerprint, ""])


def child_set_key(
    document_id: UUID, version_id: UUID, child_fingerprint: str, parent_fingerprint: str
) -> str:
    """Key of the child chunk set cut by one child chunker from one parent set."""
    return settings_hash([str(document_id), str(version_id), 0, child_fingerprint, parent_fingerprint])


def graph_set_key(parent_key: str, child_key: str) -> str:
    """Key of the graph records built from one parent set and one child set."""
    return settings_hash(["graph", parent_key, child_key])


@cache
def parser_versions() -> str:
    """Hash of every parser's version: part of the key that decides whether to parse again."""
    from chunking.parsers import PARSERS

    versions = {}
    for kind in sorted(PARSERS):
        module = importlib.import_module(f"chunking.parsers.{kind}")
        versions[kind] = getattr(module, "PARSER_VERSION", "?")
    return settings_hash(versions)


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# A file is read again unless its stat matches the one recorded when it was hashed and that
# stat was settled then: its last change stamped well before the hash began. A change made in
# the same timestamp tick as the hash could otherwise leave the stat as it was. Linux stamps
# files from a clock that ticks every 10 ms or less; stamps without a sub-millisecond part
# suggest a coarse file system (FAT keeps 2 s), which gets the wide margin.
SETTLED_NS = 50_000_000
SETTLED_COARSE_NS = 3_000_000_000
# On Windows st_ctime is the creation time, which an edit does not move: never trust the stat.
_CTIME_IS_CHANGE_TIME = os.name != "nt"


def _settled_and_unchanged(old: SourceRow, stat: os.stat_result) -> bool:
    """Whether ``old`` holds the content of a file whose stat is now ``stat`` (no read needed)."""
    if not _CTIME_IS_CHANGE_TIME or old.deleted or old.hashed_at_ns is None or old.ctime_ns is None:
        return False
    if (old.size, old.mtime_ns, old.ctime_ns, old.inode) != (
        stat.st_size,
        stat.st_mtime_ns,
        stat.st_ctime_ns,
        stat.st_ino,
    ):
        return False
    coarse = old.mtime_ns % 1_000_000 == 0 and old.ctime_ns % 1_000_000 == 0
    margin = SETTLED_COARSE_NS if coarse else SETTLED_NS
    return max(old.mtime_ns, old.ctime_ns) < old.hashed_at_ns - margin


_SCAN_COUNTS = ("files", "new", "changed", "unchanged", "deleted")


@dataclass
class _ScanDiff:
    """What a scan of the inbox found against the store (nothing written yet)."""

    known: dict[str, SourceRow]  # the stored sources of the scanned shards, by URI
    writes: list[SourceRow]  # new, changed and deleted sources
    by_shard: dict[str, dict[str, int]]  # files, new, changed, unchanged, deleted
    skipped: int  # links, special files, names that are not UTF-8 (all shards)

    def stats(self, shards: Iterable[str]) -> dict[str, int]:
        """:meth:`IngestEngine.scan`'s stats over ``shards``."""
        stats = dict.fromkeys(_SCAN_COUNTS, 0)
        for shard in shards:
            for name, count in self.by_shard.get(shard, {}).items():
                stats[name] += count
        return {**stats, "skipped": self.skipped}


def _step(method: Callable[..., Any]) -> Callable[..., Any]:
    """Run an engine step on one store connection (opened at its start, closed at its end).

    The connection holds DuckDB's file lock for the step; between steps it is released, so
    another process can write.
    """

    @wraps(method)
    def wrapper(self: IngestEngine, *args: Any, **kwargs: Any) -> Any:
        with self.store.session():
            return method(self, *args, **kwargs)

    return wrapper


def _subset(shards: Iterable[str]) -> set[str] | None:
    """``shards`` as a filter: None when they are all of them."""
    shards = set(shards)
    return None if shards >= set(SHARDS) else shards


def _batches(items: Sequence[Any], size_of: Callable[[Any], int]) -> Iterator[list[Any]]:
    """Consecutive batches of at most BATCH_DOCUMENTS items and (unless one item is bigger)
    BATCH_BYTES of ``size_of``."""
    batch: list[Any] = []
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


@dataclass(frozen=True)
class _Item:
    """One current document in a chunking step."""

    document_id: UUID
    version_id: UUID
    kind: str
    uri: str
    content_hash: str
    route: Route
    text_length: int = 0


class IngestEngine:
    """Runs each pipeline step over shards, reusing every set whose key is already stored.

    Args:
        store: The DuckDB store.
        inbox: The folder scanned for sources (recursively; hidden files are skipped).
        plans: The live plans.
        limits: Per-document parse limits; default :func:`pipeline_limits` (environment).
    """

    def __init__(
        self,
        store: IngestStore,
        inbox: str | Path,
        plans: Sequence[Plan],
        limits: ParseLimits | None = None,
    ) -> None:
        self.store = store
        self.inbox = Path(inbox)
        self.plans = {plan.key: plan for plan in plans}
        self.limits = limits or pipeline_limits()
        self.chunker_calls = 0

    # ------------------------------------------------------------------ plans

    @_step
    def register_plans(self) -> list[str]:
        """Make the engine's plans the live ones in the store; returns newly live keys."""
        return self.store.sync_plans(
            (p.key, p.name, p.fingerprint, p.settings()) for p in self.plans.values()
        )

    # ------------------------------------------------------------------ sources

    @_step
    def scan(self, shards: Iterable[str] = SHARDS) -> dict[str, Any]:
        """Record new, changed and deleted files of the inbox in ``shards``.

        A file is hashed unless its stat (size, mtime, ctime, inode) is the one recorded when
        it was last hashed and that stat was settled then (see ``SETTLED_NS``): size and mtime
        alone can lie (tools restore mtimes), but ctime cannot be set back. A row is written
        only when the hash, size or deleted flag moved, so an unchanged inbox writes nothing.
        Only regular files inside the inbox are read: symbolic links (to files or folders,
        inside or outside the inbox), FIFOs, sockets and devices are skipped and counted in
        ``skipped``, and so are names that are not valid UTF-8.

        Raises:
            FileNotFoundError: The inbox folder does not exist.
        """
        shards = set(shards)
        diff = self._scan_diff(shards)
        self.store.write_sources([w for w in diff.writes if w.shard in shards])
        return diff.stats(shards)

    def _scan_diff(self, shards: set[str]) -> _ScanDiff:
        """What :meth:`scan` of ``shards`` would write and report (no write)."""
        if not self.inbox.is_dir():
            raise FileNotFoundError(f"inbox {self.inbox} is not a folder; pass --inbox or set INGEST_INBOX")
        known = self.store.sources(shards)
        seen: set[str] = set()
        writes: list[SourceRow] = []
        by_shard: dict[str, dict[str, int]] = {}
        # Taken before any stat: see _settled_and_unchanged (earlier is only stricter).
        hashed_at = time.time_ns()
        files, skipped = self._files()
        for path, stat in sorted(files, key=lambda found: found[0]):
            uri = path.as_uri()
            old = known.get(uri)
            if old is None:
                document_id = Document.node_id_for(uri)
                shard = shard_of(document_id)
                if shard not in shards:
                    continue
            else:  # both follow from the URI alone, and the store has them already
                document_id, shard = old.document_id, old.shard
            seen.add(uri)
            counts = by_shard.setdefault(shard, dict.fromkeys(_SCAN_COUNTS, 0))
            counts["files"] += 1
            if old is not None and _settled_and_unchanged(old, stat):
                counts["unchanged"] += 1
                continue
            digest = _hash_file(path)
            if (
                old is not None
                and not old.deleted
                and old.content_hash == digest
                and old.size == stat.st_size
            ):
                # Same bytes under a new stat (touched, copied back): nothing to write, so the
                # file is hashed again next time; a no-op run never writes.
                counts["unchanged"] += 1
                continue
            counts["new" if old is None or old.deleted else "changed"] += 1
            same_bytes = old is not None and old.content_hash == digest
            writes.append(
                SourceRow(
                    uri=uri,
                    path=str(path),
                    document_id=document_id,
                    shard=shard,
                    content_hash=digest,
                    size=stat.st_size,
                    mtime_ns=stat.st_mtime_ns,
                    deleted=False,
                    parse_key=old.parse_key if same_bytes else None,
                    version_id=old.version_id if same_bytes else None,
                    ctime_ns=stat.st_ctime_ns,
                    inode=stat.st_ino,
                    hashed_at_ns=hashed_at,
                )
            )
        for uri, old in known.items():
            if uri not in seen and not old.deleted:
                by_shard.setdefault(old.shard, dict.fromkeys(_SCAN_COUNTS, 0))["deleted"] += 1
                writes.append(SourceRow(**{**old.__dict__, "deleted": True}))
        return _ScanDiff(known, writes, by_shard, skipped)

    def _files(self) -> tuple[list[tuple[Path, os.stat_result]], int]:
        """Regular, non-hidden files under the inbox with their stat, never through a link; and
        how many were skipped.

        ``os.walk`` does not descend into linked folders; a linked file would resolve to its
        target (possibly outside the inbox, or a second name of an inbox file), and a FIFO would
        block the hash, so both are skipped, using ``lstat`` (which does not follow links, and
        of a regular file is its stat).
        """
        inbox = self.inbox.resolve()
        found: list[tuple[Path, os.stat_result]] = []
        skipped = 0
        for root, dirs, files in os.walk(inbox, followlinks=False):
            skipped += sum(1 for d in dirs if not d.startswith(".") and os.path.islink(os.path.join(root, d)))
            dirs[:] = [d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(root, d))]
            for name in files:
                if name.startswith("."):
                    continue
                path = Path(root, name)
                try:
                    stat = path.lstat()
                    str(path).encode("utf-8")  # a name the store cannot hold as text
                except (OSError, UnicodeEncodeError):
                    skipped += 1
                    continue
                # Inside the inbox by construction: ``root`` comes from walking the resolved
                # inbox without entering linked folders, and the file itself is no link.
                if not stat_module.S_ISREG(stat.st_mode):
                    skipped += 1
                    continue
                found.append((path, stat))
        return found, skipped

    # ------------------------------------------------------------------ documents

    @_step
    def parse(self, shards: Iterable[str] = SHARDS) -> dict[str, Any]:
        """Parse every current source in ``shards`` whose bytes (or parsers) changed since last time.

        A parse failure is recorded in ``ingest_failures`` and the same bytes are not tried
        again; the other documents go on.
        """
        return self._parse(self.store.sources(set(shards)).values())

    def _parse(self, sources: Iterable[SourceRow], scanned: Collection[str] = ()) -> dict[str, Any]:
        """:meth:`parse` of ``sources``: as stored, except those whose URI is in ``scanned``
        (rows a scan made and did not write). Those are written with their parse result, in
        its transaction (one write less per edited file), or first when there is none."""
        salt = parser_versions()
        stats = {"parsed": 0, "unchanged": 0, "failed": 0, "deleted": 0, "kinds": {}}
        pending: list[tuple[SourceRow, str]] = []
        unparsed: list[SourceRow] = []
        for source in sources:
            key = f"{source.content_hash}:{salt}"
            if source.deleted:
                stats["deleted"] += 1
            elif not self._needs_parse(source, key):
                stats["unchanged"] += 1
            else:
                pending.append((source, key))
                continue
            if source.uri in scanned:
                unparsed.append(source)
        self.store.write_sources(unparsed)
        batches = (
            (batch, [ParseTask(str(source.path), source.uri, key, self.limits) for source, key in batch])
            for batch in _batches(pending, lambda pair: pair[0].size)
        )
        total = sum(source.size for source, _ in pending)
        for batch, results in run_batches(parse_source, batches, total):
            documents: list[DocumentWrite] = []
            failures: list[FailureWrite] = []
            for (source, key), result in zip(batch, results, strict=True):
                if isinstance(result, DocumentWrite):
                    stats["kinds"][result.kind] = stats["kinds"].get(result.kind, 0) + 1
                    documents.append(result)
                    continue
                if isinstance(result, ParseError):
                    # A refusal over a limit is remembered under the limits in force, so raising
                    # a limit retries exactly the files it refused; other failures per content.
                    over = _OVER_LIMIT.match(result.reason)
                    message = _limit_message(result)
                    parse_key = f"{key}:{over[2]}={getattr(self.limits, over[2])}" if over else key
                else:
                    message, parse_key = result, key
                failures.append(
                    FailureWrite(
                        source.uri, source.content_hash, "parse", message[:2000], parse_key=parse_key
                    )
                )
            self.store.write_parsed(documents, failures, [s for s, _ in batch if s.uri in scanned])
            stats["parsed"] += len(documents)
            stats["failed"] += len(failures)
        return stats

    def _needs_parse(self, source: SourceRow, key: str) -> bool:
        return source.parse_key != key and not self._refused_under_same_limit(source.parse_key, key)

    def _refused_under_same_limit(self, parse_key: str | None, key: str) -> bool:
        """Whether ``parse_key`` records a refusal of these bytes under the limit still in force."""
        if not parse_key or not parse_key.startswith(key + ":"):
            return False
        field, _, value = parse_key[len(key) + 1 :].partition("=")
        return field in ParseLimits.model_fields and str(getattr(self.limits, field)) == value

    # ------------------------------------------------------------------ chunking

    def _items(self, plan: Plan, shards: Iterable[str]) -> tuple[list[_Item], int]:
        items, unrouted = [], 0
        for row in self.store.current_documents(_subset(shards)):
            document_id, version_id, kind, _shard, uri, digest, length = row
            route = plan.route_for(kind)
            if route is None:
                unrouted += 1
                continue
            items.append(_Item(document_id, version_id, kind, uri, digest, route, length))
        return items, unrouted

    def _plan(self, plan_key: str) -> Plan:
        try:
            return self.plans[plan_key]
        except KeyError:
            raise KeyError(
                f"plan {plan_key!r} is not in the plans file; live plans: {sorted(self.plans)}"
            ) from None

    @_step
    def chunk_parents(self, plan_key: str, shards: Iterable[str] = SHARDS) -> dict[str, Any]:
        """Point ``plan_key`` at a parent set for each current document in ``shards``; chunk missing sets."""
        plan = self._plan(plan_key)
        items, unrouted = self._items(plan, shards)
        keys = {
            i.document_id: parent_set_key(i.document_id, i.version_id, i.route.parent_fingerprint)
            for i in items
        }

        return self._run_step(plan_key, "parent", items, keys, lambda i: "", None, unrouted)

    @_step
    def chunk_children(self, plan_key: str, shards: Iterable[str] = SHARDS) -> dict[str, Any]:
        """Point ``plan_key`` at a child set for every document whose current parent set it holds."""
        plan = self._plan(plan_key)
        items, unrouted = self._items(plan, shards)
        parents = self.store.members(plan_key, "parent")
        ready, waiting = [], 0
        for item in items:
            expected = parent_set_key(item.document_id, item.version_id, item.route.parent_fingerprint)
            if parents.get(item.document_id, ("",))[0] == expected:
                ready.append(item)
            else:
                waiting += 1  # parents not (yet) chunked for this version, e.g. they failed
        keys = {
            i.document_id: child_set_key(
                i.document_id, i.version_id, i.route.child_fingerprint, i.route.parent_fingerprint
            )
            for i in ready
        }

        def based_on(item: _Item) -> str:
            return parents[item.document_id][0]

        def parent_rows(batch: list[_Item]) -> dict[str, list[dict[str, Any]]]:
            return self.store.chunk_rows_many([based_on(i) for i in batch])

        stats = self._run_step(plan_key, "child", ready, keys, based_on, parent_rows, unrouted)
        stats["waiting_for_parents"] = waiting
        return stats

    def _failure(self, item: _Item, stage: str, plan_key: str, error: Exception | str) -> FailureWrite:
        return FailureWrite(
            item.uri, item.content_hash, stage, f"{item.uri}: {error}"[:2000], plan_key=plan_key
        )

    def _made(
        self,
        plan_key: str,
        role: str,
        batch: list[_Item],
        results: list[list[dict[str, Any]] | str],
        keys: dict[UUID, str],
    ) -> tuple[list[ChunkSetWrite], list[FailureWrite]]:
        """The sets a batch's chunk jobs made, and its failures."""
        self.chunker_calls += len(results)
        sets, failures = [], []
        for item, result in zip(batch, results, strict=True):
            if isinstance(result, str):
                failures.append(self._failure(item, role, plan_key, result))
                continue
            parent = role == "parent"
            sets.append(
                ChunkSetWrite(
                    set_key=keys[item.document_id],
                    document_id=item.document_id,
                    version_id=item.version_id,
                    level=1 if parent else 0,
                    fingerprint=item.route.parent_fingerprint if parent else item.route.child_fingerprint,
                    parent_fingerprint="" if parent else item.route.parent_fingerprint,
                    rows=result,
                )
            )
        return sets, failures

    def _run_step(self, plan_key, role, items, keys, based_on, parent_rows, unrouted) -> dict[str, Any]:
        """Shared reuse logic of the parent and child steps (see the module docstring).

        ``parent_rows(batch)`` reads the stored parents a child batch splits (None for parents).
        """
        members = self.store.members(plan_key, role)  # kept by the session: see IngestStore._cached
        summaries = self.store.set_summaries(keys.values())  # the stored sets
        failed = self.store.failed_keys(role, plan_key)
        stats = {
            "documents": len(items),
            "unrouted": unrouted,
            "created": 0,
            "reused": 0,
            "failed": 0,
            "skipped_failed": 0,
            "chunks_written": 0,
        }
        relink: list[MemberWrite] = []
        todo: list[_Item] = []
        for item in items:
            key = keys[item.document_id]
            member = MemberWrite(plan_key, item.document_id, role, key, item.version_id, based_on(item))
            if key in summaries:
                stats["reused"] += 1
                if members.get(item.document_id) != (key, member.based_on):
                    relink.append(member)
            elif (item.uri, item.content_hash) in failed:
                stats["skipped_failed"] += 1  # the same content failed under this plan before
            else:
                todo.append(item)
        self.store.write_chunk_sets([], relink)

        def batches() -> Iterator[tuple[list[_Item], list[ChunkTask]]]:
            # Read while the workers chunk the batch before (see workers.run_batches).
            for batch in _batches(todo, lambda item: item.text_length):
                bodies = self.store.document_bodies(
                    [(i.document_id, i.version_id) for i in batch], compressed=True
                )
                rows = parent_rows(batch) if parent_rows else None
                tasks = [
                    ChunkTask(
                        item.route.leveler,
                        keys[item.document_id],
                        item.version_id,
                        bodies[f"{item.document_id}/{item.version_id}"],
                        None if rows is None else rows.get(based_on(item), []),
                    )
                    for item in batch
                ]
                yield batch, tasks

        total = sum(item.text_length for item in todo)
        for batch, results in run_batches(chunk_document, batches(), total):
            sets, failures = self._made(plan_key, role, batch, results, keys)
            made = {s.document_id for s in sets}
            new_members = [
                MemberWrite(plan_key, i.document_id, role, keys[i.document_id], i.version_id, based_on(i))
                for i in batch
                if i.document_id in made
            ]
            stats["chunks_written"] += self.store.write_chunk_sets(sets, new_members)
            self.store.record_failures(failures)
            stats["created"] += len(sets)
            stats["failed"] += len(failures)
            summaries.update((s.set_key, SetSummary.of_rows(s.rows)) for s in sets)
        stats.update(self._token_stats(items, keys, summaries))
        return stats

    # ------------------------------------------------------------------ all steps, as needed

    @_step
    def reconcile(self) -> dict[str, Any]:
        """Run every step over the partitions with work, what ``ingest run`` does without Dagster.

        One connection for the whole sequence (so the file stays locked for its length). With
        nothing pending it reads, chunks and writes nothing.

        Returns:
            The stats of each step that ran, by step name (``chunk_parents`` etc. per plan key),
            and ``pending``: what :meth:`pending` found.
        """
        diff = self._scan_diff_if_inbox(set(SHARDS))
        todo = self._pending(set(SHARDS), diff)
        stats: dict[str, Any] = {"pending": {"documents": todo["documents"], "chunks": todo["chunks"]}}
        if todo["documents"]:
            documents = set(todo["documents"])
            if diff is None:
                stats["scan"] = self.scan(documents)
                stats["parse"] = self.parse(documents)
            else:
                # The inbox and the store as pending() saw them a moment ago, in this same
                # session: neither is read twice, and the scan's rows are written by the parse.
                stats["scan"] = diff.stats(documents)
                stored = {**diff.known, **{w.uri: w for w in diff.writes}}
                scanned = {w.uri for w in diff.writes}
                stats["parse"] = self._parse((s for s in stored.values() if s.shard in documents), scanned)
        if todo["chunks"]:
            self.register_plans()
        for plan_key, plan_shards in todo["chunks"].items():
            for step in ("chunk_parents", "chunk_children", "build_graph"):
                stats.setdefault(step, {})[plan_key] = getattr(self, step)(plan_key, plan_shards)
        return stats

    # ------------------------------------------------------------------ what is left to do

    @_step
    def pending(self, shards: Iterable[str] = SHARDS) -> dict[str, Any]:
        """Say, without writing anything, which partitions a run would have work in.

        Work means: a source new, changed or deleted, a source to parse, a plan not live in the
        store (or a live one no longer in the plans file), or for a plan a document whose parent,
        child or graph member is missing or stale (contents that failed before under the plan
        are not work: the steps skip them too). A shard with source work is also chunk work for
        every plan (its documents get new versions).

        Returns:
            ``documents``: sorted shards with source or parse work; ``chunks``: plan key ->
            sorted shards with work; ``idle``: per shard, what a run of that shard would report
            when it has no work (``files``, ``unchanged`` documents; per plan ``parent`` /
            ``child`` / ``graph`` sets reused), so a caller can report skipped shards.
        """
        shards = set(shards)
        return self._pending(shards, self._scan_diff_if_inbox(shards))

    def _scan_diff_if_inbox(self, shards: set[str]) -> _ScanDiff | None:
        """:meth:`_scan_diff`, or None when the inbox is missing (the scan step reports that)."""
        try:
            return self._scan_diff(shards)
        except FileNotFoundError:
            return None

    def _pending(self, shards: set[str], diff: _ScanDiff | None) -> dict[str, Any]:
        """:meth:`pending` from a scan of ``shards`` (None: the inbox is missing)."""
        idle: dict[str, dict[str, Any]] = {s: {"files": 0, "unchanged": 0, "plans": {}} for s in shards}
        if diff is None:
            return {"documents": sorted(shards), "chunks": {}, "idle": idle}
        documents: set[str] = {w.shard for w in diff.writes}
        for shard, counts in diff.by_shard.items():
            idle[shard]["files"] = counts["files"]
        salt = parser_versions()
        for source in diff.known.values():
            if source.deleted:
                continue
            if self._needs_parse(source, f"{source.content_hash}:{salt}"):
                documents.add(source.shard)
            else:
                idle[source.shard]["unchanged"] += 1
        live = set(self.store.live_plans())
        chunks: dict[str, set[str]] = {}
        for plan_key, plan in self.plans.items():
            work = set(documents) if plan_key in live else set(shards)
            counts = self._plan_pending(plan, shards, work)
            for shard in shards:
                idle[shard]["plans"][plan_key] = counts.get(shard, {"parent": 0, "child": 0, "graph": 0})
            if work:
                chunks[plan_key] = work
        if live - set(self.plans) and self.plans and not chunks:
            # Only a retirement: one chunk run registers the plans file's plans.
            chunks[next(iter(self.plans))] = {min(shards)}
        return {
            "documents": sorted(documents),
            "chunks": {key: sorted(value) for key, value in chunks.items()},
            "idle": idle,
        }

    def _plan_pending(self, plan: Plan, shards: set[str], work: set[str]) -> dict[str, dict[str, int]]:
        """Add to ``work`` the shards where ``plan`` has a member to write; count reused sets."""
        by_role = self.store.members_by_role(plan.key)
        parents, children, graphs = by_role["parent"], by_role["child"], by_role["graph"]
        failed_parent = self.store.failed_keys("parent", plan.key)
        failed_child = self.store.failed_keys("child", plan.key)
        counts: dict[str, dict[str, int]] = {}
        for row in self.store.current_documents(_subset(shards)):
            document_id, version_id, kind, shard, uri, digest, _ = row
            route = plan.route_for(kind)
            if route is None:
                continue
            count = counts.setdefault(shard, {"parent": 0, "child": 0, "graph": 0})
            parent = parent_set_key(document_id, version_id, route.parent_fingerprint)
            if parents.get(document_id) != (parent, ""):
                if (uri, digest) not in failed_parent:
                    work.add(shard)
                continue
            count["parent"] += 1
            child = child_set_key(document_id, version_id, route.child_fingerprint, route.parent_fingerprint)
            if children.get(document_id) != (child, parent):
                if (uri, digest) not in failed_child:
                    work.add(shard)
                continue
            count["child"] += 1
            if graphs.get(document_id) != (graph_set_key(parent, child), child):
                work.add(shard)
                continue
            count["graph"] += 1
        return counts

    # ------------------------------------------------------------------ graph

    @_step
    def build_graph(self, plan_key: str, shards: Iterable[str] = SHARDS) -> dict[str, Any]:
        """Point ``plan_key`` at graph records (document, chunk nodes; HAS_CHUNK, PARENT_OF, NEXT edges)."""
        plan = self._plan(plan_key)
        items, unrouted = self._items(plan, shards)
        by_role = self.store.members_by_role(plan_key)
        parents, children, graphs = by_role["parent"], by_role["child"], by_role["graph"]
        ready: list[tuple[_Item, str, str, str]] = []
        for item in items:
            parent = parents.get(item.document_id, ("", ""))[0]
            child, based = children.get(item.document_id, ("", ""))
            expected = parent_set_key(item.document_id, item.version_id, item.route.parent_fingerprint)
            if parent == expected and based == parent:
                ready.append((item, parent, child, graph_set_key(parent, child)))
        stored = self.store.existing_sets([g for *_, g in ready], table="graph_sets")
        stats = {
            "documents": len(items),
            "unrouted": unrouted,
            "created": 0,
            "reused": 0,
            "waiting_for_chunks": len(items) - len(ready),
            "rows_written": 0,
        }
        relink, todo = [], []
        for item, parent, child, key in ready:
            member = MemberWrite(plan_key, item.document_id, "graph", key, item.version_id, child)
            if key in stored:
                stats["reused"] += 1
                if graphs.get(item.document_id) != (key, child):
                    relink.append(member)
            else:
                todo.append((item, parent, child, key, member))
        self.store.write_graph_sets([], relink)

        # Parents and children each hold about the document's text, the node records again.
        def batches() -> Iterator[tuple[list[Any], list[GraphTask]]]:
            for batch in _batches(todo, lambda entry: 3 * entry[0].text_length):
                rows = self.store.graph_rows([k for _, p, c, _, _ in batch for k in (p, c)])
                tasks = [
                    GraphTask(
                        item.document_id,
                        item.version_id,
                        item.uri,
                        item.kind,
                        parent,
                        child,
                        key,
                        rows.get(parent, []),
                        rows.get(child, []),
                    )
                    for item, parent, child, key, _ in batch
                ]
                yield batch, tasks

        total = sum(3 * entry[0].text_length for entry in todo)
        for batch, results in run_batches(graph_records, batches(), total):
            sets = [s for s in results if isinstance(s, GraphSetWrite)]
            failures = [
                self._failure(item, "graph", plan_key, result)
                for (item, *_), result in zip(batch, results, strict=True)
                if isinstance(result, str)
            ]
            made = {s.document_id for s in sets}
            members = [m for item, *_, m in batch if item.document_id in made]
            stats["rows_written"] += self.store.write_graph_sets(sets, members)
            self.store.record_failures(failures)
            stats["created"] += len(sets)
        return stats

    # ------------------------------------------------------------------ reporting

    def _token_stats(
        self, items: Sequence[_Item], keys: dict[UUID, str], summaries: dict[str, SetSummary]
    ) -> dict[str, Any]:
        """Token-size stats and a short preview over the items' sets that are stored
        (``summaries``: what the step read of them, and made)."""
        sets = {
            keys[i.document_id]: (i.uri, summaries[keys[i.document_id]])
            for i in items
            if keys.get(i.document_id) in summaries
        }
        stats = self.store.summarize(sets, PREVIEW_ROWS)
        stats["preview"] = [
            {"document": uri[-40:], "index": index, "tokens": tokens, "text": text}
            for tokens, uri, index, text in stats["preview"]
        ]
        return stats
