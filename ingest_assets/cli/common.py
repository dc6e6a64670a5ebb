"""What several commands share: the store a command reads, and bad input (no Dagster here)."""

from __future__ import annotations

from pathlib import Path

from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore
from ingest_assets.store.lake import is_lake

__all__ = ["CommandError", "open_store"]


class CommandError(ValueError):
    """Bad input to a command; the message names the option and what to do."""


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
