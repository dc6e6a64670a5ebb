"""The DuckLake backend: a store whose catalog is in Postgres and whose data is Parquet files.

No Dagster here. A store location ``ducklake:postgres:<libpq conninfo>`` (``INGEST_STORE``) is
attached with DuckDB's ``ducklake`` extension, its Parquet files under ``INGEST_LAKE_DATA``;
several processes (on several machines, given a shared data path) write it at once. Everything
else (tables, views, SQL) is the DuckDB file's: the lake schema is ``schema.sql`` without its
PRIMARY KEY / UNIQUE constraints, which DuckLake does not have (the store never relies on them).

The extensions come from the ``duckdb-extension-ducklake`` / ``duckdb-extension-postgres``
wheels (the ``lake`` extra), installed from the wheel's file, then loaded by name: DuckDB never
downloads one (``autoinstall_known_extensions`` and ``autoload_known_extensions`` are off).
"""

from __future__ import annotations

import datetime
import importlib
import re
from pathlib import Path

import duckdb

from ingest_assets.store.errors import StoreError

__all__ = [
    "LAKE_PREFIX",
    "attach_statement",
    "is_conflict",
    "is_lake",
    "lake_sql",
    "load_extensions",
    "maintain",
]

LAKE_PREFIX = "ducklake:"
# Extension name (as LOADed) -> the wheel's module that ships its binary.
_EXTENSIONS = {"ducklake": "duckdb_extension_ducklake", "postgres": "duckdb_extension_postgres"}


def is_lake(location: str | Path) -> bool:
    """Whether ``location`` names a DuckLake store rather than a DuckDB file."""
    return str(location).startswith(LAKE_PREFIX)


def lake_sql(sql: str) -> str:
    """``sql`` (schema.sql or a migration) without PRIMARY KEY and UNIQUE constraints.

    Column constraints (``uri VARCHAR PRIMARY KEY``) and table constraints
    (``, PRIMARY KEY (a, b)``) both go; everything else is kept as written, so a table added to
    schema.sql is in the lake schema too.
    """
    sql = re.sub(r",\s*(?:PRIMARY\s+KEY|UNIQUE)\s*\([^)]*\)", "", sql, flags=re.IGNORECASE)
    return re.sub(r"\s+(?:PRIMARY\s+KEY|UNIQUE)\b(?!\s*\()", "", sql, flags=re.IGNORECASE)


def is_conflict(error: BaseException) -> bool:
    """Whether ``error`` is DuckLake refusing a commit that raced another writer's."""
    return isinstance(error, duckdb.Error) and "transaction conflict" in str(error).lower()


def load_extensions(con: duckdb.DuckDBPyConnection) -> None:
    """Load ``ducklake`` and ``postgres`` into ``con``'s database, installing them from the wheels
    the first time (INSTALL copies the file into DuckDB's extension folder).

    Raises:
        StoreError: A wheel is missing; the message says to install the ``lake`` extra.
    """
    for name, module_name in _EXTENSIONS.items():
        try:
            con.execute(f"LOAD {name}")
            continue
        except duckdb.Error:
            pass  # not installed yet
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            raise StoreError(
                f"the DuckLake store needs the {module_name.replace('_', '-')} wheel: "
                "pip install 'fingerprint-ingest[lake]', or unset INGEST_STORE for the DuckDB file"
            ) from None
        binary = next(Path(module.__file__).parent.glob(f"extensions/*/{name}.duckdb_extension"))
        con.execute("INSTALL '" + str(binary).replace("'", "''") + "'")
        con.execute(f"LOAD {name}")


def attach_statement(location: str, alias: str, data_path: str | None) -> str:
    """The ATTACH of the lake at ``location`` as ``alias``; DATA_PATH is needed when the lake is
    created (DuckLake keeps it in the catalog after that)."""
    quoted = location.replace("'", "''")
    if not data_path:
        return f"ATTACH '{quoted}' AS {alias}"
    folder = str(Path(data_path).resolve()).replace("'", "''")
    return f"ATTACH '{quoted}' AS {alias} (DATA_PATH '{folder}/')"


def maintain(con: duckdb.DuckDBPyConnection, keep_hours: float) -> dict[str, int]:
    """Compact the lake ``con`` uses and drop what readers can no longer need.

    Every commit writes Parquet files of its own, so a lake written by many small steps reads
    ever more files: adjacent ones are merged. Snapshots older than ``keep_hours`` are expired
    (time travel to them ends), then the files no snapshot references any more are deleted
    (those older than ``keep_hours``, so a reader still on a recent snapshot keeps its files).

    Returns:
        Counts: files merged and created, snapshots expired, files deleted.
    """
    alias = con.execute("SELECT current_database()").fetchone()[0]
    older = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=keep_hours)
    merged = con.execute("CALL ducklake_merge_adjacent_files(?)", [alias]).fetchall()
    expired = con.execute(
        "CALL ducklake_expire_snapshots(?, older_than => ?::TIMESTAMPTZ)", [alias, older]
    ).fetchall()
    # Files the expiry just released are dated now: measure their age from after it.
    older = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=keep_hours)
    removed = con.execute(
        "CALL ducklake_cleanup_old_files(?, older_than => ?::TIMESTAMPTZ)", [alias, older]
    ).fetchall()
    return {
        "files_merged": sum(row[2] for row in merged),
        "files_created": sum(row[3] for row in merged),
        "snapshots_expired": len(expired),
        "files_deleted": len(removed),
    }
