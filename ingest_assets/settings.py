"""Every setting of the pipeline in one place: the ``INGEST_*`` environment variables and defaults.

No Dagster here. :class:`Settings` is a pydantic-settings model and the only reader of the
environment. The entry points (the ``ingest`` command, the code location, a run's resource)
read it once with :meth:`Settings.from_env` and pass it down to the store, engine, steps and
workers, so a default is written once and a bad value fails at start with a message naming its
variable.

==========================  ==========================  =========================================
variable                    field                       meaning (default)
==========================  ==========================  =========================================
``INGEST_DUCKDB``           ``database``                the store file (``data/ingest.duckdb``)
``INGEST_STORE``            ``database``                the store, over ``INGEST_DUCKDB``: a file,
                                                        or ``ducklake:postgres:<conninfo>``
``INGEST_LAKE_DATA``        ``lake_data``               the lake's Parquet folder (none)
``INGEST_INBOX``            ``inbox``                   folder of sources (``data/sample``)
``INGEST_PLANS``            ``plans_file``              plans YAML (``plans.yaml``)
``INGEST_MAX_BYTES``        ``max_bytes``               largest file parsed (16 MiB)
``INGEST_MAX_PAGES``        ``max_pages``               most PDF pages (2000)
``INGEST_MAX_ROWS``         ``max_rows``                most CSV rows or chat turns (1,000,000)
``INGEST_WORKERS``          ``workers``                 worker processes (CPUs, at most 4)
``INGEST_EXECUTOR``         ``executor``                where jobs run: ``process`` (a local
                                                        pool, the default) or ``ray``
``INGEST_RAY_ADDRESS``      ``ray_address``             the Ray cluster (``host:port``) for
                                                        ``ray``; none: join or start a local one
``INGEST_DUCKDB_MEMORY``    ``duckdb_memory``           DuckDB buffer pool cap (``160MB``)
``INGEST_DUCKDB_THREADS``   ``duckdb_threads``          DuckDB threads per process (1)
``INGEST_SENSOR_SECONDS``   ``sensor_seconds``          automation sensor interval (30)
``INGEST_BACKFILL_SHARDS``  ``backfill_shards``         shards per backfill run (none: one run
                                                        per stretch of shards)
``INGEST_DEBUG``            ``debug``                   tracebacks from ``ingest`` (off)
==========================  ==========================  =========================================

``INGEST_LOCK_TIMEOUT_SECONDS`` (``lock_timeout_seconds``): how long to keep retrying while another
process holds the store file (120).
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import AliasChoices, Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from chunking.parsers import ParseLimits

__all__ = ["DEFAULT_STORE", "ENVIRONMENT", "LIMIT_FLAGS", "Settings"]

# The store's variables: INGEST_STORE names the store like INGEST_DUCKDB and wins over it (the
# lake is not a DuckDB file).
STORE_VARIABLE = "INGEST_STORE"
DUCKDB_VARIABLE = "INGEST_DUCKDB"
# The project's store file (relative to the working directory), when none is named.
DEFAULT_STORE = "data/ingest.duckdb"
# field -> environment variable
ENVIRONMENT: dict[str, str] = {
    "database": DUCKDB_VARIABLE,
    "inbox": "INGEST_INBOX",
    "plans_file": "INGEST_PLANS",
    "max_bytes": "INGEST_MAX_BYTES",
    "max_pages": "INGEST_MAX_PAGES",
    "max_rows": "INGEST_MAX_ROWS",
    "workers": "INGEST_WORKERS",
    "duckdb_memory": "INGEST_DUCKDB_MEMORY",
    "duckdb_threads": "INGEST_DUCKDB_THREADS",
    "sensor_seconds": "INGEST_SENSOR_SECONDS",
    "backfill_shards": "INGEST_BACKFILL_SHARDS",
    "debug": "INGEST_DEBUG",
    "lake_data": "INGEST_LAKE_DATA",
    "executor": "INGEST_EXECUTOR",
    "ray_address": "INGEST_RAY_ADDRESS",
    "lock_timeout_seconds": "INGEST_LOCK_TIMEOUT_SECONDS",
}
# The parse limits and the `ingest run` flag that sets each.
LIMIT_FLAGS: dict[str, str] = {
    "max_bytes": "--max-bytes",
    "max_pages": "--max-pages",
    "max_rows": "--max-rows",
}
MAX_DEFAULT_WORKERS = 4
# Where run_batches sends jobs (ingest_assets.engine.workers): the local process pool or Ray.
EXECUTORS = ("process", "ray")
_WHOLE_NUMBERS = (
    "max_bytes", "max_pages", "max_rows", "workers", "duckdb_threads", "sensor_seconds", "backfill_shards",
)  # fmt: skip


def _ray_address_problem(address: str) -> str | None:
    """Why ``address`` cannot be a Ray cluster address for the engine, or None if it can.

    The engine accepts ``host:port`` (the address ``ray start --head`` prints, of a cluster this
    machine is a node of) and ``auto`` (the cluster started on this machine by ``ray start``).
    """
    if address == "auto":
        return None
    if "://" in address:
        return (
            "is a Ray Client address; the engine joins a cluster as one of its nodes: run it on a "
            "machine of the cluster (`ray start --address=<head>:<port>`) and give the head's host:port"
        )
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        return "is not host:port (the address `ray start --head` prints) or 'auto'"
    return None


def _variable(field: str) -> str:
    return ENVIRONMENT.get(field, f"INGEST_{field.upper()}")


class Settings(BaseSettings):
    """The pipeline's settings (see the module docstring for variables and defaults).

    A pydantic-settings model: ``Settings(**values)`` takes the values given, then the
    ``INGEST_*`` environment, then the defaults. Entry points (the CLI, the code location) build
    one with :meth:`from_env` and pass it down; the store, engine and workers never read the
    environment themselves.

    The byte limit is lower than the library's default: a document's chunking time and memory
    grow with its size, so the pipeline refuses bigger files with a failure that names the
    limit, unless the limit is raised.
    """

    model_config = SettingsConfigDict(
        env_prefix="INGEST_", env_ignore_empty=True, frozen=True, extra="forbid", populate_by_name=True
    )

    database: str = Field(
        default=DEFAULT_STORE,
        validation_alias=AliasChoices("database", STORE_VARIABLE, DUCKDB_VARIABLE),
    )
    inbox: str = "data/sample"
    plans_file: str = Field(default="plans.yaml", validation_alias=AliasChoices("plans_file", "INGEST_PLANS"))
    max_bytes: int = Field(default=16 * 1024 * 1024, gt=0)
    max_pages: int = Field(default=2000, gt=0)
    max_rows: int = Field(default=1_000_000, gt=0)
    workers: int | None = Field(default=None, ge=0)
    duckdb_memory: str = "160MB"
    duckdb_threads: int = Field(default=1, gt=0)
    sensor_seconds: int = Field(default=30, gt=0)
    # A backfill runs a stretch of shards in one run; machines that each take a run
    # (docs/scale-out.md) want a run per shard or a few.
    backfill_shards: int | None = Field(default=None, gt=0)
    lock_timeout_seconds: float = Field(default=120.0, gt=0)
    debug: bool = False
    # A DuckLake store (docs/scale-out.md) writes its Parquet files here; every writer of the
    # lake must see the same folder.
    lake_data: str | None = None
    # Where the engine's CPU work runs (docs/scale-out.md, "Ray"): the process pool or Ray.
    executor: Literal["process", "ray"] = "process"
    ray_address: str | None = None

    @field_validator(*_WHOLE_NUMBERS, mode="before")
    @classmethod
    def _whole_number(cls, value: Any) -> Any:
        # `1_000` reads as a thousand, as in Python.
        return value.strip().replace("_", "") if isinstance(value, str) else value

    @field_validator("executor", mode="before")
    @classmethod
    def _executor(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("ray_address")
    @classmethod
    def _ray_address(cls, value: str | None) -> str | None:
        problem = None if value is None else _ray_address_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _ray_address_used(self) -> Settings:
        if self.ray_address is not None and self.executor != "ray":
            raise ValueError(
                f"INGEST_RAY_ADDRESS={self.ray_address!r} is set but INGEST_EXECUTOR is not 'ray', so no job "
                "would go to that cluster: set INGEST_EXECUTOR=ray, or unset INGEST_RAY_ADDRESS"
            )
        return self

    @classmethod
    def from_env(cls, **overrides: Any) -> Settings:
        """Settings from ``overrides`` (None values ignored), else the environment, else defaults.

        Raises:
            ValueError: A value is refused; the message names its variable, the value and why.
        """
        try:
            return cls(**{k: v for k, v in overrides.items() if v is not None})
        except ValidationError as error:
            raise ValueError(
                "invalid setting: " + "; ".join(_problem(item) for item in error.errors())
            ) from None

    def updated(self, **values: Any) -> Settings:
        """A copy with ``values`` (None values ignored), validated like the rest.

        Raises:
            ValueError: A value is refused; the message names its variable, the value and why.
        """
        given = {k: v for k, v in values.items() if v is not None}
        return self if not given else type(self).from_env(**{**self.model_dump(), **given})

    @property
    def limits(self) -> ParseLimits:
        """The per-document parse limits."""
        return ParseLimits(max_bytes=self.max_bytes, max_pages=self.max_pages, max_rows=self.max_rows)

    def duckdb_config(self) -> dict[str, str]:
        """DuckDB settings of a store connection.

        The buffer pool is capped because DuckDB's default (80% of RAM) keeps every page a step
        read or wrote until its connection closes, so memory grew with the corpus; one thread
        because the store's statements are small and parsing and chunking run in worker
        processes (see docs/benchmarks.md for the measurements).
        """
        return {"memory_limit": self.duckdb_memory, "threads": str(self.duckdb_threads)}

    @property
    def is_lake(self) -> bool:
        """Whether the store is a DuckLake store (``ducklake:...``) rather than a DuckDB file."""
        return self.database.startswith("ducklake:")

    def worker_count(self) -> int:
        """Worker processes to use: ``workers``, else the usable CPUs (at most 4); 0 means 1."""
        if self.workers is not None:
            return max(1, self.workers)
        try:
            usable = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            usable = os.cpu_count() or 1
        return max(1, min(usable, MAX_DEFAULT_WORKERS))


def _problem(item: Any) -> str:
    """One validation error as ``VARIABLE='value': why`` (an error of no one field as it is)."""
    if not item["loc"]:
        return item["msg"].removeprefix("Value error, ")
    field = str(item["loc"][0])
    name = field if field.startswith("INGEST_") else _variable(field)
    why = item["msg"].removeprefix("Value error, ")
    if field.removeprefix("INGEST_").lower() in _WHOLE_NUMBERS or field in _WHOLE_NUMBERS:
        why = (
            "is not a whole number of processes"
            if name.endswith("WORKERS")
            else "is not a positive whole number"
        )
    if name.endswith("EXECUTOR"):
        why = (
            "is not an executor: use 'process' (the local worker pool, the default) or 'ray' (a Ray "
            "cluster, with the `ray` extra installed)"
        )
    return f"{name}={item.get('input')!r} {why}" if "input" in item else f"{name}: {why}"
