"""Opening a store file: lock retry with backoff, the schema check, sessions and transactions.

No Dagster here. DuckDB allows one writing process per file, so a connection is held only as
long as one step (a :meth:`Connections.session`) or one call needs it; a file locked by another
process is retried with backoff up to a deadline, then refused with a message that says so.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ingest_assets.store import host
from ingest_assets.store.errors import StoreError
from ingest_assets.store.schema import ensure_schema

__all__ = ["Connections"]


def _open_error(path: Path, error: Exception) -> str:
    """A message for a store file that cannot be opened or written, other than a lock."""
    text = str(error)
    lower = text.lower()
    if any(w in lower for w in ("permission denied", "not permitted", "read-only", "read only")):
        return (
            f"{path}: the store cannot be written ({text.strip()}); make the file and its folder "
            "writable by this user, or pass another --db / INGEST_DUCKDB"
        )
    if "not a valid duckdb" in lower or "database file" in lower or "serializ" in lower:
        return (
            f"{path}: is not a DuckDB database this DuckDB {duckdb.__version__} can read "
            f"({text.strip()}); pass another --db / INGEST_DUCKDB (nothing was written to it)"
        )
    return f"{path}: cannot open the store ({text.strip()}); check the path given to --db / INGEST_DUCKDB"


def _is_lock_error(error: Exception) -> bool:
    text = str(error).lower()
    return "lock" in text or "conflicting" in text or "being used by another process" in text


class Connections:
    """Connections to one store file.

    Args:
        path: The database file; created (with its folder) on first use.
        lock_timeout: Seconds to keep retrying while another process holds the file.
        config: DuckDB settings of each connection (see ``Settings.duckdb_config``).
    """

    def __init__(self, path: Path, lock_timeout: float, config: dict[str, str]) -> None:
        self.path = path
        self.lock_timeout = lock_timeout
        self.config = config
        self._schema_checked = False
        # The connection of the open session, per thread: DuckDB connections are not shared
        # between threads.
        self._local = threading.local()

    @contextmanager
    def session(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Keep one connection open for the calls made inside this block (one step).

        Every :meth:`connect` / :meth:`transaction` inside the block uses it; nested sessions
        reuse the outer one. It holds DuckDB's file lock, so keep a session to one step: another
        process waiting on the lock gets in between steps. A session holds a connection, never
        data: every read inside it asks the file.

        Raises:
            StoreError: As :meth:`connect`.
        """
        current = getattr(self._local, "con", None)
        if current is not None:
            yield current
            return
        with self._open() as con:
            self._local.con = con
            try:
                yield con
            finally:
                self._local.con = None

    @contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Yield a writable connection with the schema in place, retrying a locked file.

        Inside :meth:`session` this is the session's connection (left open); otherwise a new
        one, closed on exit.

        Raises:
            StoreError: The file stayed locked past ``lock_timeout``, cannot be written, or has
                a schema this code cannot use.
        """
        current = getattr(self._local, "con", None)
        if current is not None:
            yield current
            return
        with self._open() as con:
            yield con

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Yield a connection inside one transaction: committed on success, rolled back on error."""
        with self.connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    @contextmanager
    def _open(self) -> Iterator[duckdb.DuckDBPyConnection]:
        if self.path.is_dir():
            raise StoreError(f"{self.path}: is a folder, not a DuckDB file; pass a file path to --db")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(
                f"{self.path}: cannot create the folder of the store ({error.strerror}); "
                "pass a writable path to --db or set INGEST_DUCKDB"
            ) from error
        con = self._attach()
        try:
            if not self._schema_checked:
                ensure_schema(con, self.path)
                self._schema_checked = True
            yield con
        finally:
            host.detach(self.path, con)

    def _attach(self) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.05
        while True:
            try:
                return host.attach(self.path, self.config)
            except duckdb.Error as error:
                if not _is_lock_error(error):
                    raise StoreError(_open_error(self.path, error)) from error
                if time.monotonic() > deadline:
                    raise StoreError(
                        f"{self.path}: cannot open the store ({error}); another process holds it "
                        f"longer than {self.lock_timeout:.0f} s: wait for it, or raise lock_timeout"
                    ) from error
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def check(self) -> None:
        """Open the store once (creating it, or migrating an older schema) so a bad file fails early.

        Raises:
            StoreError: The file cannot be opened for writing, is not an ingest store, or has a
                schema this code cannot use; the message says what to do.
        """
        with self.connect() as con:
            try:
                # A read-only file can be opened and read; the first write would fail mid-run.
                con.execute("CHECKPOINT")
            except duckdb.Error as error:
                raise StoreError(_open_error(self.path, error)) from error
