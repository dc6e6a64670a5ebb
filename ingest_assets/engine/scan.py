"""The scan step: new, changed and deleted inbox files against the store (no Dagster here).

A file is hashed unless its stat (size, mtime, ctime, inode) is the one recorded when it was
last hashed and that stat was settled then (see :data:`SETTLED_NS`): size and mtime alone can
lie (tools restore mtimes), but ctime cannot be set back. A row is written only when the hash,
size or deleted flag moved, so an unchanged inbox writes nothing.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path

from chunking import Document
from ingest_assets.engine.keys import shard_of
from ingest_assets.engine.results import ScanResult
from ingest_assets.inbox import GONE, walk_inbox
from ingest_assets.store import IngestStore, SourceRow

__all__ = ["SETTLED_COARSE_NS", "SETTLED_NS", "SKIPPED_SHOWN", "ScanDiff", "scan_diff"]

# The skipped inbox entries a command or the sensor names one by one; the rest are counted.
SKIPPED_SHOWN = 10

# A file is read again unless its stat matches the one recorded when it was hashed and that
# stat was settled then: its last change stamped well before the hash began. A change made in
# the same timestamp tick as the hash could otherwise leave the stat as it was. Linux stamps
# files from a clock that ticks every 10 ms or less; stamps without a sub-millisecond part
# suggest a coarse file system (FAT keeps 2 s), which gets the wide margin.
SETTLED_NS = 50_000_000
SETTLED_COARSE_NS = 3_000_000_000
# On Windows st_ctime is the creation time, which an edit does not move: never trust the stat.
_CTIME_IS_CHANGE_TIME = os.name != "nt"


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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


@dataclass
class ScanDiff:
    """What a scan of the inbox found against the store (nothing written).

    Attributes:
        known: The stored sources of the scanned shards, by URI.
        writes: The source rows to write: new, changed and deleted files.
        results: Per scanned shard, what the scan step reports.
    """

    known: dict[str, SourceRow]
    writes: list[SourceRow]
    results: dict[str, ScanResult]


def _utf8(path: Path) -> bool:
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(path: Path) -> str:
    """``path`` as text people can read: the bytes of a name that is not UTF-8 as escapes
    (``caf\\xe9.md``)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def scan_diff(store: IngestStore, inbox: str | Path, shards: set[str]) -> ScanDiff:
    """Compare the inbox files of ``shards`` with the store; read-only.

    Raises:
        FileNotFoundError: The inbox folder does not exist.
    """
    # Taken before any stat: see _settled_and_unchanged (earlier is only stricter).
    hashed_at = time.time_ns()
    walk = walk_inbox(inbox)
    known = store.sources(shards)
    results = {shard: ScanResult() for shard in shards}
    for path, why in walk.skipped_paths:
        # Counted and named once, in the shard the entry would belong to as a file (a name that
        # is not UTF-8 by its escaped form: no id can hold the undecodable bytes).
        shard = shard_of(Document.node_id_for(path.as_uri() if _utf8(path) else _shown(path)))
        if shard in results:
            results[shard].skipped += 1
            results[shard].skipped_files.append(f"{_shown(path)}: {why}")
    writes: list[SourceRow] = []
    seen: set[str] = set()
    for found in walk.files:
        uri, stat = found.uri, found.stat
        old = known.get(uri)
        if old is None:
            document_id = Document.node_id_for(uri)
            shard = shard_of(document_id)
            if shard not in shards:
                continue
        else:  # both follow from the URI alone, and the store has them already
            document_id, shard = old.document_id, old.shard
        seen.add(uri)
        counts = results[shard]
        counts.files += 1
        if old is not None and _settled_and_unchanged(old, stat):
            counts.unchanged += 1
            continue
        try:
            digest = _hash_file(found.path)
        except OSError as error:
            # Unreadable (permissions) or gone since the walk: no work, named like the walk's
            # skipped entries, and not taken for deleted (a stored version stays served).
            counts.files -= 1
            counts.skipped += 1
            if isinstance(error, FileNotFoundError):
                why = GONE  # the next scan finds it deleted
            else:
                why = f"cannot be read ({error.strerror or type(error).__name__}; make it readable)"
            counts.skipped_files.append(f"{_shown(found.path)}: {why}")
            continue
        if old is not None and not old.deleted and old.content_hash == digest and old.size == stat.st_size:
            # Same bytes under a new stat (touched, copied back): nothing to write, so the file
            # is hashed again next time; a no-op run never writes.
            counts.unchanged += 1
            continue
        if old is None or old.deleted:
            counts.new += 1
        else:
            counts.changed += 1
        same_bytes = old is not None and old.content_hash == digest
        writes.append(
            SourceRow(
                uri=uri,
                path=str(found.path),
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
            results[old.shard].deleted += 1
            writes.append(replace(old, deleted=True))
    return ScanDiff(known, writes, results)
