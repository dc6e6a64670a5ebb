"""The DuckDB file missing, read-only, not DuckDB, foreign, or of an older/newer schema: created,
migrated, or refused with a clear message (no traceback) and the file left as it was."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from ingest_assets.store import IngestStore, StoreError
from ingest_assets.store import schema as store_module
from tests.old_schemas import downgrade_to_schema_3
from tests.reliability.conftest import cli_in_process, copy_sample, write_plans


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cli_error(tmp_path: Path, db: Path) -> str:
    inbox = copy_sample(tmp_path / "inbox")
    plans = write_plans(tmp_path / "plans.yaml")
    args = ["run", "--inbox", str(inbox), "--db", str(db), "--plans", str(plans)]
    code, out, err = cli_in_process(args, tmp_path / "home")
    assert code == 1, (out, err)
    assert "Traceback" not in err and err.startswith("ingest: ") and err.count("\n") == 1, err
    return err


def test_missing_file_and_folders_are_created(tmp_path: Path) -> None:
    db = tmp_path / "a" / "b" / "ingest.duckdb"
    IngestStore(db).check()
    version = IngestStore(db).query("SELECT max(version) FROM schema_version")
    assert version == [(store_module.SCHEMA_VERSION,)]


def _make_read_only(path: Path) -> None:
    path.chmod(0o444)
    # root ignores file modes; the immutable flag binds root too
    if os.geteuid() == 0 and (
        shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)]).returncode
    ):
        pytest.skip("running as root without chattr: cannot make a file read-only")


def _undo_read_only(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], check=False)
    path.chmod(0o644)


def test_read_only_file_is_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    db = tmp_path / "ro.duckdb"
    IngestStore(db).check()
    before = _digest(db)
    _make_read_only(db)
    try:
        err = _cli_error(tmp_path, db)
    finally:
        _undo_read_only(db)
    assert str(db) in err and "cannot be written" in err and "--db" in err, err
    assert _digest(db) == before


def test_folder_given_as_database_is_a_clear_error(tmp_path: Path) -> None:
    err = _cli_error(tmp_path, tmp_path)
    assert "is a folder" in err


def test_file_that_is_not_duckdb_is_refused_and_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "notes.duckdb"
    db.write_bytes(b"these are my notes, not a database\n" * 200)
    before = _digest(db)
    err = _cli_error(tmp_path, db)
    assert "is not a DuckDB database" in err and "nothing was written" in err, err
    assert _digest(db) == before


def test_a_sqlite_file_is_named_as_one_and_left_alone(tmp_path: Path) -> None:
    """DuckDB knows a SQLite file and asked for its extension ('Install it first using INSTALL
    sqlite'), which pointed the user the wrong way."""
    import sqlite3

    db = tmp_path / "app.db"
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.execute("CREATE TABLE notes (body TEXT)")
        con.commit()
    before = _digest(db)
    err = _cli_error(tmp_path, db)
    assert f"{db}: is a SQLite database, not a DuckDB file; pass another --db" in err, err
    assert _digest(db) == before


def test_foreign_duckdb_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "other.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE customers (id INTEGER, name VARCHAR)")
        con.execute("INSERT INTO customers VALUES (1, 'Ada')")
    err = _cli_error(tmp_path, db)
    assert "not written by ingest_assets" in err
    with duckdb.connect(str(db)) as con:
        assert con.execute("SELECT * FROM customers").fetchall() == [(1, "Ada")]
        assert {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()} == {
            "customers"
        }


@pytest.mark.parametrize(("version", "message"), [(99, "unknown to this code"), (0, "has no migration")])
def test_newer_or_unmigratable_schema_is_refused_without_damage(
    tmp_path: Path, version: int, message: str
) -> None:
    db = tmp_path / "old.duckdb"
    IngestStore(db).check()
    with duckdb.connect(str(db)) as con:
        con.execute("DELETE FROM schema_version")
        con.execute("INSERT INTO schema_version VALUES (?, now())", [version])
        tables = con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()
    err = _cli_error(tmp_path, db)
    assert message in err and f"schema version {version}" in err, err
    with duckdb.connect(str(db)) as con:
        assert con.execute("SELECT version FROM schema_version").fetchall() == [(version,)]
        assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchone() == tables


