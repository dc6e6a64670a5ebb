"""``ingest plans``: each plan key of the plans file with its settings and its state in the
store, then the stored keys the file no longer names; ``--diff`` hands over to
:mod:`ingest_assets.cli.forecast` (what a run of the file would do)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ingest_assets.cli.common import CommandError, open_store
from ingest_assets.plans import Plan, load_plans
from ingest_assets.settings import Settings

__all__ = ["HELP", "add_arguments", "plan_states_text", "run"]

HELP = "list plan keys with their settings"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``ingest plans``."""
    parser.add_argument("--plans", help="plans file (default $INGEST_PLANS or plans.yaml)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--diff", action="store_true", help="what a run would parse, create and reuse (no write)"
    )
    parser.add_argument(
        "--db", help="the store whose plan states to show (default $INGEST_DUCKDB or data/ingest.duckdb)"
    )
    parser.add_argument(
        "--inbox", help="with --diff: folder of sources (default $INGEST_INBOX or data/sample)"
    )


def plan_states_text(database: str | None, plans: list[Plan], settings: Settings) -> dict[str, str]:
    """Each plan key's state in the store as people read it: the file's keys (live, building
    with how many documents are ready, retired, or not in the store yet), then the stored keys
    the file does not name (empty: no store)."""
    try:
        store = open_store(database, settings)
    except CommandError:
        return {}
    states = {}
    for plan in plans:
        state, ready, total = store.plan_progress(plan.key, plan.kinds)
        if state == "building":
            state = f"building: {ready} of {total} documents ready; the views switch to it when all are"
        states[plan.key] = state or "not in the store yet (the next run builds it)"
    wanted = {plan.key for plan in plans}
    for key, stored in sorted(store.plan_states().items()):
        if key in wanted:
            continue
        if stored.state == "retired":
            states[key] = "retired (stored: putting its settings back serves it again without chunking)"
        else:
            states[key] = f"{stored.state}, not in this plans file (serves until its plan's new key is ready)"
    return states


def _plan_rows(plans: list[Plan]) -> list[dict[str, Any]]:
    return [
        {
            "key": p.key,
            "name": p.name,
            "description": p.description,
            "routes": p.settings(),
            "embedding": p.embedding.settings() if p.embedding else None,
        }
        for p in plans
    ]


def run(args: argparse.Namespace, settings: Settings) -> int:
    """``ingest plans`` (or ``--diff``); prints text, or JSON with ``--json``."""
    if args.diff:
        from ingest_assets.cli.forecast import run_forecast

        return run_forecast(args, settings)
    plans = load_plans(args.plans or settings.plans_file)
    rows = _plan_rows(plans)
    states = plan_states_text(args.db, plans, settings)
    for row in rows:
        row["state"] = states.get(row["key"])
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        print(row["key"] + (f"  {row['description']}" if row["description"] else ""))
        print(f"  {'state':>10}        {row['state'] or 'no store yet (ingest run registers it)'}")
        for kind, route in row["routes"].items():
            for role in ("parent", "child"):
                print(f"  {kind:>10} {role:<6} {json.dumps(route[role], sort_keys=True)}")
        if row["embedding"]:
            print(f"  {'embedding':>10}        {json.dumps(row['embedding'], sort_keys=True)}")
    wanted = {row["key"] for row in rows}
    for key, state in sorted(states.items()):
        if key not in wanted:
            print(f"{key}\n  {'state':>10}        {state}")
    return 0
