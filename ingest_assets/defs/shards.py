"""Shard runs: the pipeline over some shards only, as one of several processes (or machines)
writing a DuckLake store at once (docs/scale-out.md).

``python -m ingest_assets.defs.shards 00 01 02 03`` runs the documents job, then the chunks job of
every plan, over the shards named (one run of each per stretch of consecutive shards), on the
store and instance of the environment (``INGEST_*``, ``DAGSTER_HOME``), and prints one JSON
object: per stretch, the rows each step wrote, and under ``write_lock`` the seconds the process
waited for the lake's write locks and held them. Shards partition the documents, so runs of
different shards share no row and write in parallel, and runs of all eight shards leave the
store a full run leaves.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ingest_assets.defs.launch import Launcher
from ingest_assets.engine import SHARDS
from ingest_assets.engine.keys import chunk_partition, stretches
from ingest_assets.plans import load_plans
from ingest_assets.settings import Settings
from ingest_assets.store import lake_lock

__all__ = ["main", "run_shards"]


def run_shards(settings: Settings, shards: list[str], instance: Any = None) -> dict[str, dict[str, Any]]:
    """Run the documents job and each plan's chunks job over ``shards``: one run of each per
    stretch of consecutive shards (a partition range), as ``ingest run`` does.

    Returns:
        Per stretch (``"03"``, or ``"00-03"`` for a range), the step results by asset (as dicts).

    Raises:
        ValueError: A name is not a shard (00..07); the message lists them.
        RuntimeError: A run failed; the message names the failed steps.
    """
    unknown = [shard for shard in shards if shard not in SHARDS]
    if unknown:
        raise ValueError(f"unknown shards {unknown}: the shards are {', '.join(SHARDS)}")
    keys = [plan.key for plan in load_plans(settings.plans_file)]
    launcher = Launcher(settings, keys, instance)
    report: dict[str, dict[str, Any]] = {}
    for stretch in stretches(shards):
        first, last = stretch[0], stretch[-1]
        results = dict(launcher.execute("documents_job", first, last))
        for key in keys:
            chunked = launcher.execute("chunks_job", chunk_partition(key, first), chunk_partition(key, last))
            results.update({f"{name}[{key}]": result for name, result in chunked.items()})
        report[first if first == last else f"{first}-{last}"] = {
            name: vars(result) for name, result in results.items()
        }
    return report


def main(argv: list[str] | None = None) -> int:
    """The command line: shard names as arguments; 0 on success, 1 (message on stderr) otherwise."""
    shards = sys.argv[1:] if argv is None else argv
    try:
        report: dict[str, Any] = run_shards(Settings.from_env(), shards or list(SHARDS))
        # On a lake: the seconds this process waited for write locks and held them, alone
        # (whole-store transactions) or beside other shards' writers; ``serial`` is the part of
        # its work that more writers cannot speed up.
        report["write_lock"] = {**vars(lake_lock.TIMES), "serial": lake_lock.TIMES.serial}
        print(json.dumps(report, default=str))
    except (ValueError, RuntimeError) as error:
        print(f"ingest shards: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
