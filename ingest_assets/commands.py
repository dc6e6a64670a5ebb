"""The ``ingest`` subcommands that read the store and hand results on: ``changes``, ``export``
and ``plans --diff`` (no Dagster here; :mod:`ingest_assets.cli` registers them).

* ``ingest changes [--since RUN|TIME] [--run RUN] [--plan NAME] [--chunks] [--json]``: which
  chunk ids entered and left each plan's current view, per run (``chunk_changes``).
* ``ingest export --plan NAME --format F --out DIR [--since EXPORT]``: see :mod:`ingest_assets.exports`.
* ``ingest verify [--json]``: every chunk invariant over every stored set building and live
  plans hold, verified before or not (exit 1 on a violation).
* ``ingest plans --diff [--plans NEW_FILE]``: what a run of the plans file would do, read-only
  (see :mod:`ingest_assets.engine.forecast`).

Bad input raises :class:`CommandError` with a message naming the option and the fix.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ingest_assets.inbox import file_name
from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore
from ingest_assets.store.changes import ChunkChange, changes_since
from ingest_assets.store.lake import is_lake
from ingest_assets.store.lists import json_list

__all__ = ["CommandError", "add_commands", "open_store", "parse_since_time", "resolve_plan", "run_command"]


class CommandError(ValueError):
    """Bad input to a command; the message names the option and what to do."""


def open_store(database: str | None) -> IngestStore:
    """The store at ``database`` (default: the settings'), which must exist already.

    Raises:
        CommandError: There is no store file there.
    """
    location = database or Settings.from_env().database
    if is_lake(location):
        return IngestStore(location)
    path = Path(location)
    if not path.is_file():
        raise CommandError(
            f"--db {path}: no store file there; run `ingest run` first, or pass --db / set INGEST_DUCKDB"
        )
    return IngestStore(path)


def resolve_plan(store: IngestStore, name: str, option: str = "--plan") -> str:
    """The plan key ``name`` means: a stored plan key, or the name of a live plan.

    Raises:
        CommandError: No stored plan has that key or live name; the message lists the plans.
    """
    rows = store.query("SELECT plan_key, name, state FROM plan_status ORDER BY plan_key")
    keys = {key for key, _, _ in rows}
    if name in keys:
        return name
    live = [key for key, plan_name, state in rows if plan_name == name and state == "live"]
    if len(live) == 1:
        return live[0]
    known = (
        ", ".join(f"{key}{'' if state == 'live' else f' ({state})'}" for key, _, state in rows) or "none yet"
    )
    raise CommandError(
        f"{option} {name}: no plan with that name or key in {store.path} (plans: {known}); "
        "pass a plan name of plans.yaml, or run `ingest run` first"
    )


def plan_states_text(database: str | None, plans: list[Any]) -> dict[str, str]:
    """Each plan key's state in the store as people read it, for ``ingest plans``: the file's
    keys (live, building with how many documents are ready, retired, or not in the store yet),
    then the stored keys the file does not name (empty: no store)."""
    try:
        store = open_store(database)
    except CommandError:
        return {}
    states = {}
    for plan in plans:
        state, ready, total = store.plan_progress(plan.key, plan.kinds)
        if state == "building":
            state = f"building: {ready} of {total} documents ready; the views switch to it when all are"
        states[plan.key] = state or "not in the store yet (the next run builds it)"
    wanted = {plan.key for plan in plans}
    for key, stored in sorted(store.plan_states().items()):
        if key in wanted:
            continue
        if stored.state == "retired":
            states[key] = "retired (stored: putting its settings back serves it again without chunking)"
        else:
            states[key] = f"{stored.state}, not in this plans file (serves until its plan's new key is ready)"
    return states


def parse_since_time(text: str) -> datetime | None:
    """``text`` as a time (ISO 8601; UTC unless it names a zone), naive UTC as the store keeps
    time; None if it is not a time."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


def _since(store: IngestStore, text: str) -> datetime:
    """The moment ``--since`` names: a time, or the end of a run's recorded changes."""
    moment = parse_since_time(text)
    if moment is not None:
        return moment
    (end,) = store.query('SELECT max("at") FROM chunk_changes WHERE run_id = ?', [text])[0]
    if end is None:
        raise CommandError(
            f"--since {text}: neither a time (YYYY-MM-DD[THH:MM[:SS]], UTC) nor a run that recorded "
            "changes; `ingest changes` lists the runs (a run that changed nothing records none)"
        )
    return end


def read_changes(store: IngestStore, args: argparse.Namespace) -> list[ChunkChange]:
    """The changes ``ingest changes`` selects with ``args`` (``since``, ``run``, ``plan``)."""
    since = _since(store, args.since) if args.since else None
    plan_key = resolve_plan(store, args.plan) if args.plan else None
    with store.connect() as con:
        return changes_since(con, since=since, run_ids=[args.run] if args.run else None, plan_key=plan_key)


def _document_names(store: IngestStore, changes: list[ChunkChange]) -> dict[str, str]:
    ids = sorted({c.document_id for c in changes})
    rows = store.query(
        "SELECT DISTINCT document_id::VARCHAR, source_uri FROM documents "
        "WHERE document_id IN (SELECT unnest(?::JSON::UUID[]))",
        [json_list(ids)],
    )
    return {doc: file_name(uri) for doc, uri in rows}


def print_changes(store: IngestStore, changes: list[ChunkChange], *, chunks: bool) -> None:
    """Print ``changes`` grouped by run and plan, then by document (each chunk with ``chunks``)."""
    if not changes:
        print("no chunk entered or left a current view in the selection")
        return
    names = _document_names(store, changes)
    runs: dict[tuple[str, str], list[ChunkChange]] = defaultdict(list)
    for change in changes:
        runs[(change.run_id, change.plan_key)].append(change)
    level_name = {0: "child", 1: "parent"}
    for (run_id, plan_key), rows in runs.items():
        count = Counter(c.change for c in rows)
        documents = len({c.document_id for c in rows})
        plural = "s" if documents > 1 else ""
        print(
            f"run {run_id}  {rows[-1].at:%Y-%m-%d %H:%M:%S}  {plan_key}: "
            f"+{count['added']} -{count['removed']} chunks in {documents} document{plural}"
        )
        by_document: dict[str, Counter] = defaultdict(Counter)
        for c in rows:
            by_document[c.document_id][(c.change, c.level)] += 1
        for doc, counted in sorted(by_document.items(), key=lambda item: names.get(item[0], item[0])):
            parts = [
                f"{'+' if change == 'added' else '-'}{n} {level_name[level]}"
                for (change, level), n in sorted(counted.items(), key=lambda item: (-item[0][1], item[0][0]))
            ]
            print(f"  {names.get(doc, doc)}: {', '.join(parts)}")
            ordered = sorted(rows, key=lambda c: (-c.level, c.change != "removed", c.chunk_id))
            for c in ordered if chunks else ():
                if c.document_id == doc:
                    print(f"    {c.change:<7} {level_name[c.level]:<6} {c.chunk_id}")


def _seconds(value: float | None) -> str:
    return "unknown (no step timings stored yet: run once)" if value is None else f"{value:.2f} s"


def print_forecast(result: Any, plans_file: str, database: str) -> None:
    """Print a :class:`~ingest_assets.engine.forecast.Forecast` per plan and document kind."""
    print(f"{plans_file} against {database} (read-only: nothing was written)")
    parsed = ", ".join(f"{kind} {n}" for kind, n in sorted(result.parse.items())) or "none"
    print(
        f"files: {result.new} new, {result.changed} changed, {result.deleted} deleted; "
        f"documents to parse: {parsed}"
        + (f"; {len(result.parse_failed)} fail to parse" if result.parse_failed else "")
    )
    for plan in result.plans:
        state = "live" if plan.live else "not live in the store yet"
        print(f"plan {plan.key} ({state})")
        print(
            f"  {'kind':<10} {'docs':>5}  {'parent new/reused':>17}  {'child new/reused':>16}  "
            f"{'graph new/reused':>16}"
        )
        for kind, k in sorted(plan.kinds.items()):
            cells = [
                f"{len(k.sets[r]['create'])} / {len(k.sets[r]['reuse'])}"
                for r in ("parent", "child", "graph")
            ]
            print(f"  {kind:<10} {k.documents:>5}  {cells[0]:>17}  {cells[1]:>16}  {cells[2]:>16}")
        if plan.unrouted:
            print(f"  ({plan.unrouted} documents of kinds this plan does not route)")
        print(f"  estimate: {_seconds(plan.seconds)}")
    for key in result.retired:
        print(f"plan {key} (not in this file: retires, or serves until its plan's new key is built)")
    from ingest_assets.engine.forecast import rates_text

    basis = rates_text(result.rates)
    print(
        f"estimate for the run: {_seconds(result.seconds)}" + (f" (stored rates: {basis})" if basis else "")
    )


def run_forecast(args: argparse.Namespace) -> int:
    """``ingest plans --diff``: the forecast of ``--plans`` (default the settings') over the store."""
    from ingest_assets.engine.forecast import forecast
    from ingest_assets.plans import load_plans

    settings = Settings.from_env()
    plans_file = args.plans or settings.plans_file
    plans = load_plans(plans_file)
    store = open_store(args.db)
    result = forecast(store, args.inbox or settings.inbox, plans, settings.limits)
    if args.json:
        print(json.dumps(forecast_json(result), indent=2, sort_keys=True))
    else:
        print_forecast(result, plans_file, str(store.path))
    return 0


def forecast_json(result: Any) -> dict[str, Any]:
    """A forecast as JSON: counts per plan, kind and role (set keys left out)."""
    return {
        "files": {"new": result.new, "changed": result.changed, "deleted": result.deleted},
        "parse": result.parse,
        "parse_failed": result.parse_failed,
        "seconds": result.seconds,
        "retired": result.retired,
        "plans": {
            p.key: {
                "live": p.live,
                "seconds": p.seconds,
                "kinds": {
                    kind: {"documents": k.documents}
                    | {r: {a: len(keys) for a, keys in k.sets[r].items()} for r in k.sets}
                    for kind, k in p.kinds.items()
                },
            }
            for p in result.plans
        },
    }


def add_commands(commands: Any) -> None:
    """Add ``changes``, ``export`` and ``verify`` to the ``ingest`` parser's subcommands."""
    changes = commands.add_parser(
        "changes", help="chunk ids that entered and left the current views, per run"
    )
    changes.add_argument("--db", help="DuckDB file (default $INGEST_DUCKDB or data/ingest.duckdb)")
    changes.add_argument(
        "--since", metavar="RUN|TIME", help="only after this run's changes, or this UTC time"
    )
    changes.add_argument("--run", metavar="RUN", help="only this run's changes")
    changes.add_argument("--plan", metavar="NAME", help="only this plan (a name of plans.yaml or a key)")
    changes.add_argument("--chunks", action="store_true", help="list every chunk id")
    changes.add_argument("--json", action="store_true", help="print one JSON object per line")
    export = commands.add_parser("export", help="write a plan's chunks, graph nodes and edges to a folder")
    export.add_argument("--db", help="DuckDB file (default $INGEST_DUCKDB or data/ingest.duckdb)")
    export.add_argument("--plan", metavar="NAME", required=True, help="a plan name or key")
    export.add_argument("--format", default="parquet", help="parquet (default), jsonl, graphml or neo4j-csv")
    export.add_argument("--out", metavar="DIR", required=True, help="a new or empty folder")
    export.add_argument("--since", metavar="EXPORT", help="only changes since this export (folder or id)")
    export.add_argument("--json", action="store_true", help="print the manifest as JSON")
    verify = commands.add_parser(
        "verify", help="check every stored chunk set against the chunk contract (exit 1 on a violation)"
    )
    verify.add_argument("--db", help="DuckDB file (default $INGEST_DUCKDB or data/ingest.duckdb)")
    verify.add_argument("--json", action="store_true", help="print the violations by rule as JSON")


def run_command(args: argparse.Namespace) -> int | None:
    """Run ``args.command`` if it is one of this module's; None otherwise.

    Raises:
        CommandError: Bad input (see the module docstring).
        StoreError: The store cannot be opened.
    """
    if args.command == "changes":
        store = open_store(args.db)
        found = read_changes(store, args)
        if args.json:
            for c in found:
                print(json.dumps({**c.__dict__, "at": c.at.isoformat()}, sort_keys=True))
        else:
            print_changes(store, found, chunks=args.chunks)
        return 0
    if args.command == "export":
        from ingest_assets.exports import export_plan

        store = open_store(args.db)
        result = export_plan(store, resolve_plan(store, args.plan), args.format, args.out, args.since)
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
        return 0
    if args.command == "verify":
        from ingest_assets.store.invariants import full_verification

        store = open_store(args.db)
        found = full_verification(store)
        if args.json:
            print(json.dumps(found, indent=2, sort_keys=True))
        else:
            for rule, violations in found.items():
                print(f"{rule}: {'ok' if not violations else f'{len(violations)} violation(s)'}")
                for violation in violations:
                    print(f"  {violation}")
        return 1 if any(found.values()) else 0
    return None
