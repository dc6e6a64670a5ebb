"""The ``ingest`` command: ``ingest run`` materializes the asset graph through Dagster;
``ingest plans`` lists plan keys with their settings; ``ingest inspect FILE [--plan NAME]``
prints a file's chunks per level (``chunking.inspect``); ``ingest search "TEXT"`` the nearest
child chunks (``ingest_assets.search``).

``ingest run`` executes the same jobs the UI launches, in this process: one partition-range
run of ``documents_job`` over all shards, then one of ``chunks_job`` per plan key over all of
its shards. Runs are recorded in ``$DAGSTER_HOME`` (default ``./.dagster_home``, configured
by ``./dagster.yaml``), so ``dagster dev`` with the same DAGSTER_HOME shows them.
"""

import argparse
import json
import logging
import sys
import time
from typing import Any

from ingest_assets.commands import add_commands, plan_states_text, run_command, run_forecast
from ingest_assets.plans import Plan, PlanError, load_plans
from ingest_assets.settings import LIMIT_FLAGS, Settings

__all__ = ["main", "run_pipeline"]


def _debug() -> bool:
    try:
        return Settings.from_env().debug
    except ValueError:
        return False


def run_pipeline(
    *,
    inbox: str | None = None,
    database: str | None = None,
    plans_file: str | None = None,
    instance: Any = None,
    settings: Settings | None = None,
) -> dict[str, Any]:
    """Materialize every asset for every plan of the plans file and return the summary.

    The engine first says (read-only) which partitions have work; only those ranges are run
    (one partition-range run of ``documents_job`` over the shards with source work, one of
    ``chunks_job`` per plan over its shards with work), so an up-to-date store launches no run
    and imports no Dagster. Skipped shards are reported as what a run would report for them
    (unchanged, reused).

    Args:
        inbox: Folder of sources (default: the settings').
        database: DuckDB file (default: the settings').
        plans_file: Plans YAML (default: the settings').
        instance: A Dagster instance; default the one under ``$DAGSTER_HOME`` (or ``./.dagster_home``).
        settings: Every other setting; default read from the environment.

    Raises:
        PlanError: The plans file is invalid.
        RuntimeError: A run failed; the message names the failed steps.
        ValueError: A setting is invalid; the message names it.
    """
    from ingest_assets.engine import SHARDS, IngestEngine
    from ingest_assets.engine.keys import chunk_partition, stretches
    from ingest_assets.store import IngestStore

    started = time.perf_counter()
    settings = (settings or Settings.from_env()).model_copy(
        update={
            k: v for k, v in {"inbox": inbox, "database": database, "plans_file": plans_file}.items() if v
        }
    )
    plans = load_plans(settings.plans_file)
    keys = [plan.key for plan in plans]
    view = IngestStore(settings.database, lock_timeout=settings.lock_timeout_seconds, settings=settings)
    # One connection for both; closed before any run needs the file.
    with view.session():
        view.check()  # missing: created; unwritable, foreign or unknown schema: StoreError now
        todo = IngestEngine(view, settings.inbox, plans, settings.limits).pending(SHARDS)
    summary: dict[str, Any] = {
        "documents": {"parsed": 0, "unchanged": 0, "failed": 0, "deleted": 0},
        "sources": {"files": 0, "new": 0, "changed": 0, "unchanged": 0, "deleted": 0},
        "chunk_sets": {"parent": {"created": 0, "reused": 0}, "child": {"created": 0, "reused": 0}},
        "graph_sets": {"created": 0, "reused": 0},
        "chunk_failures": 0,
        "chunker_calls": 0,
        "embeddings": {"sets_embedded": 0, "sets_reused": 0, "texts_embedded": 0, "texts_reused": 0},
        "plans": keys,
    }
    launcher = None
    if not todo.empty:
        from ingest_assets.defs.launch import Launcher

        launcher = Launcher(settings, keys, instance)
    # One run per stretch of consecutive shards with work: a shard without work is not
    # materialized, so each partition's latest materialization is its own work.
    for run in stretches(todo.documents):
        results = launcher.execute("documents_job", run[0], run[-1])
        scanned, parsed = results["sources"], results["documents"]
        for field in ("parsed", "unchanged", "failed"):
            summary["documents"][field] += getattr(parsed, field)
        summary["documents"]["deleted"] += scanned.deleted
        for field in summary["sources"]:
            summary["sources"][field] += getattr(scanned, field)
    for shard in sorted(set(SHARDS) - set(todo.documents)):
        summary["documents"]["unchanged"] += todo.idle[shard].unchanged
        summary["sources"]["files"] += todo.idle[shard].files
        summary["sources"]["unchanged"] += todo.idle[shard].files
    for key in keys:
        shards = todo.chunks.get(key, [])
        for run in stretches(shards):
            results = launcher.execute(
                "chunks_job", chunk_partition(key, run[0]), chunk_partition(key, run[-1])
            )
            for asset, role in (("parent_chunks", "parent"), ("child_chunks", "child")):
                for field in ("created", "reused"):
                    summary["chunk_sets"][role][field] += getattr(results[asset], field)
                summary["chunk_failures"] += results[asset].failed
                summary["chunker_calls"] += results[asset].chunker_calls
            for field in ("created", "reused"):
                summary["graph_sets"][field] += getattr(results["graph_nodes"], field)
            for field in summary["embeddings"]:
                summary["embeddings"][field] += getattr(results.get("embeddings"), field, 0)
        for shard in sorted(set(SHARDS) - set(shards)):
            reused = todo.idle[shard].reused[key]
            summary["chunk_sets"]["parent"]["reused"] += reused["parent"]
            summary["chunk_sets"]["child"]["reused"] += reused["child"]
            summary["graph_sets"]["reused"] += reused["graph"]
            summary["embeddings"]["sets_reused"] += reused.get("embedded", 0)
    summary["runs"] = launcher.launched if launcher else 0
    with view.session():
        summary["current"] = {
            "documents": view.query("SELECT count(*) FROM current_documents")[0][0],
            "chunks": view.query("SELECT count(*) FROM current_chunks")[0][0],
            "graph_nodes": view.query("SELECT count(*) FROM graph_nodes")[0][0],
            "failures": view.query("SELECT count(*) FROM ingest_failures")[0][0],
        }
    summary["database"] = settings.database
    summary["wall_seconds"] = round(time.perf_counter() - started, 2)
    return summary


