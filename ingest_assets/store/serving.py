"""What the views serve: plan states and promotions, written as inserted rows (no Dagster here).

The steps build a plan's sets beside what it serves (``plan_members``, its work pointers);
readers see only promotions:

* **A document's new version** is promoted in a plan (one ``promotions`` row) when the plan
  has all of it at the document's current version: parents, children cut from them, graph
  records over both and, where the plan embeds, vectors of the children. Until then the plan
  serves the version it promoted before. A deleted source leaves the views at once (the
  ``promoted`` view joins the sources).
* **A plan's key** is ``building`` while another key of the same plan name is live, and switches
  (one transaction: ``live`` for the new key, ``retired`` for the old) when it has promoted the
  current version of every current document it routes, or recorded that document's failure.
  A plan name seen for the first time is live at once: it has nothing to protect.

Both are inserts, never updates, so writers of different documents never touch the same row;
the newest row (``seq``, then time) wins.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

from ingest_assets.store.changes import Place, ViewScope, record_moves, record_switch, tracked, view_sets
from ingest_assets.store.lists import json_list
from ingest_assets.store.rows import PROMOTIONS
from ingest_assets.store.writes import insert

__all__ = [
    "PlanRegistration",
    "PlanState",
    "progress",
    "promote",
    "register_plans",
    "routed_count",
    "state_rows",
    "switch_if_covered",
    "uncovered_count",
]

BUILDING, LIVE, RETIRED = "building", "live", "retired"


@dataclass(frozen=True)
class PlanRegistration:
    """A plan of the plans file as the store records it; ``kinds`` are the document kinds it
    routes (None: every kind, through a ``"*"`` route)."""

    key: str
    name: str
    fingerprint: str
    settings: dict[str, Any]
    kinds: tuple[str, ...] | None


@dataclass(frozen=True)
class PlanState:
    """A stored plan key: its name, state (``building``, ``live`` or ``retired``), when it
    was registered and when it entered that state."""

    key: str
    name: str
    state: str
    registered_at: datetime
    state_at: datetime


def state_rows(con: duckdb.DuckDBPyConnection) -> dict[str, PlanState]:
    """Every stored plan key's :class:`PlanState`."""
    rows = con.execute("SELECT plan_key, name, state, registered_at, state_at FROM plan_status").fetchall()
    return {row[0]: PlanState(*row) for row in rows}


def _set_states(con: duckdb.DuckDBPyConnection, states: Mapping[str, str], now: datetime) -> None:
    """Insert a state row for each key (seq: one past the key's newest)."""
    if not states:
        return
    keys = sorted(states)
    con.execute(
        "INSERT INTO plan_states "
        "SELECT w.plan_key, w.state, coalesce(max(s.seq), 0) + 1, $3 "
        "FROM (SELECT unnest($1::JSON::VARCHAR[]) AS plan_key, unnest($2::JSON::VARCHAR[]) AS state) w "
        "LEFT JOIN plan_states s ON s.plan_key = w.plan_key GROUP BY w.plan_key, w.state",
        [json_list(keys), json_list(states[k] for k in keys), now],
    )


def _state_changes(known: Mapping[str, PlanState], plans: Sequence[PlanRegistration]) -> dict[str, str]:
    """The state each key enters when the plans file holds ``plans`` (see :func:`register_plans`)."""
    wanted = {p.key for p in plans}
    names = {p.name for p in plans}
    live_names = {s.name for s in known.values() if s.state == LIVE}
    changes: dict[str, str] = {}
    for plan in plans:
        state = known[plan.key].state if plan.key in known else None
        if state in (LIVE, BUILDING):
            continue
        changes[plan.key] = BUILDING if plan.name in live_names else LIVE
        if changes[plan.key] == LIVE:
            live_names.add(plan.name)
    for key, state in known.items():
        if key in wanted or state.state == RETIRED:
            continue
        if state.state == BUILDING or state.name not in names:
            changes[key] = RETIRED
    return changes


def registration_due(con: duckdb.DuckDBPyConnection, plans: Sequence[PlanRegistration]) -> bool:
    """Whether :func:`register_plans` would change anything: a key to register, bring back or
    retire, or a building key that may switch live. A read: when it says no, no writer waits."""
    known = state_rows(con)
    building = any(p.key in known and known[p.key].state == BUILDING for p in plans)
    return building or bool(_state_changes(known, plans))


