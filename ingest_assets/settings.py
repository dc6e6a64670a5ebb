"""Every setting of the pipeline in one place: the ``INGEST_*`` environment variables and defaults.

No Dagster here. :meth:`Settings.from_env` is the only reader of the environment; every module
takes its values from a :class:`Settings` (given, or read at the call), so a default is written
once and a bad value fails with a message naming its variable.

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
``INGEST_DEBUG``            ``debug``                   tracebacks from ``ingest`` (off)
==========================  ==========================  =========================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chunking.parsers import ParseLimits

__all__ = ["ENVIRONMENT", "LIMIT_FLAGS", "Settings"]

# field -> environment variable
ENVIRONMENT: dict[str, str] = {
    "database": "INGEST_DUCKDB",
    "inbox": "INGEST_INBOX",
    "plans_file": "INGEST_PLANS",
    "max_bytes": "INGEST_MAX_BYTES",
    "max_pages": "INGEST_MAX_PAGES",
    "max_rows": "INGEST_MAX_ROWS",
    "workers": "INGEST_WORKERS",
    "duckdb_memory": "INGEST_DUCKDB_MEMORY",
    "duckdb_threads": "INGEST_DUCKDB_THREADS",
    "sensor_seconds": "INGEST_SENSOR_SECONDS",
    "debug": "INGEST_DEBUG",
    "lake_data": "INGEST_LAKE_DATA",
    "executor": "INGEST_EXECUTOR",
    "ray_address": "INGEST_RAY_ADDRESS",
}
# Names the store like INGEST_DUCKDB, and wins over it: the lake is not a DuckDB file.
STORE_VARIABLE = "INGEST_STORE"
# The parse limits and the `ingest run` flag that sets each.
LIMIT_FLAGS: dict[str, str] = {
    "max_bytes": "--max-bytes",
    "max_pages": "--max-pages",
    "max_rows": "--max-rows",
}
MAX_DEFAULT_WORKERS = 4
# Where run_batches sends jobs (ingest_assets.engine.workers): the local process pool or Ray.
EXECUTORS = ("process", "ray")
_WHOLE_NUMBERS = {"max_bytes", "max_pages", "max_rows", "workers", "duckdb_threads", "sensor_seconds"}


def _whole_number(variable: str, raw: str, *, positive: bool) -> int:
    """``raw`` as a whole number (``_`` allowed as a separator).

    Raises:
        ValueError: It is not one (or not positive, when ``positive``); the message names it.
    """
    what = "positive whole number" if positive else "whole number of processes"
    try:
        value = int(raw.strip().replace("_", ""))
    except ValueError:
        raise ValueError(f"{variable}={raw!r} is not a {what}") from None
    if positive and value <= 0:
        raise ValueError(f"{variable}={raw!r} is not a {what}")
    return value


def _executor(raw: str) -> str:
    """``raw`` as an executor name.

    Raises:
        ValueError: It is not one of :data:`EXECUTORS`; the message names the variable.
    """
    value = raw.strip().lower()
    if value not in EXECUTORS:
        raise ValueError(
            f"INGEST_EXECUTOR={raw!r} is not an executor: use 'process' (the local worker pool, the "
            "default) or 'ray' (a Ray cluster, with the `ray` extra installed)"
        )
    return value


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


class Settings(BaseModel):
    """The pipeline's settings (see the module docstring for variables and defaults).

    The byte limit is lower than the library's default: a document's chunking time and memory
    grow with its size, so the pipeline refuses bigger files with a failure that names the
    limit, unless the limit is raised.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    database: str = "data/ingest.duckdb"
    inbox: str = "data/sample"
    plans_file: str = "plans.yaml"
    max_bytes: int = Field(default=16 * 1024 * 1024, gt=0)
    max_pages: int = Field(default=2000, gt=0)
    max_rows: int = Field(default=1_000_000, gt=0)
    workers: int | None = Field(default=None, ge=0)
    duckdb_memory: str = "160MB"
    duckdb_threads: int = Field(default=1, gt=0)
    sensor_seconds: int = Field(default=30, gt=0)
    lock_timeout_seconds: float = Field(default=120.0, gt=0)
    debug: bool = False
    # A DuckLake store (docs/scale-out.md) writes its Parquet files here; every writer of the
    # lake must see the same folder.
    lake_data: str | None = None
    # Where the engine's CPU work runs (docs/scale-out.md, "Ray"): the process pool or Ray.
    executor: Literal["process", "ray"] = "process"
    ray_address: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from ``overrides`` (None values ignored), else the environment, else defaults.

        Raises:
            ValueError: A variable holds a value its field refuses; the message names it.
        """
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for name, variable in ENVIRONMENT.items():
            raw = environ.get(variable, "").strip()
            if not raw:
                continue
            if name == "debug":
                values[name] = raw.lower() not in ("0", "false", "no", "off")
            elif name == "executor":
                values[name] = _executor(raw)
            elif name in _WHOLE_NUMBERS:
                values[name] = _whole_number(variable, environ[variable], positive=name != "workers")
            else:
                values[name] = raw
        if environ.get(STORE_VARIABLE, "").strip():
            values["database"] = environ[STORE_VARIABLE].strip()
        values.update({k: v for k, v in overrides.items() if v is not None})
        _check_ray(values)
        try:
            return cls(**values)
        except ValidationError as error:
            problems = [f"{item['loc'][0]}={item.get('input')!r}: {item['msg']}" for item in error.errors()]
            raise ValueError("invalid setting: " + "; ".join(problems)) from None

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


def _check_ray(values: Mapping[str, Any]) -> None:
    """Refuse a Ray address that cannot be used, or one that would be ignored.

    Raises:
        ValueError: The message names ``INGEST_RAY_ADDRESS`` and the fix.
    """
    address = values.get("ray_address")
    if address is None:
        return
    if values.get("executor", "process") != "ray":
        raise ValueError(
            f"INGEST_RAY_ADDRESS={address!r} is set but INGEST_EXECUTOR is not 'ray', so no job would "
            "go to that cluster: set INGEST_EXECUTOR=ray, or unset INGEST_RAY_ADDRESS"
        )
    problem = _ray_address_problem(address)
    if problem is not None:
        raise ValueError(f"INGEST_RAY_ADDRESS={address!r} {problem}")
