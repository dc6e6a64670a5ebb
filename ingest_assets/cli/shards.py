"""``ingest shards [SHARD ...]``: the pipeline over some shards only, as one of several processes
(or machines) writing a DuckLake store at once (docs/scale-out.md).

It runs the documents job, then the chunks job of every plan, over the shards named (all
without one; one run of each per stretch of consecutive shards), on the store, inbox and plans
file of ``--db``, ``--inbox`` and ``--plans`` (as ``ingest run``; default the environment's
``INGEST_*``) and the instance of ``DAGSTER_HOME``, and prints one JSON object: per stretch, what
each step did as the store recorded it (``step_results``), and under ``write_lock`` the seconds
the process waited for the lake's write locks and held them. Shards partition the documents, so
runs of different shards share no row and write in parallel, and runs of all eight shards leave
the store a full run leaves.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ingest_assets.cli.common import (
    add_source_options,
    warn_failed,
    warn_failed_checks,
    warn_shared_instance,
    warn_skipped,
    warn_still_failing,
)
from ingest_assets.engine.keys import SHARDS, chunk_partition, stretches
from ingest_assets.engine.results import StepResult
from ingest_assets.engine.summary import Failure, read_step_results, still_failing
from ingest_assets.inbox import require_inbox
from ingest_assets.plans import load_plans
from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore, lake_lock
from ingest_assets.store.rows import utc_now

__all__ = ["HELP", "add_arguments", "run", "run_shards"]

HELP = "run the pipeline over some shards only, one writer of several (prints JSON)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``ingest shards``."""
    parser.add_argument(
        "shards", nargs="*", metavar="SHARD", help=f"shards to run ({SHARDS[0]}..{SHARDS[-1]}; default all)"
    )
    add_source_options(parser)


def run_shards(
    settings: Settings, shards: list[str], instance: Any = None
) -> tuple[dict[str, dict[str, StepResult]], list[str]]:
    """Run the documents job and each plan's chunks job over ``shards``: one run of each per
    stretch of consecutive shards (a partition range), as ``ingest run`` does.

    Returns:
        Per stretch (``"03"``, or ``"00-03"`` for a range), the step results by asset (a chunk
        step's as ``<asset>[<plan key>]``), read from the store; and the error-severity checks
        the runs failed, a line each.

    Raises:
        ValueError: A name is not a shard (00..07); the message lists them.
        FileNotFoundError: The inbox is not a folder (nothing was created or run).
        RuntimeError: A run failed; the message names the failed steps.
    """
    unknown = [shard for shard in shards if shard not in SHARDS]
    if unknown:
        raise ValueError(f"unknown shards {unknown}: the shards are {', '.join(SHARDS)}")
    keys = [plan.key for plan in load_plans(settings.plans_file)]
    require_inbox(settings.inbox)  # before Dagster is imported and the store created
    from ingest_assets.defs.launch import Launcher

    launcher = Launcher(settings, keys, instance)
    warn_shared_instance("shards", launcher.instance.root_directory, launcher.other_stores)
    store = IngestStore(settings.database, lock_timeout=settings.lock_timeout_seconds, settings=settings)
    report: dict[str, dict[str, StepResult]] = {}
    for stretch in stretches(shards):
        first, last = stretch[0], stretch[-1]
        done = read_step_results(store, [launcher.execute("documents_job", first, last)])
        results = {step: by_plan[None] for step, by_plan in done.items()}
        for key in keys:
            run_id = launcher.execute("chunks_job", chunk_partition(key, first), chunk_partition(key, last))
            done = read_step_results(store, [run_id])
            results.update({f"{step}[{key}]": by_plan[key] for step, by_plan in done.items()})
        report[first if first == last else f"{first}-{last}"] = results
    return report, launcher.failed_checks


def run(args: argparse.Namespace, settings: Settings) -> int:
    """``ingest shards``: the report as one JSON object (with ``failed_checks``), and on stderr
    the inbox entries the scans skipped, the files the runs failed on, the files of its shards
    still failing from earlier runs and the checks that failed; 1 (message on stderr) on a bad
    shard, a failed run or a failed check."""
    settings = settings.updated(inbox=args.inbox, database=args.db, plans_file=args.plans)
    shards = args.shards or list(SHARDS)
    started_at = utc_now()
    try:
        by_stretch, failed_checks = run_shards(settings, shards)
        report: dict[str, Any] = {
            stretch: {name: vars(result) for name, result in results.items()}
            for stretch, results in by_stretch.items()
        }
        report["failed_checks"] = failed_checks
        # On a lake: the seconds this process waited for write locks and held them, alone
        # (whole-store transactions) or beside other shards' writers; ``serial`` is the part of
        # its work that more writers cannot speed up.
        report["write_lock"] = {**vars(lake_lock.TIMES), "serial": lake_lock.TIMES.serial}
        print(json.dumps(report, default=str))
    except (ValueError, RuntimeError) as error:
        print(f"ingest shards: {error}", file=sys.stderr)
        return 1
    results = [result for by_step in by_stretch.values() for result in by_step.values()]
    skipped = [line for result in results for line in getattr(result, "skipped_files", ())]
    warn_skipped("shards", skipped, sum(getattr(result, "skipped", 0) for result in results))
    failures = [
        Failure(
            failed.source_uri,
            name.partition("[")[0],
            name.partition("[")[2].rstrip("]") or None,
            failed.message,
        )
        for by_step in by_stretch.values()
        for name, result in by_step.items()
        for failed in getattr(result, "failures", ())
    ]
    warn_failed("shards", failures, sum(getattr(result, "failed", 0) for result in results))
    store = IngestStore(settings.database, lock_timeout=settings.lock_timeout_seconds, settings=settings)
    warn_still_failing("shards", *still_failing(store, started_at, shards))
    return warn_failed_checks("shards", failed_checks)
