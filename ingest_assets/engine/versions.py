"""What the store serves in each partition, as a short digest: the data version Dagster records.

No Dagster here. A partition's version moves exactly when what the store's views show there
moves: ``sources`` when a file of the shard is added, changed or deleted; ``documents`` when a
current document version of the shard changes; a chunk asset when a document of the shard
points the plan at another set of that role. A run that changes nothing reports the versions it
found, so Dagster marks nothing downstream stale; an edit moves exactly its shard's versions,
down to ``graph_nodes``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from ingest_assets.store import IngestStore
from ingest_assets.store.lists import json_list

__all__ = ["ROLE_OF_STEP", "partition_versions"]

# The plan-member role each chunk step writes.
ROLE_OF_STEP = {"parent_chunks": "parent", "child_chunks": "child", "graph_nodes": "graph"}

_EMPTY = hashlib.sha256(b"").hexdigest()[:16]


def _digests(rows: Iterable[tuple[str, str]]) -> dict[str, str]:
    return {shard: digest[:16] for shard, digest in rows}


def partition_versions(
    store: IngestStore, step: str, shards: Iterable[str], plan_key: str | None = None
) -> dict[str, str]:
    """The version of each of ``shards`` of ``step`` (and ``plan_key``, for a chunk step).

    A shard with nothing in it has the version of nothing, the same for every empty shard.
    """
    wanted = sorted(set(shards))
    if step == "sources":
        rows = store.query(
            "SELECT shard, sha256(string_agg(uri || ':' || content_hash || ':' || deleted::VARCHAR, ',' "
            "ORDER BY uri)) FROM sources WHERE list_contains(?::JSON::VARCHAR[], shard) GROUP BY shard",
            [json_list(wanted)],
        )
    elif step == "documents":
        rows = store.query(
            "SELECT shard, sha256(string_agg(document_id::VARCHAR || ':' || version_id::VARCHAR, ',' "
            "ORDER BY document_id)) FROM current_documents WHERE list_contains(?::JSON::VARCHAR[], shard) "
            "GROUP BY shard",
            [json_list(wanted)],
        )
    elif step == "embeddings":
        # The child sets embedded under the plan's recorded stage: a model change moves it.
        rows = store.query(
            "SELECT d.shard, sha256(string_agg(m.document_id::VARCHAR || ':' || m.set_key || ':' || "
            "p.embedding, ',' ORDER BY m.document_id)) FROM staged_members m "
            "JOIN current_documents d ON d.document_id = m.document_id AND d.version_id = m.version_id "
            "JOIN plan_embeddings p ON p.plan_key = m.plan_key "
            "JOIN embedded_sets e ON e.set_key = m.set_key AND e.embedding = p.embedding "
            "WHERE m.plan_key = ? AND m.role = 'child' AND list_contains(?::JSON::VARCHAR[], d.shard) "
            "GROUP BY d.shard",
            [plan_key, json_list(wanted)],
        )
    else:
        rows = store.query(
            "SELECT d.shard, sha256(string_agg(m.document_id::VARCHAR || ':' || m.set_key, ',' "
            "ORDER BY m.document_id)) FROM staged_members m "
            "JOIN current_documents d ON d.document_id = m.document_id AND d.version_id = m.version_id "
            "WHERE m.plan_key = ? AND m.role = ? AND list_contains(?::JSON::VARCHAR[], d.shard) "
            "GROUP BY d.shard",
            [plan_key, ROLE_OF_STEP[step], json_list(wanted)],
        )
    found = _digests(rows)
    return {shard: found.get(shard, _EMPTY) for shard in wanted}
