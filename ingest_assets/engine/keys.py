"""Shards and the reuse keys of documents and sets (no Dagster, no I/O).

* a parent set is keyed by (document id, version id, level 1, parent fingerprint);
* a child set by (document id, version id, level 0, child fingerprint, parent fingerprint);
* a graph set by (parent set key, child set key);
* a parse by (content hash, every parser's version).

A key that is stored means reuse, so a run with nothing changed makes no parser or chunker call.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from functools import cache
from typing import Any
from uuid import UUID

from chunking.ids import settings_hash
from ingest_assets.store.shards import SHARD_COUNT, SHARDS, shard_of

__all__ = [
    "SHARDS",
    "SHARD_COUNT",
    "child_set_key",
    "chunk_partition",
    "expected_keys",
    "graph_set_key",
    "is_chunk_partition",
    "parent_set_key",
    "parse_key",
    "parser_versions",
    "plan_and_shard",
    "shard_of",
    "stretches",
]


def stretches(shards: Iterable[str]) -> list[list[str]]:
    """``shards`` cut into runs of consecutive shards, in order: a run over one stretch (a
    partition range) materializes exactly those shards."""
    runs: list[list[str]] = []
    for shard in sorted(set(shards)):
        if runs and SHARDS.index(runs[-1][-1]) == SHARDS.index(shard) - 1:
            runs[-1].append(shard)
        else:
            runs.append([shard])
    return runs


def chunk_partition(plan_key: str, shard: str) -> str:
    """The partition key of one plan key's shard on the chunk assets: Dagster's key of the
    multi-partition (dimensions ``plan`` and ``shard`` in name order, joined by ``|``)."""
    return f"{plan_key}|{shard}"


def is_chunk_partition(partition: str) -> bool:
    """Whether ``partition`` is a chunk asset's key (``<plan key>|<shard>``, see
    :func:`chunk_partition`) rather than a document asset's (``<shard>``)."""
    return "|" in partition


def plan_and_shard(partition: str) -> tuple[str, str]:
    """The plan key and shard of a chunk asset's partition key (see :func:`chunk_partition`).

    Raises:
        ValueError: ``partition`` is not ``<plan key>|<shard>``.
    """
    plan_key, bar, shard = partition.rpartition("|")
    if not bar or not plan_key or shard not in SHARDS:
        raise ValueError(
            f"{partition!r} is not a chunk partition: <plan key>|<shard>, shards {SHARDS[0]}..{SHARDS[-1]}"
        )
    return plan_key, shard


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


def expected_keys(document_id: UUID, version_id: UUID, route: Any) -> tuple[str, str, str]:
    """The parent, child and graph set keys a plan's ``route`` (a ``plans.Route``) points one
    document version at: what the steps write, the pending check looks for and
    ``ingest plans --diff`` predicts, from this one function."""
    parent = parent_set_key(document_id, version_id, route.parent_fingerprint)
    child = child_set_key(document_id, version_id, route.child_fingerprint, route.parent_fingerprint)
    return parent, child, graph_set_key(parent, child)


@cache
def parser_versions() -> str:
    """Hash of every parser's version: part of the key that decides whether to parse again."""
    from chunking.parsers import PARSERS

    versions = {}
    for kind in sorted(PARSERS):
        module = importlib.import_module(f"chunking.parsers.{kind}")
        versions[kind] = getattr(module, "PARSER_VERSION", "?")
    return settings_hash(versions)


def parse_key(content_hash: str) -> str:
    """The parse key of some bytes under the parsers of this code."""
    return f"{content_hash}:{parser_versions()}"
