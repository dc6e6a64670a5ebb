"""Opening a store: lock retry with backoff, the schema check, sessions, transactions, and
the retry of transactions that conflicted with another writer.

No Dagster here. DuckDB allows one writing process per file, so a connection is held only as
long as one step (a :meth:`Connections.session`) or one call needs it; a file locked by another
process is retried with backoff up to a deadline, then refused with a message that says so.
A DuckLake store (:mod:`~ingest_assets.store.lake`) takes many writers, but refuses a commit
that raced another's on the same table ("Transaction conflict"): :meth:`Connections.retrying`
runs such a transaction again, with bounded exponential backoff.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import tenacity

from ingest_assets.store import host, lake, lake_lock
from ingest_assets.store.errors import StoreError
from ingest_assets.store.schema import ensure_schema

_log = logging.getLogger(__name__)
# How long a wait for another process's lock goes unannounced (most waits are brief).
_SAY_WAITING_AFTER = 2.0

__all__ = ["CONFLICT_ATTEMPTS", "Connections", "retried"]

T = TypeVar("T")
# A conflicting transaction runs at most this many times, waiting a random time up to 20 ms,
# 40 ms, ... (at most 2 s; random so the racers part) in between.
CONFLICT_ATTEMPTS = 15
_FIRST_DELAY, _MAX_DELAY = 0.02, 2.0


def _disk_full(error: BaseException) -> bool:
    return "no space left on device" in str(error).lower()


def _disk_full_error(path: Path | str, error: BaseException) -> str:
    return (
        f"{path}: the disk holding the store is full ({str(error).strip()}); free space there, or "
        "pass another --db / INGEST_DUCKDB, and run again (what was committed before stays)"
    )


def _open_error(path: Path, error: Exception) -> str:
    """A message for a store file that cannot be opened or written, other than a lock."""
    text = str(error)
    lower = text.lower()
    if _disk_full(error):
        return _disk_full_error(path, error)
    if any(w in lower for w in ("permission denied", "not permitted", "read-only", "read only")):
        return (
            f"{path}: the store cannot be written ({text.strip()}); make the file and its folder "
            "writable by this user, or pass another --db / INGEST_DUCKDB"
        )
    if "created with an newer version" in lower or "created with a newer version" in lower:
        return (
            f"{path}: was written by a newer DuckDB than this project's {duckdb.__version__} "
            "(the project pins it for the lake extensions); delete the file (and its .wal) and run "
            "again to rebuild it from the inbox, which is the source, or pass another --db / INGEST_DUCKDB"
        )
    if 'extension "sqlite"' in lower:  # DuckDB knows a SQLite file and asks for its extension
        return (
            f"{path}: is a SQLite database, not a DuckDB file; pass another --db / INGEST_DUCKDB "
            "(nothing was written to it)"
        )
    if "not a valid duckdb" in lower or "database file" in lower or "serializ" in lower:
        return (
            f"{path}: is not a DuckDB database this DuckDB {duckdb.__version__} can read "
            f"({text.strip()}); pass another --db / INGEST_DUCKDB (nothing was written to it)"
        )
    return f"{path}: cannot open the store ({text.strip()}); check the path given to --db / INGEST_DUCKDB"


def _lake_error(location: str, error: Exception) -> str:
    """A message for a DuckLake store that cannot be attached."""
    return (
        f"{location}: cannot open the DuckLake store ({str(error).strip()}); check that its "
        "Postgres server runs and the conninfo in INGEST_STORE (scripts/local_postgres.sh start "
        "starts one here), and that INGEST_LAKE_DATA is a writable folder"
    )


# What DuckDB says when another process holds a file's lock (POSIX, then Windows).
_FILE_LOCKED = re.compile(
    r"could not set lock on file|conflicting lock is held|being used by another process"
)


def _is_lock_error(error: Exception) -> bool:
    """Whether opening a file failed because another process holds it (DuckDB's IO error
    naming the lock), not for any other reason whose text mentions a lock or a block."""
    return isinstance(error, duckdb.IOException) and _FILE_LOCKED.search(str(error).lower()) is not None


class Connections:
    """Connections to one store: a DuckDB file, or a DuckLake store (``ducklake:...``).

    Args:
        path: The database file, created (with its folder) on first use; or a lake location.
        lock_timeout: Seconds to keep retrying while another process holds the file.
        config: DuckDB settings of each connection (see ``Settings.duckdb_config``).
        data_path: The lake's folder of Parquet files (needed when the lake is created).
    """

    def __init__(
        self, path: Path | str, lock_timeout: float, config: dict[str, str], data_path: str | None = None
    ) -> None:
        self.is_lake = lake.is_lake(path)
        self.path = path if self.is_lake else Path(path)
        self.lock_timeout = lock_timeout
        self.config = config
        self.data_path = data_path
        self.conflicts_retried = 0  # transactions run again after a conflict (for tests, figures)
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
    def snapshot(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Yield a session whose reads inside the block all see one state of the store: one
        read-only transaction, never a write lock (writers go on, unseen until the block ends).

        On a lake the catalog is read once for the block rather than once per query. Write
        nothing inside it (use :meth:`transaction`, after the block); a transaction inside it
        fails, as DuckDB allows one at a time.

        Raises:
            StoreError: As :meth:`connect`.
        """
        with self.session() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            finally:
                _rollback(con)  # read only: nothing to keep

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
    def transaction(self, shards: Iterable[str] | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """Yield a connection inside one transaction: committed on success, rolled back on error.

        On a lake the transaction first takes the store's write locks (:mod:`lake_lock`): with
        ``shards``, the locks of those shards (the transaction writes rows of their documents
        only, by inserts: writers of other shards go on in parallel); without, the whole store
        (it runs alone). An empty ``shards`` writes rows of no document (timings) and waits
        only for a whole-store transaction.
        """
        scope = None if shards is None else frozenset(shards)
        lock = (
            lake_lock.write_lock(str(self.path), self.lock_timeout, scope) if self.is_lake else nullcontext()
        )
        with lock, self.connect() as con:
            con.execute("BEGIN TRANSACTION")
            if self.is_lake and scope is None:
                # DuckLake detects conflicts on deletes and updates only: two writers' inserts
                # of one key (anti-join inserts, delete-then-insert of a key neither saw) both
                # commit. Rewriting one shared row makes this transaction conflict with any
                # other whole-store transaction that overlaps it anyway (a writer without the
                # lock), so the one retried (``retrying``) sees the other's rows.
                con.execute("UPDATE schema_version SET applied_at = applied_at")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            try:
                con.execute("COMMIT")
            except duckdb.Error:
                _rollback(con)  # a refused commit may leave the transaction open
                raise

    def retrying(self, work: Callable[[], T]) -> T:
        """``work()`` (one transaction), run again while it fails on a DuckLake conflict.

        The store's writes read what they need inside their transaction, so running one again
        after another writer committed is the same write over the newer state.

        Raises:
            StoreError: It still conflicted after :data:`CONFLICT_ATTEMPTS` attempts.
        """
        try:
            for attempt in self._backoff(lake.is_conflict):
                with attempt:
                    return work()
        except duckdb.Error as error:
            if not lake.is_conflict(error):
                raise
            raise StoreError(
                f"{self.path}: a write conflicted with other writers {CONFLICT_ATTEMPTS} times in a "
                f"row ({str(error).strip()[:200]}); fewer parallel runs on this store, or "
                "run the failed run again"
            ) from error
        raise AssertionError("unreachable")

    def _backoff(self, racing: Callable[[BaseException], bool]) -> tenacity.Retrying:
        """Attempts of a step that may race another writer: ``racing`` errors run it again, up to
        :data:`CONFLICT_ATTEMPTS` times, after exponential waits with jitter (so racers part);
        the last error is raised. Each retry counts in ``conflicts_retried``."""

        def counted(_: tenacity.RetryCallState) -> None:
            self.conflicts_retried += 1

        return tenacity.Retrying(
            stop=tenacity.stop_after_attempt(CONFLICT_ATTEMPTS),
            wait=tenacity.wait_random_exponential(multiplier=_FIRST_DELAY, max=_MAX_DELAY),
            retry=tenacity.retry_if_exception(racing),
            before_sleep=counted,
            reraise=True,
        )

    @contextmanager
    def _open(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """:meth:`_open_store`, a full disk reported as that with the fix (DuckDB says only
        that a write failed, at whichever write or checkpoint met the full disk), and a write to
        a store this user may only read (attached read-only) as that."""
        try:
            with self._open_store() as con:
                yield con
        except duckdb.IOException as error:
            if not _disk_full(error):
                raise
            raise StoreError(_disk_full_error(self.path, error)) from error
        except duckdb.InvalidInputException as error:
            if "read-only mode" not in str(error):
                raise
            raise StoreError(_open_error(self.path, error)) from error

    @contextmanager
    def _open_store(self) -> Iterator[duckdb.DuckDBPyConnection]:
        if self.is_lake:
            with self._open_lake() as con:
                yield con
            return
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

    @contextmanager
    def _open_lake(self) -> Iterator[duckdb.DuckDBPyConnection]:
        def racing(error: BaseException) -> bool:
            # Processes attaching a new lake at once all create its catalog tables in Postgres;
            # the losers fail ("already exists") and find them made next time.
            text = str(error)
            return (
                isinstance(error, duckdb.Error)
                and "initialize ducklake" in text.lower()
                and "already exists" in text
            )

        try:
            for attempt in self._backoff(racing):
                with attempt:
                    con = host.attach(self.path, self.config, self.data_path)
        except duckdb.Error as error:
            raise StoreError(_lake_error(str(self.path), error)) from error
        try:
            if not self._schema_checked:
                # Writers starting together on a new lake all create the schema: the losers
                # conflict, and find it made when they try again.
                self._create_lake_schema(con)
                self._schema_checked = True
            yield con
        finally:
            host.detach(self.path, con)

    def _create_lake_schema(self, con: duckdb.DuckDBPyConnection) -> None:
        """:func:`ensure_schema` on the lake, run again while it raced another process's.

        Processes starting together on a new lake all create the schema; a loser's commit
        conflicts, or its CREATE finds the winner's table ("already exists"), or it read the
        catalog while the winner committed (tables seen, schema_version not yet): each finds
        the schema made when it tries again.
        """

        def racing(error: BaseException) -> bool:
            text = str(error)
            return (
                lake.is_conflict(error)
                or (isinstance(error, duckdb.CatalogException) and "already exists" in text)
                or (isinstance(error, StoreError) and "no schema_version table" in text)
            )

        for attempt in self._backoff(racing):
            with attempt:
                ensure_schema(con, self.path, lake=True)

    def _attach(self) -> duckdb.DuckDBPyConnection:
        """Attach the file, waiting while another process holds it, up to ``lock_timeout``."""
        said = []

        def say_once(state: tenacity.RetryCallState) -> None:
            # A wait of up to lock_timeout must not look like a hang.
            if not said and state.seconds_since_start and state.seconds_since_start >= _SAY_WAITING_AFTER:
                said.append(True)
                _log.warning(
                    "%s: another process holds the store; waiting up to %.0f s (INGEST_LOCK_TIMEOUT_SECONDS)",
                    self.path,
                    self.lock_timeout,
                )

        waiting = tenacity.Retrying(
            stop=tenacity.stop_after_delay(self.lock_timeout),
            wait=tenacity.wait_exponential(multiplier=0.05, max=1.0),
            retry=tenacity.retry_if_exception(_is_lock_error),
            before_sleep=say_once,
            reraise=True,
        )
        try:
            for attempt in waiting:
                with attempt:
                    return host.attach(self.path, self.config)
        except duckdb.Error as error:
            if not _is_lock_error(error):
                raise StoreError(_open_error(self.path, error)) from error
            raise StoreError(
                f"{self.path}: cannot open the store ({error}); another process holds it "
                f"longer than {self.lock_timeout:.0f} s: wait for it, or raise INGEST_LOCK_TIMEOUT_SECONDS "
                "(lock_timeout_seconds of the store resource in the UI)"
            ) from error
        raise AssertionError("unreachable")

    def check(self) -> None:
        """Open the store once (creating it, or migrating an older schema) so a bad file fails early.

        Raises:
            StoreError: The file cannot be opened for writing, is not an ingest store, or has a
                schema this code cannot use; the message says what to do.
        """
        with self.connect() as con:
            if self.is_lake:
                return  # attached, schema in place; DuckLake's CHECKPOINT runs its maintenance
            try:
                # A read-only file can be opened and read; the first write would fail mid-run.
                con.execute("CHECKPOINT")
            except duckdb.Error as error:
                raise StoreError(_open_error(self.path, error)) from error
            # A file this user may only read is attached read-only (for the reading commands).
            readonly = "SELECT readonly FROM duckdb_databases() WHERE database_name = current_database()"
            if con.execute(readonly).fetchone()[0]:
                raise StoreError(_open_error(self.path, PermissionError("read-only for this user")))


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    with contextlib.suppress(duckdb.Error):  # no transaction left open
        con.execute("ROLLBACK")


def retried(method: Callable[..., T]) -> Callable[..., T]:
    """A store method, or a function whose first argument is the store (one transaction either
    way), run through its store's :meth:`Connections.retrying`."""

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> T:
        return self._connections.retrying(lambda: method(self, *args, **kwargs))

    return run
