"""Invariants of what the store shows, as plain functions (the asset checks call them).

Each returns a list of violations (empty when the invariant holds), each a short string
naming the plan, document and chunk, capped so a broken store cannot flood the UI.
"""

from __future__ import annotations

import json
from typing import Any

from ingest_assets.store.store import IngestStore

__all__ = [
    "budgets",
    "exact_slices",
    "graph_edges_resolve",
    "no_orphans",
    "parent_covers_children",
    "unique_ids",
]

LIMIT = 20


def unique_ids(store: IngestStore, level: int) -> list[str]:
    """No chunk id appears twice in one plan's current view at ``level``."""
    rows = store.query(
        "SELECT plan_key, id, count(*) FROM current_chunks WHERE level = ? "
        "GROUP BY ALL HAVING count(*) > 1 LIMIT ?",
        [level, LIMIT],
    )
    return [f"{plan}: chunk {chunk_id} appears {n} times" for plan, chunk_id, n in rows]


def exact_slices(store: IngestStore, level: int) -> list[str]:
    """A text chunk's text equals the document text at its offsets (unless it says it is not a slice)."""
    bad: list[str] = []
    with store.connect() as con:
        rows = con.execute(
            "SELECT plan_key, id, text, provenance, metadata, document_id, version_id FROM current_chunks "
            "WHERE level = ? AND json_extract_string(provenance, '$.kind') = 'text' "
            "ORDER BY document_id, version_id",
            [level],
        ).fetchall()
        key, body = None, ""
        for plan, chunk_id, text, provenance, metadata, document_id, version_id in rows:
            if key != (document_id, version_id):
                # One document text at a time: a join would copy the whole text into every chunk row.
                key = (document_id, version_id)
                body = con.execute(
                    "SELECT json_extract_string(body, '$.text') FROM documents "
                    "WHERE document_id = ? AND version_id = ?",
                    [document_id, version_id],
                ).fetchone()[0]
            span = json.loads(provenance)
            if json.loads(metadata).get("exact_slice", True) and body[span["start"] : span["end"]] != text:
                bad.append(
                    f"{plan}: chunk {chunk_id} is not the document text at {span['start']}..{span['end']}"
                )
                if len(bad) >= LIMIT:
                    break
    return bad


def budgets(store: IngestStore, level: int) -> list[str]:
    """Every chunk's token count is within the size of the chunker that made it."""
    plans = dict(store.query("SELECT plan_key, settings FROM plans WHERE live"))
    limits: dict[tuple[str, str], int] = {}
    for plan_key, settings in plans.items():
        for route in json.loads(settings).values():
            for role, want in (("parent", 1), ("child", 0)):
                if want == level:
                    limits[(plan_key, _fingerprint_of(route[role]))] = _budget(route[role])
    rows = store.query(
        "SELECT plan_key, id, chunker_hash, token_count FROM current_chunks WHERE level = ?", [level]
    )
    bad = []
    for plan, chunk_id, fingerprint, tokens in rows:
        budget = limits.get((plan, fingerprint))
        if budget is not None and tokens is not None and tokens > budget:
            bad.append(f"{plan}: chunk {chunk_id} holds {tokens} tokens, over its budget of {budget}")
    return bad[:LIMIT]


def _fingerprint_of(settings: dict[str, Any]) -> str:
    from chunking.ids import settings_hash

    return settings_hash(settings)


def _budget(settings: dict[str, Any]) -> int:
    return int(settings.get("size") or settings.get("chunk_size") or 0) or 1 << 62


def no_orphans(store: IngestStore) -> list[str]:
    """Every current child's parent is a current parent of the same plan and document."""
    rows = store.query(
        "SELECT c.plan_key, c.id, c.parent_id FROM current_chunks c "
        "LEFT JOIN current_chunks p ON p.plan_key = c.plan_key AND p.id = c.parent_id AND p.level = 1 "
        "AND p.document_id = c.document_id WHERE c.level = 0 AND p.id IS NULL LIMIT ?",
        [LIMIT],
    )
    return [f"{plan}: child {chunk_id} points at missing parent {parent}" for plan, chunk_id, parent in rows]


def parent_covers_children(store: IngestStore) -> list[str]:
    """A text child's span lies inside its parent's span."""
    rows = store.query(
        "SELECT c.plan_key, c.id, c.provenance, p.provenance FROM current_chunks c "
        "JOIN current_chunks p ON p.plan_key = c.plan_key AND p.id = c.parent_id AND p.level = 1 "
        "WHERE c.level = 0 AND json_extract_string(c.provenance, '$.kind') = 'text' "
        "AND json_extract_string(p.provenance, '$.kind') = 'text'"
    )
    bad = []
    for plan, chunk_id, child, parent in rows:
        c, p = json.loads(child), json.loads(parent)
        if not p["start"] <= c["start"] <= c["end"] <= p["end"]:
            bad.append(
                f"{plan}: child {chunk_id} at {c['start']}..{c['end']} is outside {p['start']}..{p['end']}"
            )
    return bad[:LIMIT]


def graph_edges_resolve(store: IngestStore) -> list[str]:
    """Every graph edge joins two graph nodes of the same plan."""
    rows = store.query(
        "SELECT e.plan_key, e.type, e.source_id, e.target_id FROM graph_edges e "
        "LEFT JOIN graph_nodes s ON s.plan_key = e.plan_key AND s.id = e.source_id "
        "LEFT JOIN graph_nodes t ON t.plan_key = e.plan_key AND t.id = e.target_id "
        "WHERE s.id IS NULL OR t.id IS NULL LIMIT ?",
        [LIMIT],
    )
    return [f"{plan}: {kind} edge {a} -> {b} has a missing end" for plan, kind, a, b in rows]
