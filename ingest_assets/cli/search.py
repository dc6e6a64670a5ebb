"""``ingest search "TEXT" [--plan NAME] [-k 10]``: the child chunks nearest to a query, with
their parent, heading label, source and score (see :mod:`ingest_assets.search`)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any

from ingest_assets.cli.common import CommandError, add_db_option, open_store
from ingest_assets.inbox import file_name
from ingest_assets.search import Hit, SearchError, search, served_plan
from ingest_assets.settings import Settings
from ingest_assets.store import StoreError

__all__ = ["HELP", "add_arguments", "run"]

HELP = 'nearest child chunks to a query ("TEXT" [--plan NAME] [-k 10])'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``ingest search``."""
    parser.add_argument("query", help="the text to search for")
    parser.add_argument(
        "--plan", help="plan name or key (default: 'default', else the first that serves vectors)"
    )
    parser.add_argument("-k", type=int, default=10, help="how many chunks (default 10)")
    add_db_option(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")


def _print(hits: list[Hit]) -> None:
    for rank, hit in enumerate(hits, 1):
        where = file_name(hit.source_uri)
        print(f"{rank:>2}. {hit.score:.3f}  {where}  {hit.label or '(no heading)'}")
        print(f"    child {hit.id}  parent {hit.parent_id}")
        flat = " ".join(hit.text.split())
        print(f"    {flat[:100]}{'…' if len(flat) > 100 else ''}")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """``ingest search``: the hits as text or JSON; 1 for a search that cannot run (a blank
    query, no store file, no such plan, no vectors: the message says why). The plan and its
    model come from the store, so no plans file is needed."""
    try:
        if not args.query.strip():
            raise SearchError("the query is empty; pass the text to search for")
        if args.k <= 0:
            raise SearchError("-k must be a positive number of chunks")
        store = open_store(args.db, settings)  # read-only: a missing store is not created
        plan = served_plan(store, args.plan)
        hits = search(store, plan, args.query, args.k)
    except (CommandError, SearchError, StoreError, OSError) as error:
        print(f"ingest search: {error}", file=sys.stderr)
        return 1
    if args.json:
        out: list[dict[str, Any]] = [asdict(hit) for hit in hits]
        print(json.dumps({"plan": plan.key, "hits": out}, indent=2))
    else:
        print(f"plan {plan.key}, model {plan.model}")
        _print(hits)
    return 0
