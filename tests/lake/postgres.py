"""Fixtures of the DuckLake backend: a private Postgres cluster for the session, a fresh lake
per test, and the ``backend`` fixture that runs a test on the DuckDB file or on the lake.

The cluster is scripts/local_postgres.sh's (a free loopback port, a folder under the session's
tmp dir), started the first time a test asks for the lake and stopped at the end of the session.
Registered for every test folder by tests/conftest.py.
"""

from __future__ import annotations

import itertools
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "local_postgres.sh"
BACKENDS = ["file", "lake"]
_numbers = itertools.count()


@dataclass(frozen=True)
class Cluster:
    """A running Postgres server: where it listens, and how to make databases on it."""

    folder: Path
    env: dict[str, str]

    def conninfo(self, dbname: str) -> str:
        env = self.env
        return f"dbname={dbname} host={env['PGHOST']} port={env['PGPORT']} user={env['PGUSER']}"

    def create_database(self, prefix: str) -> str:
        """A new empty database; returns its name."""
        import psycopg2

        name = f"{prefix}_{os.getpid()}_{next(_numbers)}"
        con = psycopg2.connect(self.conninfo("postgres"))
        con.autocommit = True
        with con.cursor() as cur:
            cur.execute(f'CREATE DATABASE "{name}"')
        con.close()
        return name

    def new_lake(self, data: Path) -> tuple[str, Path]:
        """A new lake (its own catalog database, Parquet files under ``data``): (location, data)."""
        data.mkdir(parents=True, exist_ok=True)
        return "ducklake:postgres:" + self.conninfo(self.create_database("lake")), data


def _parse_env(text: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("export "):
            for item in shlex.split(line[len("export ") :]):
                key, _, value = item.partition("=")
                env[key] = value
    return env


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    """A private Postgres cluster for the session, stopped (and its folder removed) at its end."""
    # Not under pytest's tmp dir, which only its owner may enter: as root the server runs as
    # the user postgres, who must reach this folder.
    folder = Path(tempfile.mkdtemp(prefix="ingest-postgres-"))
    os.chmod(folder, 0o755)
    started = subprocess.run(
        ["bash", str(SCRIPT), "start", str(folder)], capture_output=True, text=True, timeout=120
    )
    assert started.returncode == 0, started.stderr
    try:
        yield Cluster(folder, _parse_env(started.stdout))
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", str(folder)], capture_output=True, timeout=120)
        shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True)
class Backend:
    """One store backend of a test: ``name`` and the store location ``tests`` should use."""

    name: str
    location: str | Path  # the DuckDB file, or ducklake:postgres:...

    @property
    def is_lake(self) -> bool:
        return self.name == "lake"


@pytest.fixture
def backend(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Backend:
    """The store of this test: the DuckDB file ``tmp_path/i.duckdb`` unless the test is
    parametrized with ``backend="lake"`` (``@pytest.mark.parametrize("backend", BACKENDS,
    indirect=True)``): then a new lake, with INGEST_LAKE_DATA set for this process and its
    children."""
    name = getattr(request, "param", "file")
    if name == "file":
        return Backend("file", tmp_path / "i.duckdb")
    cluster: Cluster = request.getfixturevalue("postgres_cluster")
    location, data = cluster.new_lake(tmp_path / "lake_data")
    monkeypatch.setenv("INGEST_LAKE_DATA", str(data))
    return Backend("lake", location)


def on_both_backends(smoke: bool = False) -> pytest.MarkDecorator:
    """The mark that runs a test (or a module, as ``pytestmark``) on the file and on the lake.

    The lake twin is ``slow`` (a lake store is 2-4 times slower, and CI runs the slow suite), so
    the default suite runs the file; ``smoke=True`` keeps the lake twin in the default suite too
    (a few such tests, so a default run still opens a lake)."""
    lake = "lake" if smoke else pytest.param("lake", marks=pytest.mark.slow)
    return pytest.mark.parametrize("backend", ["file", lake], indirect=True)


def store_exists(location: str | Path) -> bool:
    """Whether the store has been created (a lake's catalog always exists in these tests)."""
    return str(location).startswith("ducklake:") or Path(location).exists()
