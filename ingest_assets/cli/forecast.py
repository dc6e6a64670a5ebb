"""``ingest plans --diff [--plans NEW_FILE]``: what a run of the plans file would parse, create
and reuse, per plan and document kind, with the time it would take; read-only (see
:mod:`ingest_assets.engine.forecast`).

Beside the forecast it says what the store holds of each plan: its key's state (live,
building, retired, or not stored yet) and its embedding key's (live: a live plan's embedding,
whose vectors the views serve; stored: child sets are embedded under it, but no live plan
serves it; new: no child set is embedded under it),
with, per kind, the child sets the embeddings step would embed and those with vectors already.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ingest_assets.cli.common import NoStore, open_store
from ingest_assets.cli.plans import file_key_state
from ingest_assets.plans import Plan
from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore
from ingest_assets.store.store import ROLES

if TYPE_CHECKING:
    from ingest_assets.engine.forecast import Forecast, KindForecast, PlanForecast

__all__ = ["PlanStore", "forecast_json", "plans_in_store", "print_forecast", "run_forecast"]

# An embedding key's state, as people read it.
EMBEDDING_TEXT = {
    "live": "live (a live plan's vectors; child sets embedded under it are reused)",
    "stored": "stored, not live (child sets embedded under it are reused)",
    "new": "not stored yet (no child set is embedded under it)",
}


@dataclass(frozen=True)
class PlanStore:
    """What the store holds of a plan of the file: its key's ``state`` (live, building,
    retired; None: not stored) and ``state_text``; its ``embedding`` key (None: the plan embeds
    nothing), that key's ``embedding_state`` (live, stored or new, see the module docstring) and
    the child sets embedded under it (``embedded``, of the sets the forecast names)."""

    state: str | None
    state_text: str
    embedding: str | None = None
    embedding_state: str | None = None
    embedded: frozenset[str] = field(default_factory=frozenset)

    def embed_counts(self, kind: KindForecast) -> dict[str, int] | None:
        """Of ``kind``'s child sets (created or reused), how many the embeddings step would embed
        (``create``) and how many have vectors under the plan's embedding already (``reuse``);
        None for a plan that embeds nothing."""
        if self.embedding is None:
            return None
        sets = kind.sets["child"]["create"] | kind.sets["child"]["reuse"]
        embedded = len(sets & self.embedded)
        return {"create": len(sets) - embedded, "reuse": embedded}


def plans_in_store(store: IngestStore, plans: list[Plan], result: Forecast) -> dict[str, PlanStore]:
    """Each forecast plan's :class:`PlanStore`, by key (read-only)."""
    from ingest_assets.store.vectors import embedded_set_keys, plan_embeddings

    recorded = plan_embeddings(store)
    live = [key for key, stored in store.plan_states().items() if stored.state == "live"]
    served = {recorded[key].embedding for key in live if key in recorded}  # what chunk_vectors serves
    by_key = {plan.key: plan for plan in plans}
    found: dict[str, PlanStore] = {}
    for forecast in result.plans:
        plan = by_key[forecast.key]
        state, ready, total = store.plan_progress(plan.key, plan.kinds)
        text = file_key_state(state, ready, total)
        key = plan.embedding_key
        if key is None:
            found[plan.key] = PlanStore(state, text)
            continue
        children = {
            k for kind in forecast.kinds.values() for a in ("create", "reuse") for k in kind.sets["child"][a]
        }
        embedded = frozenset(embedded_set_keys(store, children, key))
        if key in served:
            embedding_state = "live"
        elif embedded or store.query("SELECT 1 FROM embedded_sets WHERE embedding = ? LIMIT 1", [key]):
            embedding_state = "stored"
        else:
            embedding_state = "new"
        found[plan.key] = PlanStore(state, text, key, embedding_state, embedded)
    return found


def _seconds(value: float | None) -> str:
    return "unknown (no step timings stored yet: run once)" if value is None else f"{value:.2f} s"


