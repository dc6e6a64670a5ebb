"""``ingest plans``: each plan key of the plans file with its settings and its state in the
store, then the stored keys the file no longer names; ``--diff`` hands over to
:mod:`ingest_assets.cli.forecast` (what a run of the file would do)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ingest_assets.cli.common import INBOX_HELP, PLANS_HELP, CommandError, add_db_option, open_store
from ingest_assets.plans import Plan, load_plans
from ingest_assets.settings import Settings

__all__ = ["HELP", "add_arguments", "file_key_state", "plan_states_text", "run"]

HELP = "list plan keys with their settings"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``ingest plans``."""
    parser.add_argument("--plans", metavar="FILE", help=PLANS_HELP)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--diff", action="store_true", help="what a run would parse, create and reuse (no write)"
    )
    add_db_option(parser)
    parser.add_argument("--inbox", metavar="DIR", help=f"with --diff: {INBOX_HELP}")


def file_key_state(state: str | None, ready: int, total: int) -> str:
    """The state in the store of a key the plans file names, as people read it, from
    ``IngestStore.plan_progress``: live; building, with ``ready`` of ``total`` documents ready;
    retired (it served before, and its sets are stored); or not in the store yet."""
    if state == "building":
        return f"building: {ready} of {total} documents ready; the views switch to it when all are"
    if state == "retired":
        return "retired (stored: the next run serves it again, reusing its stored sets)"
    return state or "not in the store yet (the next run builds it)"


def plan_states_text(database: str | None, plans: list[Plan], settings: Settings) -> dict[str, str]:
    """Each plan key's state in the store as people read it: the file's keys
    (:func:`file_key_state`), then the stored keys the file does not name (empty: no store)."""
    try:
        store = open_store(database, settings)
    except CommandError:
        return {}
    states = {plan.key: file_key_state(*store.plan_progress(plan.key, plan.kinds)) for plan in plans}
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
            # What the vectors are stored under (model and text rules): `plans --diff` names it.
            "embedding_key": p.embedding_key,
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
            print(f"  {'embedding':>10}        key {row['embedding_key']} (vectors stored under it)")
            print(f"  {'':>10}        {json.dumps(row['embedding'], sort_keys=True)}")
    wanted = {row["key"] for row in rows}
    for key, state in sorted(states.items()):
        if key not in wanted:
            print(f"{key}\n  {'state':>10}        {state}")
    return 0
