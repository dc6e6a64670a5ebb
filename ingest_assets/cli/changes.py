"""``ingest changes [--since RUN|TIME] [--run RUN] [--plan NAME] [--chunks] [--json]``: which
chunk ids entered and left each plan's current view, per run (``chunk_changes``)."""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from datetime import UTC, datetime

from ingest_assets.cli.common import CommandError, add_db_option, open_store
from ingest_assets.inbox import file_name
from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore
from ingest_assets.store.changes import ChunkChange, changes_since
from ingest_assets.store.lists import json_list
from ingest_assets.store.plan_names import plan_history

__all__ = ["HELP", "add_arguments", "parse_since_time", "print_changes", "read_changes", "run"]

HELP = "chunk ids that entered and left the current views, per run"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``ingest changes``."""
    add_db_option(parser)
    parser.add_argument(
        "--since",
        metavar="RUN|TIME",
        help="only after this run's changes (its id or first 8+ characters), or this UTC time",
    )
    parser.add_argument("--run", metavar="RUN", help="only this run's changes (id or 8+ characters)")
    parser.add_argument(
        "--plan", metavar="NAME", help="only this plan: a name (across every key it has had) or one key"
    )
    parser.add_argument("--chunks", action="store_true", help="list every chunk id")
    parser.add_argument("--json", action="store_true", help="print one JSON object per line")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """``ingest changes``: the selected changes as text, or one JSON object a line.

    Raises:
        CommandError: ``--since`` is neither a time nor a run that recorded changes; a run
            prefix is ambiguous; no store.
        UnknownPlan: ``--plan`` names no stored plan.
    """
    store = open_store(args.db, settings)
    found = read_changes(store, args)
    if args.json:
        names = _plan_names(store)
        for c in found:
            row = {**c.__dict__, "plan": names.get(c.plan_key), "at": c.at.isoformat()}
            print(json.dumps(row, sort_keys=True))
    else:
        print_changes(store, found, chunks=args.chunks)
    return 0


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


# The start of a Dagster run id (a UUID) as the UI shows it: 8 hex characters, or more of the id.
_RUN_PREFIX = re.compile(r"[0-9a-f]{8}[0-9a-f-]*")


def _recorded_run(store: IngestStore, flag: str, text: str) -> tuple[str, datetime] | None:
    """The run that recorded changes ``text`` names, with the end of its changes: the run whose
    id is ``text``, or the one whose id starts with it (8 hex characters or more, as the Dagster
    UI shows a run); None if no run that recorded changes is named.

    Raises:
        CommandError: ``text`` starts the ids of several runs; the message lists them.
    """
    prefix = text.lower()
    runs = store.query(
        'SELECT run_id, max("at") FROM chunk_changes WHERE run_id = ? OR (? AND starts_with(run_id, ?)) '
        "GROUP BY run_id ORDER BY run_id",
        [text, _RUN_PREFIX.fullmatch(prefix) is not None, prefix],
    )
    exact = [run for run in runs if run[0] == text]
    if exact or len(runs) == 1:
        run_id, end = (exact or runs)[0]
        return run_id, end
    if runs:
        raise CommandError(
            f"{flag} {text}: ambiguous, it starts the ids of {len(runs)} runs that recorded changes "
            f"({', '.join(r for r, _ in runs)}); pass more of the run id"
        )
    return None


def _since(store: IngestStore, text: str) -> datetime:
    """The moment ``--since`` names: the end of a run's recorded changes (the run's id or a
    unique prefix of it), or a time.

    A run comes first: 8 hex digits can also read as a date (``20240115``), and a run whose id
    starts with a date the user meant is all but impossible.
    """
    named = _recorded_run(store, "--since", text)
    if named is not None:
        return named[1]
    moment = parse_since_time(text)
    if moment is None:
        raise CommandError(
            f"--since {text}: neither a time (YYYY-MM-DD[THH:MM[:SS]], UTC) nor a run that recorded "
            "changes (its id, or 8 or more of its first characters); `ingest changes` lists the runs "
            "(a run that changed nothing records none)"
        )
    return moment


def read_changes(store: IngestStore, args: argparse.Namespace) -> list[ChunkChange]:
    """The changes ``ingest changes`` selects with ``args`` (``since``, ``run``, ``plan``); a
    run is named by its id or a unique prefix of it (8 hex characters or more).

    Raises:
        CommandError: ``--since`` names no time or run; a prefix starts several runs' ids.
    """
    since = _since(store, args.since) if args.since else None
    named = _recorded_run(store, "--run", args.run) if args.run else None
    if args.run and named is None and _RUN_PREFIX.fullmatch(args.run.lower()) is None:
        # Too short to name a run (a run that changed nothing records none, so a full id or a
        # long prefix that matches nothing may still be a real run: that selects nothing).
        raise CommandError(
            f"--run {args.run}: a run is named by its id or 8 or more of its first characters; "
            "`ingest changes` lists the runs that recorded changes"
        )
    run_ids = [named[0] if named else args.run] if args.run else None  # no changes recorded: none
    plan_keys = plan_history(store, args.plan) if args.plan else None
    with store.connect() as con:
        return changes_since(con, since=since, run_ids=run_ids, plan_keys=plan_keys)


def _plan_names(store: IngestStore) -> dict[str, str]:
    """Each stored plan key's plan name: a reader follows a plan by its name, whose switch to a
    new key is recorded under that key."""
    return dict(store.query("SELECT plan_key, name FROM plans"))


def _document_names(store: IngestStore, changes: list[ChunkChange]) -> dict[str, str]:
    ids = sorted({c.document_id for c in changes})
    rows = store.query(
        "SELECT DISTINCT document_id::VARCHAR, source_uri FROM documents "
        "WHERE document_id IN (SELECT unnest(?::JSON::UUID[]))",
        [json_list(ids)],
    )
    return {doc: file_name(uri) for doc, uri in rows}


# added, removed, changed (a kept id whose row moved: a new parent, index or heading path)
_SIGN = {"added": "+", "removed": "-", "changed": "~"}


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
            f"+{count['added']} -{count['removed']} ~{count['changed']} chunks "
            f"in {documents} document{plural}"
        )
        by_document: dict[str, Counter] = defaultdict(Counter)
        for c in rows:
            by_document[c.document_id][(c.change, c.level)] += 1
        for doc, counted in sorted(by_document.items(), key=lambda item: names.get(item[0], item[0])):
            parts = [
                f"{_SIGN[change]}{n} {level_name[level]}"
                for (change, level), n in sorted(counted.items(), key=lambda item: (-item[0][1], item[0][0]))
            ]
            print(f"  {names.get(doc, doc)}: {', '.join(parts)}")
            ordered = sorted(rows, key=lambda c: (-c.level, c.change != "removed", c.chunk_id))
            for c in ordered if chunks else ():
                if c.document_id == doc:
                    print(f"    {c.change:<7} {level_name[c.level]:<6} {c.chunk_id}")
