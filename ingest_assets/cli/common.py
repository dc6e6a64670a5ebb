"""What several commands share: the store a command reads, the options naming the store, inbox
and plans file, the inbox entries a scan skipped, and bad input (no Dagster here)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore
from ingest_assets.store.lake import is_lake

__all__ = [
    "DB_HELP",
    "INBOX_HELP",
    "PLANS_HELP",
    "CommandError",
    "add_db_option",
    "add_source_options",
    "open_store",
    "warn_skipped",
]

# Every command's --db: a DuckDB file or a DuckLake store (docs/scale-out.md), as INGEST_STORE.
DB_HELP = (
    "the store: a DuckDB file, or a DuckLake store as ducklake:postgres:<conninfo> (its Parquet "
    "folder in $INGEST_LAKE_DATA); default $INGEST_STORE, else $INGEST_DUCKDB, else data/ingest.duckdb"
)
INBOX_HELP = "folder of sources (default $INGEST_INBOX or data/sample)"
PLANS_HELP = "plans file (default $INGEST_PLANS or plans.yaml)"


class CommandError(ValueError):
    """Bad input to a command; the message names the option and what to do."""


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """``--db STORE``, the store a command reads or writes."""
    parser.add_argument("--db", metavar="STORE", help=DB_HELP)


def add_source_options(parser: argparse.ArgumentParser) -> None:
    """``--inbox``, ``--db`` and ``--plans``: what a command that runs the pipeline ingests,
    into which store, under which plans (``ingest run`` and ``ingest shards``)."""
    parser.add_argument("--inbox", metavar="DIR", help=INBOX_HELP)
    add_db_option(parser)
    parser.add_argument("--plans", metavar="FILE", help=PLANS_HELP)


def open_store(database: str | None, settings: Settings) -> IngestStore:
    """The store at ``database`` (default: ``settings``'), which must exist already, under
    ``settings``.

    Raises:
        CommandError: There is no store file there.
    """
    location = database or settings.database
    if is_lake(location):
        return IngestStore(location, lock_timeout=settings.lock_timeout_seconds, settings=settings)
    path = Path(location)
    if not path.is_file():
        raise CommandError(
            f"--db {path}: no store file there; run `ingest run` first, or pass --db / set INGEST_DUCKDB"
        )
    return IngestStore(path, lock_timeout=settings.lock_timeout_seconds, settings=settings)


def warn_skipped(command: str, skipped: Sequence[str]) -> None:
    """Name on stderr, one a line, the inbox entries a scan skipped (``path: why``: links,
    pipes and other special files, names that are not UTF-8, folders that cannot be listed);
    past ``SKIPPED_SHOWN`` (:mod:`ingest_assets.engine.scan`) one line counts the rest."""
    from ingest_assets.engine.scan import SKIPPED_SHOWN  # only the commands that scan

    for line in skipped[:SKIPPED_SHOWN]:
        print(f"ingest {command}: skipped {line}", file=sys.stderr)
    if len(skipped) > SKIPPED_SHOWN:
        print(
            f"ingest {command}: skipped {len(skipped) - SKIPPED_SHOWN} more inbox entries "
            f"({len(skipped)} in all; none of them is read)",
            file=sys.stderr,
        )