def register_plans(
    con: duckdb.DuckDBPyConnection, run_id: str, plans: Sequence[PlanRegistration], now: datetime
) -> list[str]:
    """Bring the stored plan states in line with ``plans`` (the plans file), in one transaction
    the caller holds; returns the keys newly registered or brought back.

    A key of the file that is new or retired becomes ``building`` if its plan name has another
    key live, else ``live``; a building key no longer in the file is retired (abandoned); a
    live key whose name left the file is retired; a live key whose name has another key in
    the file stays live until that key covers every document (:func:`switch_if_covered`,
    tried here for every building key).
    """
    known = state_rows(con)
    fresh = [p for p in plans if p.key not in known]
    if fresh:
        con.execute(
            "INSERT INTO plans SELECT unnest($1::JSON::VARCHAR[]), unnest($2::JSON::VARCHAR[]), "
            "unnest($3::JSON::VARCHAR[]), unnest($4::JSON::VARCHAR[])::JSON, $5",
            [json_list(p.key for p in fresh), json_list(p.name for p in fresh),
             json_list(p.fingerprint for p in fresh),
             json_list(json.dumps(p.settings, sort_keys=True) for p in fresh), now],
        )  # fmt: skip
    changes = _state_changes(known, plans)
    with tracked(con, run_id, ViewScope.plans(changes), now):
        _set_states(con, changes, now)
    for plan in plans:
        if changes.get(plan.key, known[plan.key].state if plan.key in known else None) == BUILDING:
            switch_if_covered(con, run_id, plan.key, plan.kinds, now)
    return [p.key for p in plans if p.key in changes]


def uncovered_count(con: duckdb.DuckDBPyConnection, plan_key: str, kinds: Iterable[str] | None) -> int:
    """How many current documents ``plan_key`` routes (``kinds``; None: every kind) have their
    current version not promoted there and no failure recorded for it under the plan."""
    return con.execute(
        "SELECT count(*) FROM current_documents d "
        "WHERE ($2::VARCHAR IS NULL OR list_contains($2::JSON::VARCHAR[], d.kind)) "
        "AND NOT EXISTS (SELECT 1 FROM promoted r WHERE r.plan_key = $1 "
        "  AND r.document_id = d.document_id AND r.version_id = d.version_id) "
        "AND NOT EXISTS (SELECT 1 FROM failure_log f WHERE f.plan_key = $1 "
        "  AND f.source_uri = d.source_uri AND f.content_hash = d.content_hash)",
        [plan_key, None if kinds is None else json_list(sorted(kinds))],
    ).fetchone()[0]


def routed_count(con: duckdb.DuckDBPyConnection, kinds: Iterable[str] | None) -> int:
    """How many current documents are of ``kinds`` (None: every kind)."""
    return con.execute(
        "SELECT count(*) FROM current_documents d "
        "WHERE ($1::VARCHAR IS NULL OR list_contains($1::JSON::VARCHAR[], d.kind))",
        [None if kinds is None else json_list(sorted(kinds))],
    ).fetchone()[0]


def progress(
    con: duckdb.DuckDBPyConnection, plan_key: str, kinds: Iterable[str] | None
) -> tuple[str | None, int, int]:
    """``plan_key``'s state (None: not registered), the current documents of ``kinds`` it has
    ready (served at their current version, or failed under it), and all of them."""
    state = state_rows(con).get(plan_key)
    total = routed_count(con, kinds)
    return (None if state is None else state.state), total - uncovered_count(con, plan_key, kinds), total


def switch_if_covered(
    con: duckdb.DuckDBPyConnection, run_id: str, plan_key: str, kinds: Iterable[str] | None, now: datetime
) -> bool:
    """Make the building ``plan_key`` live, and retire its plan name's live key, if it covers
    every current document it routes (:func:`uncovered_count` is 0); returns whether it did.

    ``chunk_changes`` records the switch under ``plan_key`` as what readers of the plan name
    saw move (:func:`~ingest_assets.store.changes.record_switch`), not as every chunk of one
    key removed and every chunk of the other added."""
    known = state_rows(con)
    state = known.get(plan_key)
    if state is None or state.state != BUILDING or uncovered_count(con, plan_key, kinds):
        return False
    retiring = [s.key for s in known.values() if s.name == state.name and s.state == LIVE]
    before = view_sets(con, ViewScope.plans(retiring))
    _set_states(con, {plan_key: LIVE, **dict.fromkeys(retiring, RETIRED)}, now)
    record_switch(con, run_id, plan_key, before, now)
    return True


