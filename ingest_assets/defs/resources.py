"""The store as a Dagster resource: one :class:`~ingest_assets.store.IngestStore` per run.

dagster-duckdb's ``DuckDBResource`` is not used: its ``get_connection`` does not close the
connection when the body raises, and a connection left open keeps the file locked for every
other process. The store does the lock retry with backoff and always closes.
"""

from __future__ import annotations

from dagster import ConfigurableResource, InitResourceContext
from pydantic import Field, PrivateAttr

from ingest_assets.engine import IngestEngine
from ingest_assets.plans import Plan, cached_plans
from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore

__all__ = ["DuckDBStore"]

_DEFAULTS = {name: field.default for name, field in Settings.model_fields.items()}
# The settings a resource carries (each a field of both): what a run launched by the daemon
# needs to see as ``ingest run`` or the code location was told.
_SHARED = ("database", "inbox", "plans_file", "max_bytes", "max_pages", "max_rows", "lock_timeout_seconds")


class DuckDBStore(ConfigurableResource):
    """Where the pipeline reads its inbox and plans and keeps every result.

    Build with :meth:`from_settings` (defaults: ``ingest_assets.settings``). Each run (each
    step process) gets one store object, made in :meth:`setup_for_execution` and dropped with
    the run: what it remembers is content-addressed (see ``ingest_assets.store.recent``).
    """

    database: str = Field(default=_DEFAULTS["database"], description="DuckDB file holding the store.")
    inbox: str = Field(default=_DEFAULTS["inbox"], description="Folder scanned (recursively) for sources.")
    plans_file: str = Field(
        default=_DEFAULTS["plans_file"], description="YAML plans file (see ingest_assets.plans)."
    )
    max_bytes: int = Field(default=_DEFAULTS["max_bytes"], gt=0, description="Largest file parsed, in bytes.")
    max_pages: int = Field(default=_DEFAULTS["max_pages"], gt=0, description="Most pages of a PDF.")
    max_rows: int = Field(default=_DEFAULTS["max_rows"], gt=0, description="Most CSV rows or chat turns.")
    lock_timeout_seconds: float = Field(
        default=_DEFAULTS["lock_timeout_seconds"],
        gt=0,
        description="How long to retry while another process holds the DuckDB file.",
    )
    _store: IngestStore | None = PrivateAttr(default=None)

    @classmethod
    def from_settings(cls, settings: Settings) -> DuckDBStore:
        """The resource over ``settings``' store, inbox, plans file, limits and lock timeout."""
        return cls(**{name: getattr(settings, name) for name in _SHARED})

    def setup_for_execution(self, context: InitResourceContext) -> None:
        # The run's writes are recorded (chunk_changes, step_timings) under Dagster's run id.
        self._store = IngestStore(
            self.database,
            lock_timeout=self.lock_timeout_seconds,
            settings=self.settings(),
            run_id=context.run.run_id if context.run else None,
        )

    def store(self) -> IngestStore:
        """The run's store (a new one outside a run, e.g. in a sensor evaluated without setup)."""
        if self._store is None:
            self._store = IngestStore(
                self.database, lock_timeout=self.lock_timeout_seconds, settings=self.settings()
            )
        return self._store

    def plans(self) -> list[Plan]:
        """Return the validated plans of ``plans_file``."""
        return cached_plans(self.plans_file)

    def settings(self) -> Settings:
        """The settings this resource was made from, and the environment's for the rest: a run
        process (launched by ``ingest run``, the UI or the daemon) reads them here, once per call,
        and passes them down."""
        return Settings.from_env(**{name: getattr(self, name) for name in _SHARED})

    def engine(self) -> IngestEngine:
        """Return an engine over the run's store, the inbox, the current plans and the limits."""
        return IngestEngine(self.store(), self.inbox, self.plans(), self.settings())
