"""``ingest run``: materialize the asset graph for every plan, over the partitions with work.

It executes the same jobs the UI launches, in this process: one partition-range run of
``documents_job`` per stretch of consecutive shards with source work, then one of
``chunks_job`` per plan key and stretch with chunk work (a shard never materialized counts as
work, so a new store takes one run of each). Runs are recorded in
``$DAGSTER_HOME`` (default ``./.dagster_home``, configured by ``./dagster.yaml``), so
``dagster dev`` with the same DAGSTER_HOME shows them. The summary is read from what the store
recorded of those runs (:class:`~ingest_assets.engine.summary.RunSummary`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from typing import Any

from ingest_assets.cli.common import (
    add_source_options,
    warn_failed,
    warn_failed_checks,
    warn_shared_instance,
    warn_skipped,
    warn_still_failing,
)
from ingest_assets.cli.progress import show_progress
from ingest_assets.engine.summary import RunSummary
from ingest_assets.inbox import require_inbox
from ingest_assets.plans import load_plans
from ingest_assets.settings import LIMIT_FLAGS, Settings

__all__ = ["HELP", "add_arguments", "run", "run_pipeline"]

HELP = "ingest the inbox for every plan (through Dagster)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``ingest run``."""
    add_source_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when any file of the inbox fails (ingest_failures)"
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log steps' progress and Dagster's warnings on stderr"
    )
    for flag, variable, what in (
        ("--max-bytes", "INGEST_MAX_BYTES", "bytes per file (default 16 MiB)"),
        ("--max-pages", "INGEST_MAX_PAGES", "pages per PDF (default 2000)"),
        ("--max-rows", "INGEST_MAX_ROWS", "CSV rows or chat turns per file (default 1,000,000)"),
    ):
        parser.add_argument(flag, type=int, metavar="N", help=f"largest {what}; sets ${variable}")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """``ingest run``: run what has work, print the summary (text, or JSON with ``--json``),
    and name on stderr the inbox entries the scan skipped (every time: they are no work, so
    with nothing else to do no run names them), the files the runs failed on, and the checks
    that failed, and the files still failing from earlier runs. Returns 1 when a check failed
    (the work is stored; ``ingest verify`` lists every violation) or, with ``--strict``, when
    any file is failing; else 0 (a failed file is recorded and the rest is served).

    Raises:
        ValueError: A ``--max-*`` limit is not positive, or a setting is invalid.
    """
    limits = {flag: getattr(args, flag) for flag in LIMIT_FLAGS}
    for flag, value in limits.items():
        if value is not None and value <= 0:
            raise ValueError(f"{LIMIT_FLAGS[flag]} must be a positive number of {flag[4:]}")
    settings = settings.updated(**limits)
    show_progress(verbose=args.verbose, quiet=args.json)
    summary = run_pipeline(
        inbox=args.inbox, database=args.db, plans_file=args.plans, settings=settings, verbose=args.verbose
    )
    if args.json:
        print(json.dumps(summary.to_json(), sort_keys=True))
    else:
        print("\n".join(summary.lines()))
    warn_skipped("run", summary.skipped)
    warn_failed("run", summary.failures, summary.failed_count)
    warn_still_failing("run", summary.still_failing, summary.still_failing_count)
    code = warn_failed_checks("run", summary.failed_checks)
    if args.strict and summary.current.failures:
        print(f"ingest run: {summary.current.failures} file failure(s) (--strict)", file=sys.stderr)
        return 1
    return code


