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
import socket
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


# Runs of `ingest run` name their process, so a later `ingest run` can tell a run whose
# process was killed from one still going (see _Runs._release_orphans).
PID_TAG, HOST_TAG = "ingest/pid", "ingest/host"


def _process_tags() -> dict[str, str]:
    return {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _execute(job: Any, instance: Any, start: str, end: str) -> dict[str, dict[str, Any]]:
    from ingest_assets.sensors import range_tags

    result = job.execute_in_process(
        instance=instance,
        tags={**range_tags(start, end), **_process_tags()},
        run_config=_QUIET,
        raise_on_error=False,
    )
    if not result.success:
        errors = [
            f"{event.step_key}: {event.event_specific_data.error.message.strip()}"
            for event in result.all_events
            if event.is_step_failure
        ]
        raise RuntimeError(f"run {result.run_id} failed: " + "; ".join(errors or ["see the Dagster run log"]))
    return _metadata_of(result)


# The resource's defaults (ingest_assets.resources imports dagster; this path must not when
# nothing is pending). tests/ingest/test_pending.py keeps them equal.
DEFAULT_DATABASE = "data/ingest.duckdb"
DEFAULT_INBOX = "data/sample"
DEFAULT_PLANS = "plans.yaml"
LOCK_TIMEOUT_SECONDS = 120.0


def _outside(shards: list[str], low: str, high: str) -> list[str]:
    return [s for s in shards if not low <= s <= high]


def run_pipeline(
    *,
    inbox: str | None = None,
    database: str | None = None,
    plans_file: str | None = None,
    instance: Any = None,
) -> dict[str, Any]:
    """Materialize every asset for every plan of the plans file and return the summary.

    The engine first says (read-only) which partitions have work; only those ranges are run
    (one partition-range run of ``documents_job`` over the shards with source work, one of
    ``chunks_job`` per plan over its shards with work), so an up-to-date store launches no run
    and imports no Dagster. Skipped shards are reported as what a run would report for them
    (unchanged, reused).

    Args:
        inbox: Folder of sources (default ``$INGEST_INBOX`` or ``data/sample``).
        database: DuckDB file (default ``$INGEST_DUCKDB`` or ``data/ingest.duckdb``).
        plans_file: Plans YAML (default ``$INGEST_PLANS`` or ``plans.yaml``).
        instance: A Dagster instance; default the one under :func:`dagster_home`.

    Raises:
        PlanError: The plans file is invalid.
        RuntimeError: A run failed; the message names the failed steps.
    """
    from ingest_assets.engine import SHARDS, IngestEngine, pipeline_limits
    from ingest_assets.store import IngestStore

    started = time.perf_counter()
    pipeline_limits()  # a bad INGEST_MAX_* value fails here, before any run
    database = database or os.environ.get("INGEST_DUCKDB") or DEFAULT_DATABASE
    inbox = inbox or os.environ.get("INGEST_INBOX") or DEFAULT_INBOX
    plans_file = plans_file or os.environ.get("INGEST_PLANS") or DEFAULT_PLANS
    plans = load_plans(plans_file)
    keys = [plan.key for plan in plans]
    view = IngestStore(database, lock_timeout=LOCK_TIMEOUT_SECONDS)
    # One connection for both (opening one costs 20 ms); closed before any run needs the file.
    with view.session():
        view.check()  # missing: created; unwritable, foreign or unknown schema: StoreError now
        todo = IngestEngine(view, inbox, plans).pending(SHARDS)
    idle = todo["idle"]
    summary: dict[str, Any] = {
        "documents": {"parsed": 0, "unchanged": 0, "failed": 0, "deleted": 0},
        "sources": {"files": 0, "new": 0, "changed": 0, "unchanged": 0, "deleted": 0},
        "chunk_sets": {"parent": {"created": 0, "reused": 0}, "child": {"created": 0, "reused": 0}},
        "graph_sets": {"created": 0, "reused": 0},
        "chunk_failures": 0,
        "chunker_calls": 0,
        "plans": keys,
    }
    runs = None
    if todo["documents"] or todo["chunks"]:
        runs = _Runs(database, inbox, plans_file, keys, instance)
    if todo["documents"]:
        low, high = todo["documents"][0], todo["documents"][-1]
        meta = runs.execute("documents_job", low, high)
        for field in ("parsed", "unchanged", "failed"):
            summary["documents"][field] += meta["documents"][field]
        summary["documents"]["deleted"] += meta["sources"]["deleted"]
        for field in summary["sources"]:
            summary["sources"][field] += meta["sources"][field]
        skipped = _outside(list(SHARDS), low, high)
    else:
        skipped = list(SHARDS)
    for shard in skipped:
        summary["documents"]["unchanged"] += idle[shard]["unchanged"]
        summary["sources"]["files"] += idle[shard]["files"]
        summary["sources"]["unchanged"] += idle[shard]["files"]
    for key in keys:
        shards = todo["chunks"].get(key)
        if shards:
            low, high = shards[0], shards[-1]
            meta = runs.execute("chunks_job", f"{key}|{low}", f"{key}|{high}")
            for asset, role in (("parent_chunks", "parent"), ("child_chunks", "child")):
                for field in ("created", "reused"):
                    summary["chunk_sets"][role][field] += meta[asset][field]
                summary["chunk_failures"] += meta[asset]["failed"]
                summary["chunker_calls"] += meta[asset]["chunker_calls"]
            for field in ("created", "reused"):
                summary["graph_sets"][field] += meta["graph_nodes"][field]
            skipped = _outside(list(SHARDS), low, high)
        else:
            skipped = list(SHARDS)
        for shard in skipped:
            reused = idle[shard]["plans"][key]
            summary["chunk_sets"]["parent"]["reused"] += reused["parent"]
            summary["chunk_sets"]["child"]["reused"] += reused["child"]
            summary["graph_sets"]["reused"] += reused["graph"]
    summary["runs"] = runs.launched if runs else 0
    with view.session():
        summary["current"] = {
            "documents": view.query("SELECT count(*) FROM current_documents")[0][0],
            "chunks": view.query("SELECT count(*) FROM current_chunks")[0][0],
            "graph_nodes": view.query("SELECT count(*) FROM graph_nodes")[0][0],
            "failures": view.query("SELECT count(*) FROM ingest_failures")[0][0],
        }
    summary["database"] = database
    summary["wall_seconds"] = round(time.perf_counter() - started, 2)
    return summary


class _Runs:
    """The Dagster side of ``ingest run``: definitions, instance, plan partitions, runs launched."""

    def __init__(self, database: str, inbox: str, plans_file: str, keys: list[str], instance: Any) -> None:
        from ingest_assets.factory import build_definitions
        from ingest_assets.partitions import PLAN_DIMENSION

        self.defs = build_definitions(database, inbox, plans_file)
        self.instance = instance or _instance()
        self.launched = 0
        self._release_orphans()
        known = set(self.instance.get_dynamic_partitions(PLAN_DIMENSION))
        missing = [key for key in keys if key not in known]
        if missing:  # a run may only name registered keys
            self.instance.add_dynamic_partitions(PLAN_DIMENSION, missing)
        for retired in sorted(known - set(keys)):
            self.instance.delete_dynamic_partition(PLAN_DIMENSION, retired)

    def _release_orphans(self) -> None:
        """Fail the runs of killed ``ingest run`` processes on this host and free their pool slots.

        A run killed mid-step keeps its slot of the ``duckdb_writer`` pool; without this, the
        next run's writing steps would wait for that slot forever.
        """
        from dagster import DagsterRunStatus, RunsFilter

        unfinished = [DagsterRunStatus.STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.NOT_STARTED]
        host = socket.gethostname()
        for run in self.instance.get_runs(filters=RunsFilter(statuses=unfinished, tags={HOST_TAG: host})):
            pid = int(run.tags.get(PID_TAG, "0") or 0)
            if pid and pid != os.getpid() and not _alive(pid):
                self.instance.report_run_failed(run, message=f"ingest run process {pid} is gone (killed)")
                self.instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)

    def execute(self, job: str, start: str, end: str) -> dict[str, dict[str, Any]]:
        self.launched += 1
        return _execute(self.defs.resolve_job_def(job), self.instance, start, end)


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
