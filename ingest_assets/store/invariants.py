"""Invariants of what the store shows, as plain functions (the asset checks call them).

Each returns a list of violations (empty when the invariant holds), each a short string
naming the plan, document and chunk, capped so a broken store cannot flood the UI.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from ingest_assets.store.connection import retried
from ingest_assets.store.lists import json_list, keys_filter
from ingest_assets.store.shards import shard_of
from ingest_assets.store.store import IngestStore
from ingest_assets.store.writes import inflate_body

__all__ = [
    "PER_SET_CHECKS",
    "all_violations",
    "budgets",
    "exact_slices",
    "full_verification",
    "graph_edges_resolve",
    "mark_verified",
    "no_orphans",
    "parent_covers_children",
    "pending_sets",
    "unique_ids",
    "unserved",
    "vector_coverage",
]

LIMIT = 20
_ROLE = {1: "parent", 0: "child"}
# The chunks and edges the checks look at: what every building or live plan has built for the
# current documents (what it serves, and what it is about to serve).
_CHUNKS = (
    "(SELECT m.plan_key, c.* FROM staged_members m JOIN chunks c ON c.set_key = m.set_key "
    "WHERE m.role IN ('parent', 'child'))"
)
_EDGES = (
    "(SELECT m.plan_key, e.* FROM staged_members m JOIN graph_edge_rows e ON e.set_key = m.set_key "
    "WHERE m.role = 'graph')"
)
# Sets not yet verified: per-set checks with pending_only=True look at these alone.
_PENDING = "AND m.set_key NOT IN (SELECT set_key FROM verified_sets)"


def _keys_filter(column: str, keys: Sequence[str]) -> str:
    return keys_filter(column, len(keys))


def _chunks_sql(
    columns: str, level: int, pending_only: bool, extra: str = "", *, set_keys: Sequence[str] | None = None
) -> str:
    """Current chunks of one level (with their set), optionally only from unverified sets, or
    only from ``set_keys`` (the statement's first parameter: ``_given(set_keys)``)."""
    source, pending = "chunks", _PENDING if pending_only else ""
    if set_keys is not None:
        source, pending = f"(SELECT * FROM chunks WHERE {_keys_filter('set_key', set_keys)})", ""
    return (
        f"SELECT {columns} FROM staged_members m JOIN {source} c ON c.set_key = m.set_key "
        f"WHERE m.role = '{_ROLE[level]}' {pending} {extra}"
    )


def _given(set_keys: Sequence[str] | None) -> list[Any]:
    """The leading statement parameter of a check limited to ``set_keys`` (none: every set)."""
    return [] if set_keys is None else [json_list(sorted(set_keys))]


def _staged_by_id(level: int, ids: str) -> str:
    """The current chunks of ``level`` (plan, id, level, document) whose id is among ``ids`` (a
    subquery): a lookup that reads a few narrow columns of every chunk, never the text."""
    return (
        "(SELECT m.plan_key, c.id, c.level, c.document_id FROM (SELECT set_key, id, level, document_id "
        f"FROM chunks WHERE level = {int(level)} AND id IN ({ids})) c "
        f"JOIN staged_members m ON m.set_key = c.set_key AND m.role = '{_ROLE[level]}')"
    )


def pending_sets(
    store: IngestStore, level: int | None = None, scope: Mapping[str, Sequence[str]] | None = None
) -> list[str]:
    """Keys of current sets (parent and child, or of one ``level``) whose per-set invariants
    were never verified; with ``scope`` (plan key -> shards), only the sets of those plans'
    documents in those shards: what one run wrote, which a run of other shards, writing at the
    same time, leaves to its own check."""
    roles = ["parent", "child"] if level is None else [_ROLE[level]]
    rows = store.query(
        "SELECT DISTINCT m.set_key, m.plan_key, m.document_id::VARCHAR FROM staged_members m "
        f"WHERE list_contains(?::JSON::VARCHAR[], m.role) {_PENDING}",
        [json_list(roles)],
    )
    if scope is not None:
        wanted = {plan: set(shards) for plan, shards in scope.items()}
        rows = [row for row in rows if shard_of(row[2]) in wanted.get(row[1], ())]
    return sorted({row[0] for row in rows})


@retried
def mark_verified(store: IngestStore, set_keys: list[str]) -> None:
    """Record that ``set_keys`` passed the per-set invariants (they never change afterwards);
    keys recorded already are left as they are. One transaction, run again on a lake conflict."""
    if not set_keys:
        return
    set_keys = sorted(set(set_keys))
    with store.transaction(store.set_shards(set_keys)) as con:
        con.execute(
            "INSERT INTO verified_sets SELECT k, now()::TIMESTAMP "
            "FROM (SELECT unnest(?::JSON::VARCHAR[]) AS k) "
            "WHERE k NOT IN (SELECT set_key FROM verified_sets)",
            [json_list(set_keys)],
        )


def unique_ids(store: IngestStore, level: int, set_keys: Sequence[str] | None = None) -> list[str]:
    """No chunk id appears twice in one plan's current view at ``level`` (given ``set_keys``:
    no id of those sets' chunks does; the rest of the view is read for those ids alone)."""
    if set_keys is None:
        rows = store.query(
            "SELECT plan_key, id, count(*) FROM " + _CHUNKS + " WHERE level = ? "
            "GROUP BY ALL HAVING count(*) > 1 LIMIT ?",
            [level, LIMIT],
        )
    else:
        fresh = _chunks_sql("c.id", level, False, set_keys=set_keys)
        rows = store.query(
            "SELECT plan_key, id, count(*) FROM " + _staged_by_id(level, fresh) + " "
            "GROUP BY ALL HAVING count(*) > 1 LIMIT ?",
            [*_given(set_keys), LIMIT],
        )
    return [f"{plan}: chunk {chunk_id} appears {n} times" for plan, chunk_id, n in rows]


class _DocumentText(BaseModel):
    """The one field of a stored ``Document`` body the slice check reads: pydantic's JSON reader
    skips the units and metadata without building them, where ``json.loads`` builds them all."""

    text: str


def _document_texts(store: IngestStore, keys: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The texts of stored document versions by ``"<document_id>/<version_id>"``."""
    bodies = store.document_bodies(keys, compressed=True)
    return {key: _DocumentText.model_validate_json(inflate_body(body)).text for key, body in bodies.items()}


def exact_slices(
    store: IngestStore, level: int, *, pending_only: bool = False, set_keys: Sequence[str] | None = None
) -> list[str]:
    """A text chunk's text equals the document text at its offsets (unless it says it is not a
    slice); of every current set, the unverified ones (``pending_only``) or ``set_keys``."""
    # Ids as text and the span and slice flag read by DuckDB: a UUID object and two JSON
    # parses per chunk in Python were most of this rule's time.
    rows = store.query(
        _chunks_sql(
            "m.plan_key, c.id::VARCHAR, c.text, json_extract(c.provenance, '$.start')::BIGINT, "
            "json_extract(c.provenance, '$.end')::BIGINT, "
            "CASE WHEN json_exists(c.metadata, '$.exact_slice') "
            "THEN coalesce(json_extract(c.metadata, '$.exact_slice')::BOOLEAN, false) ELSE true END, "
            "c.document_id::VARCHAR, c.version_id::VARCHAR",
            level,
            pending_only,
            "AND json_extract_string(c.provenance, '$.kind') = 'text'",
            set_keys=set_keys,
        ),
        _given(set_keys),
    )
    by_document: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for row in rows:
        by_document.setdefault((row[6], row[7]), []).append(row)
    bad: list[str] = []
    keys = sorted(by_document)
    for first in range(0, len(keys), 64):
        # A few documents' texts at a time in memory: a join would copy one into every chunk row.
        texts = _document_texts(store, keys[first : first + 64])
        for key in keys[first : first + 64]:
            text_of_document = texts[f"{key[0]}/{key[1]}"]
            for plan, chunk_id, text, start, end, exact, _, _ in by_document[key]:
                if exact and text_of_document[start:end] != text:
                    bad.append(f"{plan}: chunk {chunk_id} is not the document text at {start}..{end}")
                    if len(bad) >= LIMIT:
                        return bad
    return bad


def budgets(
    store: IngestStore, level: int, *, pending_only: bool = False, set_keys: Sequence[str] | None = None
) -> list[str]:
    """Every chunk is within the budget of the chunker that made it.

    The budget is the chunker's ``size``/``chunk_size``, measured on ``token_count``; a turn
    window measures its turns alone (``turn_tokens``), and a chunk a turn-window's fallback made
    (``turn-window:<strategy>``) is held to the fallback's budget. Of every current set, the
    unverified ones (``pending_only``) or ``set_keys``.
    """
    plans = dict(store.query("SELECT plan_key, settings FROM plan_status WHERE state <> 'retired'"))
    chunkers: dict[tuple[str, str], dict[str, Any]] = {}
    for plan_key, settings in plans.items():
        for route in json.loads(settings).values():
            role = _ROLE[level]
            chunkers[(plan_key, _fingerprint_of(route[role]))] = route[role]
    rows = store.query(
        _chunks_sql(
            "m.plan_key, c.id::VARCHAR, c.chunker, c.chunker_hash, c.token_count, "
            "json_extract(c.metadata, '$.turn_tokens')::BIGINT",
            level,
            pending_only,
            set_keys=set_keys,
        ),
        _given(set_keys),
    )
    bad = []
    for plan, chunk_id, chunker, fingerprint, tokens, turn_tokens in rows:
        settings = chunkers.get((plan, fingerprint))
        if settings is None or tokens is None:
            continue
        measured = tokens
        if ":" in (chunker or "") and isinstance(settings.get("fallback"), dict):
            settings = settings["fallback"]
        elif turn_tokens is not None:
            measured = turn_tokens
        budget = _budget(settings)
        if measured > budget:
            bad.append(f"{plan}: chunk {chunk_id} holds {measured} tokens, over its budget of {budget}")
    return bad[:LIMIT]


def _fingerprint_of(settings: dict[str, Any]) -> str:
    from chunking.chunkers.base import fingerprint_of

    return fingerprint_of(settings)


def _budget(settings: dict[str, Any]) -> int:
    # Stored settings: plans registered before the section chunker's ``size`` became
    # ``chunk_size`` keep the old name.
    return int(settings.get("size") or settings.get("chunk_size") or 0) or 1 << 62


def no_orphans(store: IngestStore, set_keys: Sequence[str] | None = None) -> list[str]:
    """Every current child's parent (of the child sets ``set_keys``, else of every one) is a
    current parent of the same plan and document."""
    children, parents = _CHUNKS, _CHUNKS
    if set_keys is not None:  # the given children, and the current parents they name
        children = "(" + _chunks_sql("m.plan_key, c.*", 0, False, set_keys=set_keys) + ")"
        named = _chunks_sql("c.parent_id", 0, False, set_keys=set_keys)
        parents = _staged_by_id(1, named)
    # Fragments of this module's SQL, joined: the keys are bound parameters.
    rows = store.query(
        "SELECT c.plan_key, c.id, c.parent_id FROM " + children + " c "
        "LEFT JOIN " + parents + " p ON p.plan_key = c.plan_key AND p.id = c.parent_id AND p.level = 1 "
        "AND p.document_id = c.document_id WHERE c.level = 0 AND p.id IS NULL LIMIT ?",
        [*_given(set_keys), *_given(set_keys), LIMIT],
    )
    return [f"{plan}: child {chunk_id} points at missing parent {parent}" for plan, chunk_id, parent in rows]


def parent_covers_children(
    store: IngestStore, *, pending_only: bool = False, set_keys: Sequence[str] | None = None
) -> list[str]:
    """A text child's span lies inside its parent's span; of every current child set, the
    unverified ones (``pending_only``) or ``set_keys``."""
    parents, params = _CHUNKS, _given(set_keys)
    if set_keys is not None:  # the parent sets the given children were cut from, and no other
        named = _chunks_sql("DISTINCT m.based_on", 0, False, set_keys=set_keys)
        cut_from = sorted(key for (key,) in store.query(named, params))
        parents = "(" + _chunks_sql("m.plan_key, c.*", 1, False, set_keys=cut_from) + ")"
        params = [*params, *_given(cut_from)]
    rows = store.query(
        _chunks_sql(
            "m.plan_key, c.id::VARCHAR, c.provenance, p.provenance",
            0,
            pending_only,
            "AND json_extract_string(c.provenance, '$.kind') = 'text' "
            "AND json_extract_string(p.provenance, '$.kind') = 'text'",
            set_keys=set_keys,
        ).replace(
            "WHERE m.role",
            f"JOIN {parents} p ON p.plan_key = m.plan_key AND p.id = c.parent_id AND p.level = 1 "
            "WHERE m.role",
            1,
        ),
        params,
    )
    bad = []
    for plan, chunk_id, child, parent in rows:
        c, p = json.loads(child), json.loads(parent)
        if not p["start"] <= c["start"] <= c["end"] <= p["end"]:
            bad.append(
                f"{plan}: child {chunk_id} at {c['start']}..{c['end']} is outside {p['start']}..{p['end']}"
            )
    return bad[:LIMIT]


def graph_edges_resolve(store: IngestStore, plan_shards: dict[str, list[str]] | None = None) -> list[str]:
    """Every graph edge (of ``plan_shards``: plan key -> shards, else of every building or live
    plan) joins two graph nodes of the same plan."""
    # The node ids of the current graph sets, as graph_nodes has them, without that view's join
    # of each node's text (an OR join that DuckDB 1.5 runs as a nested loop: minutes on a
    # 200k-row table).
    edges, params, named = _EDGES, [], ""
    if plan_shards is not None:  # the partitions' graph sets' edges; nodes looked up by id alone
        graph_sets = [
            key
            for (key,) in store.query(
                "SELECT m.set_key FROM staged_members m JOIN current_documents d USING (document_id) "
                "WHERE m.role = 'graph' AND list_contains(?::JSON::VARCHAR[], m.plan_key || '|' || d.shard)",
                [_partitions(plan_shards)],
            )
        ]
        edges = (
            "(SELECT m.plan_key, e.* FROM staged_members m JOIN (SELECT * FROM graph_edge_rows "
            f"WHERE {_keys_filter('set_key', graph_sets)}) e ON e.set_key = m.set_key WHERE m.role = 'graph')"
        )
        params = _given(graph_sets)
        named = "AND n.id IN (SELECT source_id FROM edges UNION ALL SELECT target_id FROM edges)"
    rows = store.query(
        "WITH edges AS (SELECT * FROM " + edges + "), "
        "nodes AS (SELECT m.plan_key, n.id FROM staged_members m JOIN "
        "  (SELECT set_key, id FROM graph_node_rows n WHERE TRUE " + named + ") n "
        "  ON n.set_key = m.set_key WHERE m.role = 'graph') "
        "SELECT e.plan_key, e.type, e.source_id, e.target_id FROM edges e "
        "LEFT JOIN nodes s ON s.plan_key = e.plan_key AND s.id = e.source_id "
        "LEFT JOIN nodes t ON t.plan_key = e.plan_key AND t.id = e.target_id "
        "WHERE s.id IS NULL OR t.id IS NULL LIMIT ?",
        [*params, LIMIT],
    )
    return [f"{plan}: {kind} edge {a} -> {b} has a missing end" for plan, kind, a, b in rows]


def _partitions(plan_shards: dict[str, list[str]]) -> str:
    """``plan_shards`` as the JSON list of its ``<plan key>|<shard>`` partitions."""
    return json_list(f"{plan}|{shard}" for plan, shards in sorted(plan_shards.items()) for shard in shards)


def coverage(store: IngestStore, plan_shards: dict[str, list[str]] | None = None) -> list[str]:
    """Every current document a building or live plan routes has a parent, child and graph set
    at its current version in that plan (of ``plan_shards``: plan key -> shards, else every
    such plan and shard), unless its content failed a step under the plan (``ingest_failures``
    lists it)."""
    rows = store.query(
        "SELECT p.plan_key, d.shard, d.source_uri, r.role FROM plan_status p "
        "CROSS JOIN current_documents d CROSS JOIN (SELECT unnest(['parent', 'child', 'graph']) AS role) r "
        "WHERE p.state <> 'retired' AND NOT EXISTS (SELECT 1 FROM staged_members m "
        "  WHERE m.plan_key = p.plan_key AND m.document_id = d.document_id AND m.role = r.role) "
        "AND NOT EXISTS (SELECT 1 FROM failure_log f WHERE f.source_uri = d.source_uri "
        "  AND f.content_hash = d.content_hash AND f.plan_key = p.plan_key) "
        "ORDER BY 1, 2, 3, 4"
    )
    plans = dict(store.query("SELECT plan_key, settings FROM plan_status WHERE state <> 'retired'"))
    kinds = dict(store.query("SELECT source_uri, kind FROM current_documents"))
    bad = []
    for plan, shard, uri, role in rows:
        if plan_shards is not None and shard not in plan_shards.get(plan, ()):
            continue
        routes = json.loads(plans[plan])
        if kinds[uri] not in routes and "*" not in routes:
            continue  # the plan does not route this kind
        bad.append(f"{plan}|{shard}: {uri} has no current {role} set")
    return bad[:LIMIT]


def vector_coverage(
    store: IngestStore, embeddings: dict[str, str], plan_shards: dict[str, list[str]] | None = None
) -> list[str]:
    """Every current child chunk of a plan that embeds (``embeddings``: plan key -> embedding key
    of its config) has a vector under that embedding (of ``plan_shards``, else every shard)."""
    bad: list[str] = []
    recorded = {
        key: (embedding, model, mode)
        for key, embedding, model, mode in store.query(
            "SELECT plan_key, embedding, model, text_mode FROM plan_embeddings"
        )
    }
    for plan_key, embedding in sorted(embeddings.items()):
        if plan_shards is not None and plan_key not in plan_shards:
            continue
        if recorded.get(plan_key, ("",))[0] != embedding:
            bad.append(f"{plan_key}: its embedding stage is not recorded (materialize embeddings)")
            continue
        _, model, mode = recorded[plan_key]
        # Each chunk's text hash and its vector, for the children the plan has built (building
        # keys included: a key is checked before it serves).
        rows = store.query(
            "SELECT d.shard, d.source_uri, count(*) FROM staged_members m "
            "JOIN current_documents d ON d.document_id = m.document_id "
            "JOIN chunks c ON c.set_key = m.set_key "
            "LEFT JOIN chunk_texts t ON t.set_key = m.set_key AND t.text_mode = ? AND t.chunk_id = c.id "
            "LEFT JOIN vectors v ON v.text_hash = t.text_hash AND v.model = ? "
            "WHERE m.plan_key = ? AND m.role = 'child' AND v.text_hash IS NULL "
            "GROUP BY ALL ORDER BY 1, 2",
            [mode, model, plan_key],
        )
        for shard, uri, n in rows:
            if plan_shards is None or shard in plan_shards[plan_key]:
                bad.append(f"{plan_key}|{shard}: {uri} has {n} child chunks without a vector")
    return bad[:LIMIT]


def unserved(store: IngestStore, plan_shards: dict[str, list[str]] | None = None) -> list[str]:
    """Every current document a building or live plan routes is served there at its current
    version (promoted: every set, and vectors where the plan embeds), unless its content failed
    a step under the plan (of ``plan_shards``, else every such plan and shard)."""
    rows = store.query(
        "SELECT p.plan_key, p.settings, d.shard, d.source_uri, d.kind FROM plan_status p "
        "CROSS JOIN current_documents d "
        "WHERE p.state <> 'retired' AND NOT EXISTS (SELECT 1 FROM promoted r "
        "  WHERE r.plan_key = p.plan_key AND r.document_id = d.document_id AND r.version_id = d.version_id) "
        "AND NOT EXISTS (SELECT 1 FROM failure_log f WHERE f.source_uri = d.source_uri "
        "  AND f.content_hash = d.content_hash AND f.plan_key = p.plan_key) "
        "ORDER BY 1, 3, 4"
    )
    bad = []
    for plan, settings, shard, uri, kind in rows:
        if plan_shards is not None and shard not in plan_shards.get(plan, ()):
            continue
        routes = json.loads(settings)
        if kind in routes or "*" in routes:
            bad.append(f"{plan}|{shard}: {uri} is not served at its current version")
    return bad[:LIMIT]


def failures(store: IngestStore, stages: tuple[str, ...] = ("parse",)) -> list[str]:
    """Each recorded failure of current content at ``stages``: the file and the message."""
    rows = store.query(
        "SELECT source_uri, stage, plan_key, error FROM ingest_failures "
        "WHERE list_contains(?::JSON::VARCHAR[], stage) "
        "ORDER BY source_uri, stage LIMIT ?",
        [json_list(stages), LIMIT],
    )
    return [f"{uri} ({stage}{' ' + plan if plan else ''}): {error}" for uri, stage, plan, error in rows]


# The invariants that hold per chunk set, so a set verified once stays verified.
PER_SET_CHECKS = ("exact_slices", "budgets", "parent_covers_children")


def full_verification(store: IngestStore) -> dict[str, list[str]]:
    """Every chunk invariant over every set building and live plans hold, verified before or
    not, by rule (``exact_slices[child]``, ..., ``edges_resolve``): what a row changed after it
    was verified cannot hide from (the asset checks of a run look at new sets only)."""
    found: dict[str, list[str]] = {}
    for level in (1, 0):
        role = _ROLE[level]
        found[f"unique_ids[{role}]"] = unique_ids(store, level)
        found[f"exact_slices[{role}]"] = exact_slices(store, level)
        found[f"budgets[{role}]"] = budgets(store, level)
    found["no_orphans"] = no_orphans(store)
    found["parent_covers_children"] = parent_covers_children(store)
    found["edges_resolve"] = graph_edges_resolve(store)
    return found


def all_violations(store: IngestStore) -> list[str]:
    """Every invariant over the whole current view (both levels), violations concatenated."""
    return [v for violations in full_verification(store).values() for v in violations]
