"""What a run of a plans file would do, set for set, said without writing (``ingest plans --diff``).

No Dagster here, and no write: the scan is the scan step's read-only diff
(:func:`~ingest_assets.engine.scan.scan_diff`), the files to parse are the ones
:func:`~ingest_assets.engine.parse.needs_parse` picks, and they are parsed here in memory (with
the parse step's own task, so kinds and version ids are exact; nothing is stored). Each plan's
sets follow from :func:`~ingest_assets.engine.keys.expected_keys` and the same rule the steps
apply (:mod:`ingest_assets.engine.chunk`, :mod:`.graph`): a key that is stored is reused, a
content that failed under the plan before is skipped, anything else is created. Plans are taken
in the plans file's order, as ``ingest run`` runs them, so a set two plans share is created by
the first and reused by the second.

What it cannot know: whether a chunker will fail on a document (its sets are then predicted
but not made). The time estimate multiplies the work (bytes to parse, characters to chunk)
by the rates of the store's ``step_timings`` (seconds per byte or character, over every step
recorded); Dagster's run start-up (about a second per run) is not in it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from ingest_assets.engine.batching import batches
from ingest_assets.engine.keys import SHARDS, expected_keys, parse_key
from ingest_assets.engine.parse import needs_parse
from ingest_assets.engine.reuse import decide
from ingest_assets.engine.scan import scan_diff
from ingest_assets.engine.tasks import ParseTask, parse_source
from ingest_assets.engine.workers import run_batches
from ingest_assets.plans import Plan
from ingest_assets.settings import Settings
from ingest_assets.store import DocumentWrite, IngestStore, SourceRow
from ingest_assets.store.lists import json_list
from ingest_assets.store.store import ROLES

__all__ = ["ROLES", "Forecast", "PlanForecast", "forecast", "rates_text"]


@dataclass
class KindForecast:
    """One plan's work for one document kind: the documents it routes and, per role, the set
    keys it would ``create`` and ``reuse`` (``skip``: failed under the plan before)."""

    documents: int = 0
    chars: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROLES, 0))
    sets: dict[str, dict[str, set[str]]] = field(
        default_factory=lambda: {role: {"create": set(), "reuse": set(), "skip": set()} for role in ROLES}
    )


@dataclass
class PlanForecast:
    """A plan of the plans file: whether the store has it live yet, its work per kind, and
    the estimated seconds of its chunk steps (None: no timings stored)."""

    key: str
    name: str
    live: bool
    kinds: dict[str, KindForecast] = field(default_factory=dict)
    # The same work by shard (every kind together): what each plan|shard partition will do.
    shards: dict[str, KindForecast] = field(default_factory=dict)
    unrouted: int = 0
    seconds: float | None = None

    def keys(self, role: str, action: str) -> set[str]:
        """Every set key of ``role`` (parent, child, graph) this plan would ``create`` / ``reuse``."""
        return {key for kind in self.kinds.values() for key in kind.sets[role][action]}


@dataclass
class Forecast:
    """What a run would do: files new, changed and deleted; documents to parse per kind (and
    which fail to parse), by source URI their predicted version; the plans; retired keys."""

    new: int = 0
    changed: int = 0
    deleted: int = 0
    parse: dict[str, int] = field(default_factory=dict)
    parse_failed: list[str] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    parse_seconds: float | None = None
    parse_measured: float = 0.0
    plans: list[PlanForecast] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    rates: dict[str, float] = field(default_factory=dict)
    # The Dagster runs' own seconds (start-up, checks, hand-over): ``ingest run`` records each
    # run's wall time less its steps' as the step ``run``; None before any was recorded.
    run_seconds: float | None = None

    @property
    def seconds(self) -> float | None:
        """The estimated seconds of the whole run (parse, every plan and the Dagster runs
        around them), None without timings."""
        parts = [self.parse_seconds, self.run_seconds] + [p.seconds for p in self.plans]
        known = [p for p in parts if p is not None]
        return sum(known) if known else None


@dataclass(frozen=True)
class _Doc:
    document_id: UUID
    version_id: UUID
    kind: str
    uri: str
    content_hash: str
    text_length: int
    shard: str


def _rates(store: IngestStore) -> dict[str, float]:
    """Seconds per unit of work (byte parsed, character chunked) per step, from step_timings."""
    rows = store.query("SELECT step, sum(seconds) / sum(work) FROM step_timings WHERE work > 0 GROUP BY step")
    return {step: float(rate) for step, rate in rows}


def _parse(sources: Sequence[SourceRow], settings: Settings) -> list[DocumentWrite | Any]:
    work = (
        (batch, [ParseTask(str(s.path), s.uri, parse_key(s.content_hash), settings.limits) for s in batch])
        for batch in batches(list(sources), lambda s: s.size)
    )
    return [
        o
        for _, outcomes in run_batches(parse_source, work, sum(s.size for s in sources), settings)
        for o in outcomes
    ]


def _documents_after(
    store: IngestStore, sources: dict[str, SourceRow], settings: Settings, result: Forecast
) -> list[_Doc]:
    """The current documents after the document steps, parsing (in memory) what needs it."""
    limits = settings.limits
    to_parse = [s for s in sources.values() if not s.deleted and needs_parse(s, limits)]
    started = time.perf_counter()
    parsed: dict[str, DocumentWrite] = {}
    for source, outcome in zip(to_parse, _parse(to_parse, settings), strict=True):
        if isinstance(outcome, DocumentWrite):
            parsed[source.uri] = outcome
            result.parse[outcome.kind] = result.parse.get(outcome.kind, 0) + 1
            result.versions[source.uri] = str(outcome.version_id)
        else:
            result.parse_failed.append(source.uri)
    result.parse_measured = time.perf_counter() - started
    if to_parse and "parse" in result.rates:
        result.parse_seconds = result.rates["parse"] * sum(s.size for s in to_parse)
    kept = {
        (str(s.document_id), str(s.version_id)): s
        for s in sources.values()
        if not s.deleted and s.uri not in parsed and s.version_id is not None and not needs_parse(s, limits)
    }
    rows = store.query(
        "SELECT d.document_id::VARCHAR, d.version_id::VARCHAR, d.kind, d.text_length FROM documents d "
        "JOIN (SELECT unnest(?::JSON::UUID[]) AS document_id, unnest(?::JSON::UUID[]) AS version_id) w "
        "USING (document_id, version_id)",
        [json_list(d for d, _ in kept), json_list(v for _, v in kept)],
    )
    docs = [
        _Doc(UUID(d), UUID(v), kind, kept[(d, v)].uri, kept[(d, v)].content_hash, length, kept[(d, v)].shard)
        for d, v, kind, length in rows
    ]
    docs += [
        _Doc(
            w.document_id,
            w.version_id,
            w.kind,
            uri,
            sources[uri].content_hash,
            w.text_length,
            sources[uri].shard,
        )
        for uri, w in parsed.items()
    ]
    return sorted(docs, key=lambda d: d.uri)


def forecast(store: IngestStore, inbox: str | Path, plans: Sequence[Plan], settings: Settings) -> Forecast:
    """Say what a run of ``plans`` over ``inbox`` would do to ``store``, writing nothing (parsing
    in memory under ``settings``' limits, on its executor).

    Raises:
        FileNotFoundError: The inbox folder does not exist.
    """
    result = Forecast(rates=_rates(store))
    with store.session():
        diff = scan_diff(store, inbox, set(SHARDS))
        for counts in diff.results.values():
            result.new, result.changed = result.new + counts.new, result.changed + counts.changed
            result.deleted += counts.deleted
        sources = dict(diff.known)
        for row in diff.writes:
            sources[row.uri] = row
        docs = _documents_after(store, sources, settings, result)
        states = {key: s.state for key, s in store.plan_states().items()}
        stored = {"chunks": _stored(store, "chunk_sets"), "graph": _stored(store, "graph_sets")}
        for plan in plans:
            result.plans.append(_plan_forecast(store, plan, docs, stored, states, result.rates))
    serving = {key for key, state in states.items() if state != "retired"}
    result.retired = sorted(serving - {p.key for p in plans})
    if "run" in result.rates:
        # ``ingest run`` launches a documents run when files moved, and a chunks run per plan with work.
        runs = int(bool(result.new or result.changed or result.deleted)) + sum(
            1 for p in result.plans if p.seconds
        )
        result.run_seconds = runs * result.rates["run"]
    return result


def _stored(store: IngestStore, table: str) -> set[str]:
    return {key for (key,) in store.query(f"SELECT set_key FROM {table}")}


def _plan_forecast(
    store: IngestStore,
    plan: Plan,
    docs: list[_Doc],
    stored: dict[str, set[str]],
    states: dict[str, str],
    rates: dict[str, float],
) -> PlanForecast:
    """One plan's sets, decided as the steps decide them; sets it creates count as stored for
    the plans after it (``stored`` is updated)."""
    out = PlanForecast(plan.key, plan.name, states.get(plan.key) == "live")
    # The chunk steps skip a content that failed under the plan before; the graph step does not.
    failed = {role: store.failed_keys(role, plan.key) for role in ("parent", "child")}
    failed["graph"] = set()
    for doc in docs:
        route = plan.route_for(doc.kind)
        if route is None:
            out.unrouted += 1
            continue
        counted = (
            out.kinds.setdefault(doc.kind, KindForecast()),
            out.shards.setdefault(doc.shard, KindForecast()),
        )
        for kind in counted:
            kind.documents += 1
        for role, key in zip(ROLES, expected_keys(doc.document_id, doc.version_id, route), strict=True):
            table = stored["graph" if role == "graph" else "chunks"]
            # As the steps decide (a stored set the plan does not point at yet is relinked).
            decision = decide(
                None, key, "", stored=key in table, failed=(doc.uri, doc.content_hash) in failed[role]
            )
            action = "reuse" if decision.reused else decision.value
            for kind in counted:
                kind.sets[role][action].add(key)
                kind.chars[role] += doc.text_length if action == "create" else 0
            if action == "skip":
                break  # the sets after it wait for it
    for kind in out.kinds.values():
        for role in ROLES:
            stored["graph" if role == "graph" else "chunks"] |= kind.sets[role]["create"]
    work = {role: sum(k.chars[role] for k in out.kinds.values()) for role in ROLES}
    if all(role in rates for role in ROLES if work[role]):  # step_timings names steps by role
        out.seconds = sum(rates[role] * work[role] for role in ROLES if work[role])
    return out


def rates_text(rates: dict[str, float]) -> str:
    """The stored rates an estimate is based on, for people: microseconds per byte parsed or
    character chunked, per step, and seconds per Dagster run."""
    return ", ".join(
        f"{step} {rate:.2f} s/Dagster run"
        if step == "run"
        else f"{step} {rate * 1e6:.2f} us/{'byte' if step == 'parse' else 'char'}"
        for step, rate in sorted(rates.items())
    )