def promote(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    plan_key: str,
    embedding: str | None,
    document_ids: Iterable[Any] | None,
    now: datetime,
) -> int:
    """Promote in ``plan_key`` the current version of each of ``document_ids`` (None: every
    document) that the plan has all of and does not serve as it is; returns rows inserted.

    All of it: a parent set at the source's current version, a child set cut from it, a graph
    set built over that child set and, with ``embedding`` (the plan's embedding key), the child
    set embedded under it. One row per document, in the caller's transaction.
    """
    ids = None if document_ids is None else json_list(sorted({str(i) for i in document_ids}))
    if ids == "[]":
        return 0
    scope = "" if ids is None else "AND document_id IN (SELECT unnest($3::JSON::UUID[])) "
    # The plan's newest member rows of these documents, read once (the filter keeps whole
    # partitions of plan_members' window, so it is that view's rows): a lake reads its catalog
    # for every scan of a table, and the parent, child and graph rows are three roles of them.
    # The rows to insert, each with what the plan promoted before (its newest row): what the
    # current view showed there before this insert, if the plan is live. Reading that here
    # spares reading the promoted view before and after the insert.
    query = (
        "WITH m AS MATERIALIZED (SELECT document_id, role, set_key, version_id, based_on "
        "  FROM member_rows WHERE plan_key = $1 " + scope + "QUALIFY row_number() OVER "
        "  (PARTITION BY plan_key, document_id, role ORDER BY seq DESC) = 1) "
        "SELECT p.document_id::VARCHAR, p.version_id::VARCHAR, p.set_key, c.set_key, g.set_key, "
        "  coalesce(last.seq, 0) + 1, last.parent_set, last.child_set, "
        "  (SELECT state FROM plan_status WHERE plan_key = $1) "
        "FROM m p "
        "JOIN sources s ON s.document_id = p.document_id AND s.version_id = p.version_id AND NOT s.deleted "
        "JOIN m c ON c.document_id = p.document_id AND c.role = 'child' AND c.based_on = p.set_key "
        "  AND c.version_id = p.version_id "
        "JOIN m g ON g.document_id = p.document_id AND g.role = 'graph' AND g.based_on = c.set_key "
        "  AND g.version_id = p.version_id "
        "LEFT JOIN (SELECT * FROM promotions WHERE plan_key = $1 " + scope + "QUALIFY row_number() OVER "
        '  (PARTITION BY document_id ORDER BY seq DESC, "at" DESC) = 1) last '
        "  ON last.document_id = p.document_id "
        "WHERE p.role = 'parent' AND ($2::VARCHAR IS NULL OR EXISTS "
        "  (SELECT 1 FROM embedded_sets e WHERE e.set_key = c.set_key AND e.embedding = $2)) "
        "AND (last.document_id IS NULL OR last.version_id <> p.version_id OR last.parent_set <> p.set_key "
        "  OR last.child_set <> c.set_key OR last.graph_set <> g.set_key "
        "  OR last.embedding IS DISTINCT FROM $2)"
    )
    params: list[Any] = [plan_key, embedding]
    if ids is not None:
        params.append(ids)
    rows = con.execute(query, params).fetchall()
    insert(
        con,
        "promotions",
        [
            {"plan_key": plan_key, "document_id": doc, "version_id": version, "parent_set": parent,
             "child_set": child, "graph_set": graph, "embedding": embedding, "seq": seq, "run_id": run_id,
             "at": now}
            for doc, version, parent, child, graph, seq, *_ in rows
        ],
        PROMOTIONS,
    )  # fmt: skip
    if rows and rows[0][-1] == LIVE:
        # Readers saw each document's previous promotion (the source is current, so not
        # deleted) and now see this one.
        moves: dict[Place, tuple[str | None, str | None]] = {}
        for doc, _, parent, child, _, _, old_parent, old_child, _ in rows:
            if parent != old_parent:
                moves[(plan_key, doc, "parent")] = (old_parent, parent)
            if child != old_child:
                moves[(plan_key, doc, "child")] = (old_child, child)
        record_moves(con, run_id, moves, now)
    return len(rows)
