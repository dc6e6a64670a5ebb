"""The ``ingest`` command: ``ingest run`` materializes the asset graph through Dagster;
``ingest plans`` lists plan keys with their settings.

``ingest run`` executes the same jobs the UI launches, in this process: one partition-range
run of ``documents_job`` over all shards, then one of ``chunks_job`` per plan key over all of
its shards. Runs are recorded in ``$DAGSTER_HOME`` (default ``./.dagster_home``, configured
by ``./dagster.yaml``), so ``dagster dev`` with the same DAGSTER_HOME shows them.
"""

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from ingest_assets.plans import Plan, PlanError, load_plans

__all__ = ["main", "run_pipeline"]

PROJECT_ROOT = Path(__file__).resolve().parents[1]
_QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def dagster_home() -> Path:
    """Return ``$DAGSTER_HOME``, else ``./.dagster_home`` seeded with the project's dagster.yaml."""
    if os.environ.get("DAGSTER_HOME"):
        return Path(os.environ["DAGSTER_HOME"])
    home = Path(".dagster_home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        for candidate in (Path("dagster.yaml"), PROJECT_ROOT / "dagster.yaml"):
            if candidate.exists():
                shutil.copyfile(candidate, home / "dagster.yaml")
                break
    return home


def _instance() -> Any:
    from dagster import DagsterInstance
    from dagster._core.instance.ref import InstanceRef

    return DagsterInstance.from_ref(InstanceRef.from_dir(str(dagster_home())))


def _metadata_of(result: Any) -> dict[str, dict[str, Any]]:
    """First materialization's metadata per asset (a range run repeats it per partition)."""
    found: dict[str, dict[str, Any]] = {}
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        name = materialization.asset_key.to_user_string()
        if name not in found:
            found[name] = {k: getattr(v, "value", v) for k, v in materialization.metadata.items()}
    return found


def _execute(job: Any, instance: Any, start: str, end: str) -> dict[str, dict[str, Any]]:
    from ingest_assets.sensors import range_tags

    result = job.execute_in_process(
        instance=instance, tags=range_tags(start, end), run_config=_QUIET, raise_on_error=False
    )
    if not result.success:
        errors = [
            f"{event.step_key}: {event.event_specific_data.error.message.strip()}"
            for event in result.all_events
            if event.is_step_failure
        ]
        raise RuntimeError(f"run {result.run_id} failed: " + "; ".join(errors or ["see the Dagster run log"]))
    return _metadata_of(result)


def run_pipeline(
    *,
    inbox: str | None = None,
    database: str | None = None,
    plans_file: str | None = None,
    instance: Any = None,
) -> dict[str, Any]:
    """Materialize every asset for every plan of the plans file and return the summary.

    Args:
        inbox: Folder of sources (default ``$INGEST_INBOX`` or ``data/sample``).
        database: DuckDB file (default ``$INGEST_DUCKDB`` or ``data/ingest.duckdb``).
        plans_file: Plans YAML (default ``$INGEST_PLANS`` or ``plans.yaml``).
        instance: A Dagster instance; default the one under :func:`dagster_home`.

    Raises:
        PlanError: The plans file is invalid.
        RuntimeError: A run failed; the message names the failed steps.
    """
    from ingest_assets.engine import SHARDS, pipeline_limits
    from ingest_assets.factory import build_definitions
    from ingest_assets.partitions import PLAN_DIMENSION

    started = time.perf_counter()
    pipeline_limits()  # a bad INGEST_MAX_* value fails here, before any run
    defs = build_definitions(database, inbox, plans_file)
    store = defs.resources["store"]
    store.store().check()  # missing: created; unwritable, foreign or unknown schema: StoreError now
    keys = [plan.key for plan in store.plans()]
    instance = instance or _instance()
    known = set(instance.get_dynamic_partitions(PLAN_DIMENSION))
    missing = [key for key in keys if key not in known]
    if missing:  # a run may only name registered keys
        instance.add_dynamic_partitions(PLAN_DIMENSION, missing)
    for retired in sorted(known - set(keys)):
        instance.delete_dynamic_partition(PLAN_DIMENSION, retired)
    meta = _execute(defs.resolve_job_def("documents_job"), instance, SHARDS[0], SHARDS[-1])
    summary: dict[str, Any] = {
        "documents": {
            "parsed": meta["documents"]["parsed"],
            "unchanged": meta["documents"]["unchanged"],
            "failed": meta["documents"]["failed"],
            "deleted": meta["sources"]["deleted"],
        },
        "sources": {k: meta["sources"][k] for k in ("files", "new", "changed", "unchanged", "deleted")},
        "chunk_sets": {"parent": {"created": 0, "reused": 0}, "child": {"created": 0, "reused": 0}},
        "graph_sets": {"created": 0, "reused": 0},
        "chunk_failures": 0,
        "chunker_calls": 0,
        "plans": keys,
    }
    chunks_job = defs.resolve_job_def("chunks_job")
    for key in keys:
        meta = _execute(chunks_job, instance, f"{key}|{SHARDS[0]}", f"{key}|{SHARDS[-1]}")
        for asset, role in (("parent_chunks", "parent"), ("child_chunks", "child")):
            for field in ("created", "reused"):
                summary["chunk_sets"][role][field] += meta[asset][field]
            summary["chunk_failures"] += meta[asset]["failed"]
            summary["chunker_calls"] += meta[asset]["chunker_calls"]
        for field in ("created", "reused"):
            summary["graph_sets"][field] += meta["graph_nodes"][field]
    view = store.store()
    summary["current"] = {
        "documents": view.query("SELECT count(*) FROM current_documents")[0][0],
        "chunks": view.query("SELECT count(*) FROM current_chunks")[0][0],
        "graph_nodes": view.query("SELECT count(*) FROM graph_nodes")[0][0],
        "failures": view.query("SELECT count(*) FROM ingest_failures")[0][0],
    }
    summary["database"] = store.database
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
        {"key": p.key, "name": p.name, "description": p.description, "routes": p.settings()} for p in plans
    ]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ingest`` console script; returns the exit code."""
    parser = argparse.ArgumentParser(prog="ingest", description="Fingerprint-versioned document ingestion.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="ingest the inbox for every plan (through Dagster)")
    run.add_argument("--inbox", help="folder of sources (default $INGEST_INBOX or data/sample)")
    run.add_argument("--db", help="DuckDB file (default $INGEST_DUCKDB or data/ingest.duckdb)")
    run.add_argument("--plans", help="plans file (default $INGEST_PLANS or plans.yaml)")
    run.add_argument("--json", action="store_true", help="print one JSON object")
    for flag, variable, what in (
        ("--max-bytes", "INGEST_MAX_BYTES", "bytes per file (default 16 MiB)"),
        ("--max-pages", "INGEST_MAX_PAGES", "pages per PDF (default 2000)"),
        ("--max-rows", "INGEST_MAX_ROWS", "CSV rows or chat turns per file (default 1,000,000)"),
    ):
        run.add_argument(flag, type=int, metavar="N", help=f"largest {what}; sets ${variable}")
    plans = commands.add_parser("plans", help="list plan keys with their settings")
    plans.add_argument("--plans", help="plans file (default $INGEST_PLANS or plans.yaml)")
    plans.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    try:
        if args.command == "plans":
            rows = _plan_rows(load_plans(args.plans))
            if args.json:
                print(json.dumps(rows, indent=2))
            for row in [] if args.json else rows:
                print(row["key"] + (f"  {row['description']}" if row["description"] else ""))
                for kind, route in row["routes"].items():
                    for role in ("parent", "child"):
                        print(f"  {kind:>10} {role:<6} {json.dumps(route[role], sort_keys=True)}")
            return 0
        for flag in ("max_bytes", "max_pages", "max_rows"):
            value = getattr(args, flag)
            if value is not None:
                if value <= 0:
                    raise ValueError(f"--{flag.replace('_', '-')} must be a positive number of {flag[4:]}")
                os.environ[f"INGEST_{flag.upper()}"] = str(value)  # the resource's engines read it
        summary = run_pipeline(inbox=args.inbox, database=args.db, plans_file=args.plans)
    except PlanError as error:
        print(f"ingest: invalid plans: {error}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError, ValueError) as error:  # StoreError is a RuntimeError
        print(f"ingest: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # no traceback for the user; INGEST_DEBUG=1 shows it
        if os.environ.get("INGEST_DEBUG"):
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
