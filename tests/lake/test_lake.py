"""The DuckLake backend on a real Postgres catalog: the derived schema, concurrent writers (two
processes, for real) of different shards committing at once and of one shard taking turns, the
conflict retry against a writer outside the lock and the bound on it, the lock's timeout,
offline extensions, and eight shard runs in parallel processes leaving the store a serial run
leaves, row for row."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import duckdb
import pytest
import yaml

from ingest_assets.engine import SHARDS
from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore, SourceRow, StoreError, connection, lake, lake_lock
from ingest_assets.store.schema import schema_sql
from ingest_assets.store.store import TABLES
from tests.ingest.conftest import SAMPLE, plan_spec
from tests.lake.postgres import Cluster

ROOT = Path(__file__).resolve().parents[2]
_CREATED = re.compile(r"CREATE (TABLE|VIEW) (\w+)")


def _new_lake(cluster: Cluster, tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> str:
    location, data = cluster.new_lake(tmp_path / name)
    monkeypatch.setenv("INGEST_LAKE_DATA", str(data))
    return location


def _columns(store: IngestStore) -> list[tuple[str, str, str]]:
    return sorted(
        store.query(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE database_name = current_database()"
        )
    )


def test_lake_sql_drops_only_key_constraints() -> None:
    # A table another change adds to schema.sql, with every form of key constraint.
    added = textwrap.dedent("""\
        CREATE TABLE embeddings (
            chunk_id  UUID PRIMARY KEY,
            model     VARCHAR NOT NULL UNIQUE,
            vector    FLOAT[] NOT NULL
        );
        CREATE TABLE pairs (a VARCHAR NOT NULL, b INTEGER, PRIMARY KEY (a, b), UNIQUE (b));
        """)
    assert lake.lake_sql(added) == textwrap.dedent("""\
        CREATE TABLE embeddings (
            chunk_id  UUID,
            model     VARCHAR NOT NULL,
            vector    FLOAT[] NOT NULL
        );
        CREATE TABLE pairs (a VARCHAR NOT NULL, b INTEGER);
        """)
    derived = lake.lake_sql(schema_sql())
    assert not re.search(r"PRIMARY\s+KEY|UNIQUE", derived, re.IGNORECASE)
    assert _CREATED.findall(derived) == _CREATED.findall(schema_sql())


def test_a_new_lake_has_the_file_stores_tables_views_and_columns(
    postgres_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_lake = IngestStore(_new_lake(postgres_cluster, tmp_path, "lake", monkeypatch))
    on_file = IngestStore(tmp_path / "i.duckdb")
    on_lake.check()
    on_file.check()
    assert on_lake.is_lake and not on_file.is_lake
    assert _columns(on_lake) == _columns(on_file)
    assert {name for (name,) in on_lake.query("SELECT view_name FROM duckdb_views() WHERE NOT internal")} >= {
        name for kind, name in _CREATED.findall(schema_sql()) if kind == "VIEW"
    }
    assert set(on_lake.table_counts()) == set(TABLES)
    # Nothing is fetched from the network: the extensions came from the wheels.
    settings = on_lake.query(
        "SELECT current_setting('autoinstall_known_extensions'), current_setting('autoload_known_extensions')"
    )
    assert settings == [(False, False)]


def test_a_lake_without_its_server_is_refused_with_the_setting_to_fix(tmp_path: Path) -> None:
    dead = "ducklake:postgres:dbname=lake host=127.0.0.1 port=1 user=nobody connect_timeout=2"
    with pytest.raises(StoreError, match=r"(?s)cannot open the DuckLake store .*INGEST_STORE"):
        IngestStore(dead).check()


_WRITER = textwrap.dedent("""\
    import contextlib, datetime, json, sys, time, uuid
    from ingest_assets.store import IngestStore, SourceRow, lake_lock
    from ingest_assets.store.writes import source_rows, supersede
    location, name, shard, lockless = sys.argv[1:5]
    if lockless == "1":  # a writer that does not take the write locks (as another tool)
        lake_lock.write_lock = lambda *args: contextlib.nullcontext()
    store = IngestStore(location)
    store.check()
    print("ready", flush=True)  # imported and connected: the parent then sends the start time
    start = float(sys.stdin.readline())
    while time.time() < start:
        time.sleep(0.005)
    held = []
    for round in range(20):
        # 12 records written anew, as a scan of a shard does: each the newest row of its key.
        rows = source_rows([
            SourceRow(f"file:///{name}/{i}", f"/{name}/{i}", uuid.uuid5(uuid.NAMESPACE_URL, f"{name}{i}"),
                      "00" if shard == "store" else shard, f"hash-{round}", round, 0)
            for i in range(12)
        ], datetime.datetime.now())

        def write():
            # "store": a transaction over the whole store; else one over the shard's documents.
            with store.transaction(None if shard == "store" else [shard]) as con:
                began = time.time()
                supersede(con, "source_rows", rows)
                con.execute("SELECT count(*) FROM source_rows").fetchone()
                ended = time.time()  # inside the locks (they are released after the commit)
            held.append([began, ended])

        store.retrying(write)
    print(json.dumps({"retried": store._connections.conflicts_retried, "held": held,
                      "waited": lake_lock.TIMES.waited}))
    """)


def _race_two_writers(location: str, shards: tuple[str, str], lockless: tuple[bool, bool]) -> list[dict]:
    """Two processes writing 12 sources each 20 times from the same instant, in transactions
    over ``shards`` (``"store"``: the whole store); their reports."""
    IngestStore(location).check()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, location, name, shard, str(int(bare))], env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name, shard, bare in zip("ab", shards, lockless, strict=True)
    ]  # fmt: skip
    # Both start writing at one instant, once both have imported and opened the store.
    for proc in procs:
        ready = proc.stdout.readline()
        assert ready == "ready\n", (ready, proc.stderr.read()[-2000:] if proc.poll() is not None else "")
    start = f"{time.time() + 0.2}\n"
    for proc in procs:
        proc.stdin.write(start)
        proc.stdin.flush()  # communicate() closes it
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outputs]
    rows = IngestStore(location).query("SELECT uri, content_hash FROM sources ORDER BY uri")
    assert rows == sorted((f"file:///{n}/{i}", "hash-19") for n in "ab" for i in range(12))
    seqs = IngestStore(location).query("SELECT DISTINCT uri, seq FROM source_rows")
    assert len(seqs) == 24 * 20, "two rows of one file share a seq"
    return [json.loads(out) for out, _ in outputs]


def _overlapping(reports: list[dict]) -> int:
    """How many pairs of the two writers' transactions held their locks at the same time."""
    a, b = (r["held"] for r in reports)
    return sum(1 for s1, e1 in a for s2, e2 in b if s1 < e2 and s2 < e1)


