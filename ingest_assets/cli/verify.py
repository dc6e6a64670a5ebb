"""``ingest verify [--json]``: every chunk invariant over every stored set building and live
plans hold, verified before or not; exit 1 on a violation (``verify_job`` runs the same)."""

from __future__ import annotations

import argparse
import json

from ingest_assets.cli.common import add_db_option, open_store
from ingest_assets.settings import Settings

__all__ = ["HELP", "add_arguments", "run"]

HELP = "check every stored chunk set against the chunk contract (exit 1 on a violation)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``ingest verify``."""
    add_db_option(parser)
    parser.add_argument("--json", action="store_true", help="print the violations by rule as JSON")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """``ingest verify``: each rule ok or its violations; 0 if none, 1 otherwise."""
    from ingest_assets.store.invariants import full_verification

    store = open_store(args.db, settings)
    found = full_verification(store)
    if args.json:
        print(json.dumps(found, indent=2, sort_keys=True))
    else:
        for rule, violations in found.items():
            print(f"{rule}: {'ok' if not violations else f'{len(violations)} violation(s)'}")
            for violation in violations:
                print(f"  {violation}")
    return 1 if any(found.values()) else 0
