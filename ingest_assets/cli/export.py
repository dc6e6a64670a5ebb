"""``ingest export --plan NAME --format F --out DIR [--since EXPORT]``: a plan's current chunks,
graph nodes and edges (and vectors) written to a folder; see :mod:`ingest_assets.exports`."""

from __future__ import annotations

import argparse
import json

from ingest_assets.cli.common import add_db_option, open_store
from ingest_assets.settings import Settings
from ingest_assets.store.plan_names import resolve_plan

__all__ = ["HELP", "add_arguments", "run"]

HELP = "write a plan's chunks, graph nodes and edges to a folder"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``ingest export``."""
    add_db_option(parser)
    parser.add_argument("--plan", metavar="NAME", required=True, help="a plan name or key")
    parser.add_argument("--format", default="parquet", help="parquet (default), jsonl, graphml or neo4j-csv")
    parser.add_argument("--out", metavar="DIR", required=True, help="a new or empty folder")
    parser.add_argument("--since", metavar="EXPORT", help="only changes since this export (folder or id)")
    parser.add_argument("--json", action="store_true", help="print the manifest as JSON")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """``ingest export``: write the export, print its manifest (text, or JSON with ``--json``).

    Raises:
        ExportError: Bad format, folder or ``--since``; the message names the fix.
        UnknownPlan: ``--plan`` names no stored plan.
    """
    from ingest_assets.exports import export_plan

    store = open_store(args.db, settings)
    plan_key = resolve_plan(store, args.plan, served=True)
    result = export_plan(store, plan_key, args.format, args.out, args.since)
    manifest = result.manifest
    if args.json:
        print(json.dumps(manifest, indent=2, sort_keys=True))
        return 0
    kind = f"since {manifest['base']['export_id']}" if manifest["base"] else "full"
    print(f"export {manifest['export_id']} ({manifest['format']}, {kind}) -> {result.folder}")
    for name, n in manifest["rows"].items():
        removed, total = manifest["removed"][name], manifest["totals"][name]
        print(f"  {name}: {n} written, {removed} removed, {total} in view")
    print(f"  files: {', '.join(manifest['files'])}  ({result.seconds:.2f} s)")
    if "neo4j_import" in manifest:
        print(f"  import: {manifest['neo4j_import']}")
    if "neo4j_apply" in manifest:
        print(f"  apply: {manifest['neo4j_apply']}")
    return 0
