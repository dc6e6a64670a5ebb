"""Which Dagster instance ``ingest run`` records its runs in, and what a run says of its store."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest_assets.defs.launch import PROJECT_ROOT, STORE_TAG, dagster_home, store_label
from ingest_assets.settings import Settings
from tests.ingest.conftest import Pipeline

LAKE = "ducklake:postgres:dbname=lake host=127.0.0.1 port=5999 user=postgres password=secret"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    for name in ("INGEST_PG_HOST", "INGEST_PG_PORT", "INGEST_PG_USER", "INGEST_PG_DB"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_a_file_and_a_lake_default_to_instances_of_their_own(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # docs/scale-out.md's recipe sets no DAGSTER_HOME: the lake's runs went into the file's
    # instance, whose UI then showed the lake's failures as the file's.
    file_home = dagster_home(Settings(database=str(project / "i.duckdb")))
    assert file_home == project / ".dagster_home"
    assert (file_home / "dagster.yaml").read_text() == (PROJECT_ROOT / "dagster.yaml").read_text()
    for name in ("INGEST_PG_HOST", "INGEST_PG_PORT", "INGEST_PG_USER", "INGEST_PG_DB"):
        monkeypatch.setenv(name, "x")  # scripts/local_postgres.sh printed them
    lake_home = dagster_home(Settings(database=LAKE))
    assert lake_home == project / ".dagster_home_lake"
    assert (lake_home / "dagster.yaml").read_text() == (PROJECT_ROOT / "dagster.postgres.yaml").read_text()
    monkeypatch.setenv("DAGSTER_HOME", str(project / "mine"))
    assert dagster_home(Settings(database=LAKE)) == project / "mine"


def test_a_lake_without_a_dagster_postgres_gets_the_embedded_instance(project: Path) -> None:
    home = dagster_home(Settings(database=LAKE))
    assert (home / "dagster.yaml").read_text() == (PROJECT_ROOT / "dagster.yaml").read_text()


def test_every_run_names_its_store(tmp_path: Path) -> None:
    pipeline = Pipeline(tmp_path)
    assert pipeline.run()["runs"] >= 2
    stores = {run.tags.get(STORE_TAG) for run in pipeline.instance.get_runs()}
    assert stores == {str(Path(pipeline.db).resolve())}


def test_a_lakes_tag_hides_its_password() -> None:
    assert store_label(Settings(database=LAKE)) == LAKE.replace("password=secret", "password=***")
