"""One in-memory DuckDB database per process, which store files are attached to while in use.

Creating a DuckDB database is costly on its own (it builds its catalog of built-in functions,
and frees and trims it all again on close), and it would be paid again by every step and every
short read; attaching a file to a database that already exists is several times cheaper
(docs/benchmarks.md has the figures). So each process keeps one in-memory "host" database, and a
store file is attached to it while some connection of this process uses it and detached (which
checkpoints it and releases DuckDB's file lock) when the last one is done: between steps other
processes get the file exactly as when each step opened and closed it.

Connections handed out are cursors of the host with the file as their default database, so SQL
names the store's tables as before. The host spills to ``<file>.tmp`` beside the file in use, as
the file's own database would, and takes DuckDB settings (the memory cap) from each attach.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
from pathlib import Path

import duckdb

from ingest_assets.store import lake

__all__ = ["attach", "detach"]

_lock = threading.Lock()
_host: duckdb.DuckDBPyConnection | None = None
_host_pid: int | None = None
_settings: dict[str, str] = {}  # DuckDB settings applied to the host
# Absolute file path (or lake location) -> (alias in the host, connections of this process
# using it); an idle lake stays with 0 (see detach).
_attached: dict[str, tuple[str, int]] = {}
# Idle lakes kept attached per process (dicts keep insertion order: the oldest go first).
_IDLE_LAKES = 2
# Nothing is ever fetched from the network: the lake's extensions come from their wheels.
_OFFLINE = {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
# Nothing is drawn on stdout, where a command prints its JSON: DuckDB draws a progress bar there
# for a statement running longer than a moment (an ATTACH of a lake waiting on its catalog, a
# long query). It is a setting of each connection, the host's and every cursor's.
_NO_PROGRESS_BAR = "SET enable_progress_bar = false"


def _database(config: dict[str, str]) -> duckdb.DuckDBPyConnection:
    """The host database of this process (a child made by fork builds its own). Call with _lock."""
    global _host, _host_pid
    if _host is None or _host_pid != os.getpid():
        _host, _host_pid = duckdb.connect(":memory:", config={**config, **_OFFLINE}), os.getpid()
        _host.execute(_NO_PROGRESS_BAR)
        _attached.clear()
        _settings.clear()
        _settings.update(config)
    return _host


def _apply(host: duckdb.DuckDBPyConnection, settings: dict[str, str]) -> None:
    """Set the DuckDB settings that differ from the host's. Call with _lock.

    DuckDB keeps the temp directory it has spilled to once: the host then goes on spilling
    there (beside the first file it spilled for) instead of failing the open.
    """
    for name, value in settings.items():
        if _settings.get(name) != value:
            quoted = value.replace("'", "''")
            try:
                host.execute(f"SET {name} = '{quoted}'")
            except duckdb.NotImplementedException:
                if name != "temp_directory":
                    raise
            _settings[name] = value


def _key(path: Path | str) -> str:
    return str(path) if lake.is_lake(path) else os.path.abspath(path)


def _attach_file(host: duckdb.DuckDBPyConnection, key: str, alias: str) -> None:
    """Attach the file ``key`` as ``alias``: for writing, or read-only when this user may read
    it but not write it (so the commands that only read work on a store they may not change;
    a write then fails with DuckDB's read-only error, which the store names)."""
    quoted = key.replace("'", "''")
    try:
        host.execute(f"ATTACH '{quoted}' AS {alias}")
    except duckdb.IOException as error:
        if (
            "permission denied" not in str(error).lower()
            or not os.access(key, os.R_OK)
            or os.access(key, os.W_OK)
        ):
            raise
        host.execute(f"ATTACH '{quoted}' AS {alias} (READ_ONLY)")


def attach(
    path: Path | str, config: dict[str, str], data_path: str | None = None
) -> duckdb.DuckDBPyConnection:
    """Return a new connection whose default database is the DuckDB file at ``path``, or the
    DuckLake store it names (``ducklake:...``, Parquet files under ``data_path``).

    The store is attached (created if missing) unless this process has it attached already.
    ``config`` holds DuckDB settings (names and values) for the host.

    Raises:
        duckdb.Error: The file cannot be attached (locked by another process, not a DuckDB
            file, not writable).
    """
    key = _key(path)
    is_lake = lake.is_lake(key)
    with _lock:
        host = _database(config)
        if not any(users for _, users in _attached.values()):
            # No store in use: spill beside this one, as its own database would.
            spill = os.path.join(tempfile.gettempdir(), "ingest-lake.tmp") if is_lake else key + ".tmp"
            _apply(host, {**config, "temp_directory": spill})
        # An idle lake is still attached (see detach); popped so it goes last in the order.
        entry = _attached.pop(key, None)
        alias, users = entry or (
            "store_" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16],
            0,
        )
        if entry is None:
            if is_lake:
                lake.load_extensions(host)
                host.execute(lake.attach_statement(key, alias, data_path))
            else:
                _attach_file(host, key, alias)
        cursor = host.cursor()
        _attached[key] = (alias, users + 1)
    try:
        cursor.execute(f"USE {alias}; {_NO_PROGRESS_BAR}")
    except BaseException:
        detach(path, cursor)
        raise
    return cursor


def _detach_idle_lakes(keep: str) -> None:
    """Detach idle lakes but the newest :data:`_IDLE_LAKES` (a process that opens many lakes, a
    test run, holds no catalog connections for all of them). Call with _lock."""
    idle = [k for k, (_, users) in _attached.items() if lake.is_lake(k) and not users and k != keep]
    for key in idle[: max(0, len(idle) - (_IDLE_LAKES - 1))]:
        alias, _ = _attached.pop(key)
        if _host is not None and _host_pid == os.getpid():
            with contextlib.suppress(duckdb.Error):  # a lake whose server went away: nothing held
                _host.execute(f"DETACH {alias}")


def detach(path: Path | str, connection: duckdb.DuckDBPyConnection) -> None:
    """Close a connection from :func:`attach`; the last one of a file detaches the file (a lake
    stays attached while idle, up to :data:`_IDLE_LAKES` of them).

    Detaching checkpoints the file and releases its lock. If that fails, the host database is
    dropped with everything attached to it (DuckDB closes the files) and the error is raised.
    """
    global _host
    key = _key(path)
    connection.close()
    with _lock:
        alias, users = _attached.get(key, ("", 0))
        if users > 1:
            _attached[key] = (alias, users - 1)
            return
        if lake.is_lake(key) and users:
            # A lake takes no file lock: it stays attached while idle (attaching one costs a
            # catalog round trip and a load of its metadata, which every short read would pay
            # otherwise). Each transaction still reads the catalog's newest snapshot.
            _attached[key] = (alias, 0)
            _detach_idle_lakes(keep=key)
            return
        _attached.pop(key, None)
        if not users or _host is None or _host_pid != os.getpid():
            return
        try:
            _host.execute(f"DETACH {alias}")
        except BaseException:
            host, _host = _host, None
            _attached.clear()
            host.close()
            raise