def _print_summary(summary: dict[str, Any]) -> None:
    d, c = summary["documents"], summary["chunk_sets"]
    print(
        f"documents: {d['parsed']} parsed, {d['unchanged']} unchanged, {d['failed']} failed, "
        f"{d['deleted']} deleted"
    )
    for role in ("parent", "child"):
        print(f"{role} chunk sets: {c[role]['created']} created, {c[role]['reused']} reused")
    e = summary["embeddings"]
    print(f"embeddings: {e['texts_embedded']} texts embedded, {e['texts_reused']} reused")
    now = summary["current"]
    print(
        f"current view: {now['documents']} documents, {now['chunks']} chunks, "
        f"{now['graph_nodes']} graph nodes, "
        f"{now['failures']} failures (query ingest_failures)"
    )
    print(f"plans: {', '.join(summary['plans'])}")
    print(f"store: {summary['database']}  ({summary['wall_seconds']} s)")


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


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Log lines to whatever ``sys.stderr`` is when they are written (added once per process)."""

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _: Any) -> None:
        pass


def _show_progress(*, verbose: bool, quiet: bool) -> None:
    """A progress bar per step on a terminal (not with ``--json``), and with ``verbose`` the
    steps' log lines on stderr."""
    from ingest_assets.engine.progress import LOG, show_bars

    show_bars(sys.stderr.isatty() and not quiet)
    if verbose and not any(isinstance(h, _Stderr) for h in LOG.handlers):
        handler = _Stderr()
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        LOG.addHandler(handler)
        LOG.setLevel(logging.INFO)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ingest`` console script; returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["inspect"]:  # the library's own command: ``python -m chunking.inspect``
        from chunking.inspect import main as inspect

        return inspect(argv[1:])
    if argv[:1] == ["search"]:
        from ingest_assets.search import main as search

        return search(argv[1:])
    parser = argparse.ArgumentParser(prog="ingest", description="Fingerprint-versioned document ingestion.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="ingest the inbox for every plan (through Dagster)")
    run.add_argument("--inbox", help="folder of sources (default $INGEST_INBOX or data/sample)")
    run.add_argument("--db", help="DuckDB file (default $INGEST_DUCKDB or data/ingest.duckdb)")
    run.add_argument("--plans", help="plans file (default $INGEST_PLANS or plans.yaml)")
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.add_argument("-v", "--verbose", action="store_true", help="log each step's progress on stderr")
    for flag, variable, what in (
        ("--max-bytes", "INGEST_MAX_BYTES", "bytes per file (default 16 MiB)"),
        ("--max-pages", "INGEST_MAX_PAGES", "pages per PDF (default 2000)"),
        ("--max-rows", "INGEST_MAX_ROWS", "CSV rows or chat turns per file (default 1,000,000)"),
    ):
        run.add_argument(flag, type=int, metavar="N", help=f"largest {what}; sets ${variable}")
    commands.add_parser(
        "inspect", help="print a file's parent and child chunks under a plan (FILE --plan NAME)"
    )
    commands.add_parser("search", help='nearest child chunks to a query ("TEXT" [--plan NAME] [-k 10])')
    plans = commands.add_parser("plans", help="list plan keys with their settings")
    plans.add_argument("--plans", help="plans file (default $INGEST_PLANS or plans.yaml)")
    plans.add_argument("--json", action="store_true", help="print JSON")
    plans.add_argument(
        "--diff", action="store_true", help="what a run would parse, create and reuse (no write)"
    )
    plans.add_argument(
        "--db", help="the store whose plan states to show (default $INGEST_DUCKDB or data/ingest.duckdb)"
    )
    plans.add_argument(
        "--inbox", help="with --diff: folder of sources (default $INGEST_INBOX or data/sample)"
    )
    add_commands(commands)  # changes, export
    args = parser.parse_args(argv)
    try:
        handled = run_command(args)
        if handled is not None:
            return handled
        if args.command == "plans":
            if args.diff:
                return run_forecast(args)
            plans = load_plans(args.plans)
            rows = _plan_rows(plans)
            states = plan_states_text(args.db, plans)
            for row in rows:
                row["state"] = states.get(row["key"])
            if args.json:
                print(json.dumps(rows, indent=2))
            for row in [] if args.json else rows:
                print(row["key"] + (f"  {row['description']}" if row["description"] else ""))
                print(f"  {'state':>10}        {row['state'] or 'no store yet (ingest run registers it)'}")
                for kind, route in row["routes"].items():
                    for role in ("parent", "child"):
                        print(f"  {kind:>10} {role:<6} {json.dumps(route[role], sort_keys=True)}")
                if row["embedding"]:
                    print(f"  {'embedding':>10}        {json.dumps(row['embedding'], sort_keys=True)}")
            wanted = {row["key"] for row in rows}
            for key, state in [] if args.json else sorted(states.items()):
                if key not in wanted:
                    print(f"{key}\n  {'state':>10}        {state}")
            return 0
        limits = {flag: getattr(args, flag) for flag in LIMIT_FLAGS}
        for flag, value in limits.items():
            if value is not None and value <= 0:
                raise ValueError(f"{LIMIT_FLAGS[flag]} must be a positive number of {flag[4:]}")
        settings = Settings.from_env(**limits)
        _show_progress(verbose=args.verbose, quiet=args.json)
        summary = run_pipeline(inbox=args.inbox, database=args.db, plans_file=args.plans, settings=settings)
    except PlanError as error:
        print(f"ingest: invalid plans: {error}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError, ValueError) as error:  # StoreError is a RuntimeError
        print(f"ingest: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # no traceback for the user; INGEST_DEBUG=1 shows it
        if _debug():
            raise
        print(
            f"ingest: unexpected error {error!r}; run again with INGEST_DEBUG=1 for the traceback "
            "and report it",
            file=sys.stderr,
        )
        return 1
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    else:
        _print_summary(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
