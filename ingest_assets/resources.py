"""The DuckDB store as a Dagster resource.

dagster-duckdb's ``DuckDBResource`` is not used for the writes: its ``get_connection`` does
not close the connection when the body raises, and a connection left open keeps the file
locked for every other process. :class:`~ingest_assets.store.IngestStore` does the same
lock retry with backoff and always closes.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from ingest_assets.engine import IngestEngine
from ingest_assets.plans import Plan, load_plans
from ingest_assets.store import IngestStore

__all__ = ["DEFAULT_DATABASE", "DEFAULT_INBOX", "DuckDBStore", "cached_plans"]

DEFAULT_DATABASE = "data/ingest.duckdb"
DEFAULT_INBOX = "data/sample"


@lru_cache(maxsize=8)
def _plans_at(path: str, mtime_ns: int) -> tuple[Plan, ...]:
    return tuple(load_plans(path))


def cached_plans(path: str | Path) -> list[Plan]:
    """Load a plans file once per process and content change (building chunkers loads tokenizers).

    Raises:
        PlanError: The file is missing or invalid.
    """
    path = Path(path)
    mtime = path.stat().st_mtime_ns if path.exists() else -1
    return list(_plans_at(str(path), mtime))


class DuckDBStore(ConfigurableResource):
    """Where the pipeline reads its inbox and plans and keeps every result.

    Build with :meth:`from_env` for the defaults (``$INGEST_DUCKDB``, ``$INGEST_INBOX``,
    ``$INGEST_PLANS``).
    """

    database: str = Field(default=DEFAULT_DATABASE, description="DuckDB file holding the store.")
    inbox: str = Field(default=DEFAULT_INBOX, description="Folder scanned (recursively) for sources.")
    plans_file: str = Field(default="plans.yaml", description="YAML plans file (see ingest_assets.plans).")
    lock_timeout_seconds: float = Field(
        default=120.0, gt=0, description="How long to retry while another process holds the DuckDB file."
    )

    @classmethod
    def from_env(
        cls, database: str | None = None, inbox: str | None = None, plans_file: str | None = None
    ) -> DuckDBStore:
        """Return a resource from the arguments, else the environment, else the defaults."""
        return cls(
            database=database or os.environ.get("INGEST_DUCKDB") or DEFAULT_DATABASE,
            inbox=inbox or os.environ.get("INGEST_INBOX") or DEFAULT_INBOX,
            plans_file=plans_file or os.environ.get("INGEST_PLANS") or "plans.yaml",
        )

    def store(self) -> IngestStore:
        """Return the store over ``database``."""
        return IngestStore(self.database, lock_timeout=self.lock_timeout_seconds)

    def plans(self) -> list[Plan]:
        """Return the validated plans of ``plans_file``."""
        return cached_plans(self.plans_file)

    def engine(self) -> IngestEngine:
        """Return an engine over the store, the inbox and the current plans."""
        return IngestEngine(self.store(), self.inbox, self.plans())