def _print_plan(plan: PlanForecast, stored: PlanStore) -> None:
    print(f"plan {plan.key}: {stored.state_text}")
    if stored.embedding is None:
        print("  embedding: none (the plan embeds nothing)")
    else:
        print(f"  embedding key {stored.embedding}: {EMBEDDING_TEXT[stored.embedding_state or 'new']}")
    print(
        f"  {'kind':<10} {'docs':>5}  {'parent new/reused':>17}  {'child new/reused':>16}  "
        f"{'graph new/reused':>16}  {'embed new/reused':>16}"
    )
    for kind, k in sorted(plan.kinds.items()):
        cells = [f"{len(k.sets[r]['create'])} / {len(k.sets[r]['reuse'])}" for r in ROLES]
        embed = stored.embed_counts(k)
        cells.append("-" if embed is None else f"{embed['create']} / {embed['reuse']}")
        print(
            f"  {kind:<10} {k.documents:>5}  {cells[0]:>17}  {cells[1]:>16}  {cells[2]:>16}  {cells[3]:>16}"
        )
    if plan.unrouted:
        print(f"  ({plan.unrouted} documents of kinds this plan does not route)")
    print(f"  estimate: {_seconds(plan.seconds)}")


def print_forecast(result: Forecast, stored: dict[str, PlanStore], plans_file: str, database: str) -> None:
    """Print a :class:`~ingest_assets.engine.forecast.Forecast` per plan and document kind,
    with what the store holds of each plan (``stored``, from :func:`plans_in_store`)."""
    print(f"{plans_file} against {database} (read-only: nothing was written)")
    parsed = ", ".join(f"{kind} {n}" for kind, n in sorted(result.parse.items())) or "none"
    print(
        f"files: {result.new} new, {result.changed} changed, {result.deleted} deleted; "
        f"documents to parse: {parsed}"
        + (f"; {len(result.parse_failed)} fail to parse" if result.parse_failed else "")
    )
    for plan in result.plans:
        _print_plan(plan, stored[plan.key])
    for key in result.retired:
        print(f"plan {key}: not in this file (retires, or serves until its plan's new key is built)")
    from ingest_assets.engine.forecast import rates_text

    basis = rates_text(result.rates)
    print(
        f"estimate for the run: {_seconds(result.seconds)}" + (f" (stored rates: {basis})" if basis else "")
    )


def run_forecast(args: argparse.Namespace, settings: Settings) -> int:
    """``ingest plans --diff``: the forecast of ``--plans`` (default the settings') over the store."""
    from ingest_assets.engine.forecast import forecast
    from ingest_assets.plans import load_plans

    plans_file = args.plans or settings.plans_file
    plans = load_plans(plans_file)
    with ExitStack() as cleanup:
        try:
            store = open_store(args.db, settings)
            against = str(store.path)
        except NoStore:
            # Before the first run: what it would do, over a store with nothing in it, made in
            # a temporary folder (the --db file is neither made nor touched).
            folder = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="ingest-diff-")))
            store = IngestStore(folder / "empty.duckdb", settings=settings)
            against = f"no store yet at {args.db or settings.database} (a first run)"
        result = forecast(store, args.inbox or settings.inbox, plans, settings)
        with store.session():
            stored = plans_in_store(store, plans, result)
    if args.json:
        print(json.dumps(forecast_json(result, stored), indent=2, sort_keys=True))
    else:
        print_forecast(result, stored, plans_file, against)
    return 0


def forecast_json(result: Forecast, stored: dict[str, PlanStore]) -> dict[str, Any]:
    """A forecast as JSON: counts per plan, kind and role (set keys left out), each plan's
    state and embedding key's state, and per kind the child sets to embed and embedded."""

    def kind_json(k: KindForecast, embed: dict[str, int] | None) -> dict[str, Any]:
        roles = {r: {a: len(keys) for a, keys in k.sets[r].items()} for r in k.sets}
        return {"documents": k.documents, **roles, **({"embeddings": embed} if embed is not None else {})}

    return {
        "files": {"new": result.new, "changed": result.changed, "deleted": result.deleted},
        "parse": result.parse,
        "parse_failed": result.parse_failed,
        "seconds": result.seconds,
        "retired": result.retired,
        "plans": {
            p.key: {
                "live": p.live,
                "state": stored[p.key].state,
                "embedding": None
                if stored[p.key].embedding is None
                else {"key": stored[p.key].embedding, "state": stored[p.key].embedding_state},
                "seconds": p.seconds,
                "kinds": {kind: kind_json(k, stored[p.key].embed_counts(k)) for kind, k in p.kinds.items()},
            }
            for p in result.plans
        },
    }
