"""Fixtures for the daemon tests: a tmp inbox (a copy of data/sample), store and plans file, and
a real ``dagster dev`` over them (see harness.py).

``dagster_dev`` is shared by the tests of a module (starting costs about 5 s); a test that
must own its instance (stopping it, editing the plans file) starts one with ``start_dagster_dev``.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from chunking import Document
from ingest_assets.engine import shard_of
from tests.daemon.harness import ROOT, DagsterDev

SAMPLE = ROOT / "data" / "sample"


@dataclass(frozen=True)
class Workspace:
    """The files one dagster dev works on, all under ``root``."""

    root: Path
    inbox: Path
    database: Path
    plans_file: Path

    def busiest_shard(self) -> str:
        """Return the shard holding the most inbox files (shards hash the file's URI, so the tmp path)."""
        counts = Counter(
            shard_of(Document.node_id_for(path.resolve().as_uri()))
            for path in self.inbox.rglob("*")
            if path.is_file() and not path.name.startswith(".")
        )
        return max(sorted(counts), key=counts.__getitem__)

    def dagster_dev(self, env: dict[str, str] | None = None) -> DagsterDev:
        """Return a (not yet started) DagsterDev over these files."""
        return DagsterDev(
            self.root, database=self.database, inbox=self.inbox, plans_file=self.plans_file, env=env
        )


def make_workspace(root: Path) -> Workspace:
    """Seed ``root`` with an inbox copied from data/sample and a copy of plans.yaml."""
    if not SAMPLE.is_dir():
        pytest.skip("data/sample is missing")
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(SAMPLE, root / "inbox")
    shutil.copyfile(ROOT / "plans.yaml", root / "plans.yaml")
    return Workspace(root, root / "inbox", root / "ingest.duckdb", root / "plans.yaml")


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """A fresh inbox, store path and plans file for one test."""
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def sample_inbox(workspace: Workspace) -> Path:
    """The test's inbox: a copy of data/sample."""
    return workspace.inbox


@pytest.fixture
def store_path(workspace: Workspace) -> Path:
    """The test's DuckDB file (not created yet)."""
    return workspace.database


@pytest.fixture
def plans_file(workspace: Workspace) -> Path:
    """The test's plans file: a copy of plans.yaml, free to edit."""
    return workspace.plans_file


@pytest.fixture
def start_dagster_dev(workspace: Workspace) -> Iterator[Callable[..., DagsterDev]]:
    """Start a DagsterDev over the test's workspace (``start_dagster_dev(env=...)``); stopped at the end."""
    started: list[DagsterDev] = []

    def start(env: dict[str, str] | None = None, seed: bool = False) -> DagsterDev:
        dev = workspace.dagster_dev(env)
        if seed:  # store, plan partitions and run history as `ingest run` leaves them
            dev.ingest_run()
        started.append(dev)
        return dev.start()

    yield start
    for dev in started:
        dev.stop()


@pytest.fixture(scope="module")
def shared_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The workspace of the module's ``dagster_dev``."""
    return make_workspace(tmp_path_factory.mktemp("daemon"))


@pytest.fixture(scope="module")
def dagster_dev(shared_workspace: Workspace) -> Iterator[DagsterDev]:
    """One running dagster dev for the module, over ``shared_workspace`` (empty store at start)."""
    with shared_workspace.dagster_dev() as dev:
        yield dev