def test_older_schema_is_migrated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "old.duckdb"
    IngestStore(db).check()
    current = store_module.SCHEMA_VERSION
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", current + 1)
    migration = "ALTER TABLE source_rows ADD COLUMN note VARCHAR"
    monkeypatch.setattr(store_module, "MIGRATIONS", {current: migration})
    IngestStore(db).check()
    store = IngestStore(db)
    assert store.query("SELECT max(version) FROM schema_version") == [(current + 1,)]
    assert store.query("SELECT count(*) FROM duckdb_columns() WHERE column_name = 'note'") == [(1,)]


def test_schema_1_store_with_json_bodies_is_migrated_and_readable(tmp_path: Path) -> None:
    db = tmp_path / "v1.duckdb"
    IngestStore(db).check()
    with duckdb.connect(str(db)) as con:  # make it look like schema 1: JSON bodies, no verified_sets
        downgrade_to_schema_3(con)
        con.execute("ALTER TABLE documents ALTER COLUMN body SET DATA TYPE JSON USING NULL")
        con.execute("DROP TABLE verified_sets")
        con.execute("DELETE FROM schema_version")
        con.execute("INSERT INTO schema_version VALUES (1, now())")
        con.execute(
            "INSERT INTO documents (document_id, version_id, source_uri, kind, title, text_length, "
            "body, parsed_at) VALUES ('00000000-0000-0000-0000-000000000001', "
            "'00000000-0000-0000-0000-000000000002', 'file:///a.md', 'markdown', 'A', 5, "
            '\'{"text": "hello"}\', now())'
        )
    store = IngestStore(db)
    store.check()
    assert store.query("SELECT max(version) FROM schema_version") == [(store_module.SCHEMA_VERSION,)]
    key = ("00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002")
    assert store.document_bodies([key]) == {"/".join(key): '{"text": "hello"}'}
    assert store.query("SELECT count(*) FROM verified_sets") == [(0,)]


def test_failed_migration_is_rolled_back_with_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "old.duckdb"
    IngestStore(db).check()
    current = store_module.SCHEMA_VERSION
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", current + 1)
    monkeypatch.setattr(
        store_module,
        "MIGRATIONS",
        {current: "ALTER TABLE source_rows ADD COLUMN note VARCHAR; UPDATE no_such_table SET x = 1"},
    )
    with pytest.raises(StoreError, match="rolled back and the file is unchanged"):
        IngestStore(db).check()
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", current)
    store = IngestStore(db)
    assert store.query("SELECT max(version) FROM schema_version") == [(current,)]
    assert store.query("SELECT count(*) FROM duckdb_columns() WHERE column_name = 'note'") == [(0,)]


@pytest.mark.parametrize("value", ["lots", "0", "-5"])
def test_bad_limit_setting_is_a_clear_error(
    tmp_path: Path, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INGEST_MAX_PAGES", value)
    err = _cli_error(tmp_path, tmp_path / "x.duckdb")
    assert "INGEST_MAX_PAGES" in err and "positive whole number" in err


def test_a_store_written_by_a_newer_duckdb_is_refused_naming_the_file_and_the_fix(tmp_path: Path) -> None:
    # A store made by `ingest run` under DuckDB 2.0.1 (the project's version before the 1.5.5
    # pin), gzipped: DuckDB 1.5.5 cannot read its storage format.
    packed = Path(__file__).parent / "files" / "store_written_by_duckdb_2.0.1.duckdb.gz"
    db = tmp_path / "ingest.duckdb"
    db.write_bytes(gzip.decompress(packed.read_bytes()))
    before = _digest(db)
    message = _cli_error(tmp_path, db)
    assert f"{db}: was written by a newer DuckDB than this project's {duckdb.__version__}" in message
    assert "delete the file (and its .wal) and run again to rebuild it from the inbox" in message
    assert _digest(db) == before
    db.unlink()  # the fix the message gives
    code, _, err = cli_in_process(
        ["run", "--inbox", str(tmp_path / "inbox"), "--db", str(db), "--plans", str(tmp_path / "plans.yaml")],
        tmp_path / "home",
    )
    assert code == 0, err
    assert IngestStore(db).query("SELECT count(*) FROM current_documents")[0][0] > 0