def test_writers_of_different_shards_commit_at_the_same_time_without_waiting(
    postgres_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Their transactions only insert rows of their own shard's documents: neither waits for
    the other, and DuckLake commits both (no conflict to retry)."""
    location = _new_lake(postgres_cluster, tmp_path, "lake", monkeypatch)
    reports = _race_two_writers(location, ("00", "01"), (False, False))
    assert _overlapping(reports) > 0, "the writers' transactions never ran at the same time"
    assert [r["retried"] for r in reports] == [0, 0]


def test_writers_of_one_shard_take_turns(
    postgres_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs of one shard queue on its lock: no two of their transactions overlap, and each
    sees the other's rows before it writes (one row per seq and file above)."""
    location = _new_lake(postgres_cluster, tmp_path, "lake", monkeypatch)
    reports = _race_two_writers(location, ("03", "03"), (False, False))
    assert _overlapping(reports) == 0
    assert sum(r["waited"] for r in reports) > 0.05, "the writers never waited for each other"
    assert [r["retried"] for r in reports] == [0, 0]


def test_a_conflict_with_a_writer_outside_the_lock_is_retried(
    postgres_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Transactions over the whole store rewrite one shared row, so one that overlaps a writer
    that took no lock conflicts and runs again: the end state is a serial one."""
    location = _new_lake(postgres_cluster, tmp_path, "lake", monkeypatch)
    reports = _race_two_writers(location, ("store", "store"), (False, True))
    assert sum(r["retried"] for r in reports) > 0, "no conflict happened: the test did not exercise the retry"


def test_a_write_lock_held_too_long_fails_with_a_message(
    postgres_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg2

    location = _new_lake(postgres_cluster, tmp_path, "lake", monkeypatch)
    IngestStore(location).check()
    holder = psycopg2.connect(location[len(lake_lock.POSTGRES_PREFIX) :])
    holder.autocommit = True
    with holder.cursor() as cur:
        cur.execute("SELECT pg_advisory_lock(%s)", [lake_lock._KEY])
    store = IngestStore(location, lock_timeout=1)
    row = SourceRow("file:///x", "/x", uuid.uuid5(uuid.NAMESPACE_URL, "x"), "00", "h", 1, 0)
    started = time.monotonic()
    with pytest.raises(StoreError, match=r"another writer held the store's write lock longer than 1 s"):
        store.write_sources([row])
    assert time.monotonic() - started < 10
    holder.close()  # the holder's session ends: the lock is free again
    store.write_sources([row])
    assert store.query("SELECT uri FROM sources") == [("file:///x",)]


def test_a_conflict_past_the_bound_fails_with_a_message(
    postgres_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    location = _new_lake(postgres_cluster, tmp_path, "lake", monkeypatch)
    store = IngestStore(location)
    with store.transaction() as con:
        for key in "ab":
            con.execute("INSERT INTO plans VALUES (?, ?, 'f', '{}', now())", [key, key])
    # Another writer: a database of its own on the same lake, committing between our statements.
    other = duckdb.connect(":memory:", config={"autoinstall_known_extensions": "false"})
    lake.load_extensions(other)
    other.execute(lake.attach_statement(location, "other", None))
    monkeypatch.setattr(connection, "CONFLICT_ATTEMPTS", 3)
    tries = []

    def racing_write() -> None:
        tries.append(1)
        with store.transaction() as con:
            con.execute("UPDATE plans SET name = name || 'x' WHERE plan_key = 'a'")
            other.execute("UPDATE other.plans SET name = name || 'x' WHERE plan_key = 'b'")

    with pytest.raises(StoreError, match=r"conflicted with other writers 3 times"):
        store._connections.retrying(racing_write)
    assert len(tries) == 3
    other.close()


def _contents(store: IngestStore) -> dict[str, list[tuple]]:
    """Every table and view, without the write times (columns, and in node properties) and the
    run ids (chunk_changes: each chunk added once, whichever run added it), sorted."""
    found = {}
    for (name,) in store.query(
        "SELECT DISTINCT table_name FROM duckdb_columns() WHERE database_name = current_database() "
        # verified_sets records the checks `ingest run` ran after its runs, which shard runs do
        # not; step_timings and step_results the seconds and results of each run's steps.
        "AND table_name NOT IN ('schema_version', 'verified_sets', 'step_timings', 'step_results')"
    ):
        columns = [
            # A graph node's properties carry its chunk's write time too.
            """json_merge_patch(properties, '{"created_at": null}')::VARCHAR"""
            if c == "properties"
            else f'"{c}"::VARCHAR'
            for (c,) in store.query(
                "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() "
                "AND table_name = ? AND data_type <> 'TIMESTAMP' "
                "AND column_name NOT IN ('hashed_at_ns', 'run_id') "
                "ORDER BY column_index",
                [name],
            )
        ]
        found[name] = store.query(f"SELECT {', '.join(columns)} FROM {name} ORDER BY ALL")
    return found


@pytest.mark.long
@pytest.mark.slow
def test_eight_shard_runs_in_parallel_equal_a_serial_run(
    postgres_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inbox = tmp_path / "inbox"
    shutil.copytree(SAMPLE, inbox)
    plans = tmp_path / "plans.yaml"
    plans.write_text(yaml.safe_dump({"plans": {"default": plan_spec()}}))
    parallel = _new_lake(postgres_cluster, tmp_path, "parallel", monkeypatch)
    base = {**os.environ, "PYTHONPATH": str(ROOT), "INGEST_INBOX": str(inbox), "INGEST_PLANS": str(plans)}

    def env(store: str, home: str) -> dict[str, str]:
        (tmp_path / home).mkdir()
        shutil.copyfile(ROOT / "dagster.yaml", tmp_path / home / "dagster.yaml")
        # The lake made last is the one whose data folder INGEST_LAKE_DATA names now.
        data = {"INGEST_LAKE_DATA": os.environ["INGEST_LAKE_DATA"]}
        return {**base, **data, "INGEST_STORE": store, "DAGSTER_HOME": str(tmp_path / home)}

    procs = [
        subprocess.Popen([sys.executable, "-m", "ingest_assets.cli", "shards", shard],
                         env=env(parallel, f"h{shard}"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
        for shard in SHARDS
    ]  # fmt: skip
    outputs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0] * len(SHARDS), [err[-2000:] for _, err in outputs]
    reports = [json.loads(out) for out, _ in outputs]
    assert sum(r[s]["documents"]["parsed"] for r, s in zip(reports, SHARDS, strict=True)) == len(
        list(inbox.iterdir())
    )

    serial = _new_lake(postgres_cluster, tmp_path, "serial", monkeypatch)
    done = subprocess.run([sys.executable, "-m", "ingest_assets.cli", "run", "--json"], env=env(serial, "hs"),
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]

    in_parallel = _contents(IngestStore(parallel, settings=Settings(lake_data=str(tmp_path / "parallel"))))
    in_serial = _contents(IngestStore(serial, settings=Settings(lake_data=str(tmp_path / "serial"))))
    assert in_parallel["current_chunks"] and in_parallel["graph_nodes"]
    differing = {
        name: (len(rows), len(in_serial[name]), sorted(set(rows) ^ set(in_serial[name]))[:2])
        for name, rows in in_parallel.items()
        if rows != in_serial.get(name)
    }
    assert in_parallel == in_serial, differing