def run_pipeline(
    *,
    inbox: str | None = None,
    database: str | None = None,
    plans_file: str | None = None,
    instance: Any = None,
    settings: Settings | None = None,
    verbose: bool = False,
) -> RunSummary:
    """Materialize every asset for every plan of the plans file and return the summary.

    The engine first says (read-only) which partitions have work; only those ranges are run
    (one partition-range run of ``documents_job`` per stretch of shards with source work, one
    of ``chunks_job`` per plan and stretch with chunk work), so an up-to-date store launches no
    run and imports no Dagster. Skipped shards are reported as what a run would report for them
    (unchanged, reused).

    Args:
        inbox: Folder of sources (default: the settings').
        database: DuckDB file (default: the settings').
        plans_file: Plans YAML (default: the settings').
        instance: A Dagster instance; default the one under ``$DAGSTER_HOME`` (or ``./.dagster_home``).
        settings: Every other setting; default read from the environment (``Settings()``).
        verbose: Show Dagster's warnings on stderr as the runs go.

    Raises:
        PlanError: The plans file is invalid.
        FileNotFoundError: The inbox is not a folder (nothing was created or run).
        RuntimeError: A run failed; the message names the failed steps.
        ValueError: A setting is invalid; the message names it.
    """
    from ingest_assets.engine import SHARDS, IngestEngine
    from ingest_assets.engine.keys import chunk_partition, stretches
    from ingest_assets.engine.workers import forget_prefetched
    from ingest_assets.store import IngestStore
    from ingest_assets.store.rows import utc_now

    started, started_at = time.perf_counter(), utc_now()
    given = {"inbox": inbox, "database": database, "plans_file": plans_file}
    settings = (settings or Settings.from_env()).updated(**{k: v for k, v in given.items() if v})
    plans = load_plans(settings.plans_file)
    require_inbox(settings.inbox)  # before the store is created and Dagster is imported
    keys = [plan.key for plan in plans]
    view = IngestStore(settings.database, lock_timeout=settings.lock_timeout_seconds, settings=settings)
    engine = IngestEngine(view, settings.inbox, plans, settings)
    # One connection for both; closed before any run needs the file.
    with view.session():
        view.check()  # missing: created; unwritable, foreign or unknown schema: StoreError now
        todo = engine.pending(SHARDS)
    run_ids: list[str] = []
    failed_checks: list[str] = []
    covered = todo  # the shards the runs cover; the summary counts the others as reused
    if not todo.empty:
        # The workers parse (or, with nothing to parse, chunk) while this process imports
        # Dagster and starts the runs; the steps take what they made of the same work.
        engine.prefetch_parse(todo)
        engine.prefetch_chunks(todo)
        try:
            from ingest_assets.defs.launch import Launcher

            launcher = Launcher(settings, keys, instance, verbose=verbose)
            warn_shared_instance("run", launcher.instance.root_directory, launcher.other_stores)
            # One run per stretch of consecutive shards with work: a shard without work is not
            # materialized, so each partition's latest materialization is its own work. A shard
            # never materialized is work too (its first materialization records it empty), so on a
            # new store each job is one run over every shard.
            covered = dataclasses.replace(todo, chunks=dict(todo.chunks))  # what the runs cover
            if todo.documents:
                covered.documents = sorted({*todo.documents, *launcher.never_materialized()})
                for run in stretches(covered.documents):
                    run_ids.append(_timed(view, launcher, "documents_job", run[0], run[-1]))
            for key in keys:
                if not todo.chunks.get(key):
                    continue
                covered.chunks[key] = sorted({*todo.chunks[key], *launcher.never_materialized(key)})
                for run in stretches(covered.chunks[key]):
                    first, last = chunk_partition(key, run[0]), chunk_partition(key, run[-1])
                    run_ids.append(_timed(view, launcher, "chunks_job", first, last))
            failed_checks = launcher.failed_checks
        finally:
            forget_prefetched()  # what a failed run left unasked
    with view.session():  # one connection for the summary's reads
        return RunSummary.of_runs(
            view,
            run_ids,
            covered,
            keys,
            runs=len(run_ids),
            database=str(settings.database),
            wall_seconds=round(time.perf_counter() - started, 2),
            failed_checks=failed_checks,
            since=started_at,
        )


def _timed(view: Any, launcher: Any, job: str, first: str, last: str) -> str:
    """``launcher.execute(job, first, last)``, recording the run's own seconds (its wall time
    less its steps' recorded time) as the step ``run``, for ``ingest plans --diff``'s estimate."""
    started = time.perf_counter()
    run_id = launcher.execute(job, first, last)
    wall = time.perf_counter() - started
    (steps,) = view.query("SELECT coalesce(sum(seconds), 0) FROM step_timings WHERE run_id = ?", [run_id])[0]
    view.record_timing("run", None, 1, 1, max(wall - steps, 0.0))
    return run_id
