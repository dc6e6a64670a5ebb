"""``ingest plans --diff [--plans NEW_FILE]``: what a run of the plans file would parse, create
and reuse, per plan and document kind, with the time it would take; read-only (see
:mod:`ingest_assets.engine.forecast`)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from ingest_assets.cli.common import open_store
from ingest_assets.settings import Settings
from ingest_assets.store.store import ROLES

if TYPE_CHECKING:
    from ingest_assets.engine.forecast import Forecast

__all__ = ["forecast_json", "print_forecast", "run_forecast"]


def _seconds(value: float | None) -> str:
    return "unknown (no step timings stored yet: run once)" if value is None else f"{value:.2f} s"


def print_forecast(result: Any, plans_file: str, database: str) -> None:
    """Print a :class:`~ingest_assets.engine.forecast.Forecast` per plan and document kind."""
    print(f"{plans_file} against {database} (read-only: nothing was written)")
    parsed = ", ".join(f"{kind} {n}" for kind, n in sorted(result.parse.items())) or "none"
    print(
        f"files: {result.new} new, {result.changed} changed, {result.deleted} deleted; "
        f"documents to parse: {parsed}"
        + (f"; {len(result.parse_failed)} fail to parse" if result.parse_failed else "")
    )
    for plan in result.plans:
        state = "live" if plan.live else "not live in the store yet"
        print(f"plan {plan.key} ({state})")
        print(
            f"  {'kind':<10} {'docs':>5}  {'parent new/reused':>17}  {'child new/reused':>16}  "
            f"{'graph new/reused':>16}"
        )
        for kind, k in sorted(plan.kinds.items()):
            cells = [f"{len(k.sets[r]['create'])} / {len(k.sets[r]['reuse'])}" for r in ROLES]
            print(f"  {kind:<10} {k.documents:>5}  {cells[0]:>17}  {cells[1]:>16}  {cells[2]:>16}")
        if plan.unrouted:
            print(f"  ({plan.unrouted} documents of kinds this plan does not route)")
        print(f"  estimate: {_seconds(plan.seconds)}")
    for key in result.retired:
        print(f"plan {key} (not in this file: retires, or serves until its plan's new key is built)")
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
    store = open_store(args.db, settings)
    result = forecast(store, args.inbox or settings.inbox, plans, settings)
    if args.json:
        print(json.dumps(forecast_json(result), indent=2, sort_keys=True))
    else:
        print_forecast(result, plans_file, str(store.path))
    return 0


def forecast_json(result: Forecast) -> dict[str, Any]:
    """A forecast as JSON: counts per plan, kind and role (set keys left out)."""
    return {
        "files": {"new": result.new, "changed": result.changed, "deleted": result.deleted},
        "parse": result.parse,
        "parse_failed": result.parse_failed,
        "seconds": result.seconds,
        "retired": result.retired,
        "plans": {
            p.key: {
                "live": p.live,
                "seconds": p.seconds,
                "kinds": {
                    kind: {"documents": k.documents}
                    | {r: {a: len(keys) for a, keys in k.sets[r].items()} for r in k.sets}
                    for kind, k in p.kinds.items()
                },
            }
            for p in result.plans
        },
    }
