"""What several commands share: the store a command reads, the options naming the store, inbox
and plans file, the inbox entries a scan skipped, and bad input (no Dagster here)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore
from ingest_assets.store.lake import is_lake

if TYPE_CHECKING:
    from ingest_assets.engine.summary import Failure

__all__ = [
    "DB_HELP",
    "INBOX_HELP",
    "PLANS_HELP",
    "CommandError",
    "NoStore",
    "add_db_option",
    "add_source_options",
    "open_store",
    "warn_failed",
    "warn_failed_checks",
    "warn_shared_instance",
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


# A DuckDB file this small holds no table (a new file is 12 KiB; a store's schema alone, 500).
_EMPTY_DUCKDB_BYTES = 64 * 1024


class NoStore(CommandError):
    """There is no store at ``--db`` yet: no file, or a DuckDB file without a table."""


def open_store(database: str | None, settings: Settings) -> IngestStore:
    """The store at ``database`` (default: ``settings``'), which must exist already, under
    ``settings``. An empty DuckDB file is no store: the commands that read would write the
    schema into it.

    Raises:
        NoStore: There is no store file there, or the file is an empty DuckDB file.
    """
    location = database or settings.database
    if is_lake(location):
        return IngestStore(location, lock_timeout=settings.lock_timeout_seconds, settings=settings)
    path = Path(location)
    if not path.is_file():
        raise NoStore(
            f"--db {path}: no store file there; run `ingest run` first, or pass --db / set INGEST_DUCKDB"
        )
    if path.stat().st_size <= _EMPTY_DUCKDB_BYTES and _without_tables(path):
        raise NoStore(
            f"--db {path}: an empty DuckDB file, no store yet; run `ingest run` first (it makes the "
            "store there), or pass --db / set INGEST_DUCKDB"
        )
    return IngestStore(path, lock_timeout=settings.lock_timeout_seconds, settings=settings)


def _without_tables(path: Path) -> bool:
    """Whether ``path`` is a DuckDB file that holds no table (anything else is for the store
    to judge: a foreign file, a store of another schema)."""
    import duckdb

    try:
        with duckdb.connect(str(path), read_only=True) as con:
            (tables,) = con.execute("SELECT count(*) FROM duckdb_tables()").fetchone() or (0,)
    except duckdb.Error:
        return False
    return tables == 0


def _name_some(lines: Sequence[str], count: int, rest: str) -> None:
    """Print the first ``SKIPPED_SHOWN`` of ``lines`` on stderr, then ``rest`` (formatted with
    ``more`` and ``count``) when ``count`` is more than were printed."""
    from ingest_assets.engine.scan import SKIPPED_SHOWN  # only the commands that scan

    shown = lines[:SKIPPED_SHOWN]
    for line in shown:
        print(line, file=sys.stderr)
    if count > len(shown):
        print(rest.format(more=count - len(shown), count=count), file=sys.stderr)


def warn_skipped(command: str, skipped: Sequence[str], count: int | None = None) -> None:
    """Name on stderr, one a line, the inbox entries a scan skipped (``path: why``: links,
    pipes and other special files, names that are not UTF-8, folders that cannot be listed);
    past ``SKIPPED_SHOWN`` (:mod:`ingest_assets.engine.scan`) one line counts the rest, of
    ``count`` in all (default: as many as ``skipped`` names)."""
    _name_some(
        [f"ingest {command}: skipped {line}" for line in skipped],
        len(skipped) if count is None else count,
        f"ingest {command}: skipped {{more}} more inbox entries ({{count}} in all; none of them is read)",
    )


def warn_failed(command: str, failures: Sequence[Failure], count: int) -> None:
    """Name on stderr, one a line, the files the runs failed on (``uri: message``; the message
    says the fix); past ``SKIPPED_SHOWN`` one line counts the rest, which ``ingest_failures``
    lists."""
    _name_some(
        [f"ingest {command}: failed {failure.line()}" for failure in failures],
        count,
        f"ingest {command}: {{more}} more failed ({{count}} in all; "
        "query ingest_failures for each file and why)",
    )


def warn_still_failing(command: str, failures: Sequence[Failure], count: int) -> None:
    """Name on stderr, one a line, the files failing since earlier runs (their content has not
    changed, so no run tries them again: fix or remove the file); past the first few one line
    counts the rest, which ``ingest_failures`` lists."""
    _name_some(
        [f"ingest {command}: still failing {failure.line()}" for failure in failures],
        count,
        f"ingest {command}: {{more}} more still failing ({{count}} in all; "
        "query ingest_failures for each file and why)",
    )


def warn_failed_checks(command: str, failed: Sequence[str]) -> int:
    """Name on stderr, one a line, the error-severity checks the runs failed, and how to see
    every violation; returns the exit code (1 when a check failed: the work is stored, but a
    contract of the views does not hold)."""
    for line in failed:
        print(f"ingest {command}: check failed: {line}", file=sys.stderr)
    if failed:
        print(
            f"ingest {command}: {len(failed)} check(s) failed; the work is stored. "
            "`ingest verify` lists every violation; the Dagster UI shows each check's result",
            file=sys.stderr,
        )
    return 1 if failed else 0


def warn_shared_instance(command: str, home: str, others: Sequence[str]) -> None:
    """Say on stderr that the Dagster instance at ``home`` also holds runs of the stores
    ``others``: its UI shows their runs and materializations beside this store's, and its
    ``plans_sensor`` drops the plan keys of whichever store it does not read."""
    if not others:
        return
    print(
        f"ingest {command}: warning: the Dagster instance {home} also records runs of "
        f"{', '.join(others)}; its UI mixes the stores' runs, and its plans_sensor drops the other "
        "store's plan keys. Unset DAGSTER_HOME: each store then has an instance of its own "
        "(`ingest ui --db STORE` opens it)",
        file=sys.stderr,
    )
