"""Which Dagster instance ``ingest run`` records its runs in, and what a run says of its store."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ingest_assets.cli import main
from ingest_assets.cli.ui import dagster_dev
from ingest_assets.defs.launch import PROJECT_ROOT, STORE_TAG, dagster_home, store_label
from ingest_assets.settings import Settings
from tests.ingest.conftest import SAMPLE, Pipeline

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
    file_home = dagster_home(Settings())  # data/ingest.duckdb
    assert file_home == project / ".dagster_home"
    assert (file_home / "dagster.yaml").read_text() == (PROJECT_ROOT / "dagster.yaml").read_text()
    for name in ("INGEST_PG_HOST", "INGEST_PG_PORT", "INGEST_PG_USER", "INGEST_PG_DB"):
        monkeypatch.setenv(name, "x")  # scripts/local_postgres.sh printed them
    lake_home = dagster_home(Settings(database=LAKE))
    assert lake_home == project / ".dagster_home_lake"
    assert (lake_home / "dagster.yaml").read_text() == (PROJECT_ROOT / "dagster.postgres.yaml").read_text()
    monkeypatch.setenv("DAGSTER_HOME", str(project / "mine"))
    assert dagster_home(Settings(database=LAKE)) == project / "mine"


def test_each_duckdb_file_defaults_to_an_instance_of_its_own(project: Path) -> None:
    # One instance for every file showed one store's runs in the other's UI, and the plans
    # sensor of one deleted the other's plan keys.
    assert dagster_home(Settings()) == project / ".dagster_home"  # the project's store
    (project / "elsewhere").mkdir()
    homes = {dagster_home(Settings(database=name)) for name in ("a.duckdb", "elsewhere/a.duckdb", "b.duckdb")}
    assert len(homes) == 3
    assert all(home.parent == project / ".dagster_homes" for home in homes)
    assert dagster_home(Settings(database=str(project / "b.duckdb"))) in homes  # a path, however written
    for home in homes:
        assert (home / "dagster.yaml").read_text() == (PROJECT_ROOT / "dagster.yaml").read_text()


def test_an_instances_settings_follow_the_projects_until_edited(project: Path) -> None:
    # `make ui` copied dagster.yaml over the instance's at every start, and `ingest run` never:
    # a project's changed settings (pools, run limits) reached one and not the other.
    template = project / "dagster.yaml"
    template.write_text("telemetry:\n  enabled: false\n")
    config = dagster_home(Settings()) / "dagster.yaml"
    assert config.read_text() == template.read_text()
    template.write_text("telemetry:\n  enabled: false\nrun_monitoring:\n  enabled: true\n")
    assert (dagster_home(Settings()) / "dagster.yaml").read_text() == template.read_text()
    config.write_text(config.read_text() + "# mine\n")  # the user's now
    template.write_text("telemetry:\n  enabled: true\n")
    assert (dagster_home(Settings()) / "dagster.yaml").read_text().endswith("# mine\n")


def test_a_run_says_when_its_instance_holds_another_stores_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "shared"))
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "a.md").write_text((SAMPLE / "README.md").read_text())
    first = ["run", "--inbox", str(inbox), "--db", str(tmp_path / "a.duckdb")]
    assert main(first) == 0
    assert "warning" not in capsys.readouterr().err
    assert main(["run", "--inbox", str(inbox), "--db", str(tmp_path / "b.duckdb")]) == 0
    err = capsys.readouterr().err
    assert f"ingest run: warning: the Dagster instance {tmp_path / 'shared'} also records runs of " in err
    assert str(tmp_path / "a.duckdb") in err and "Unset DAGSTER_HOME" in err


def test_ingest_ui_serves_the_stores_own_instance_from_its_folder(project: Path) -> None:
    (project / "inbox").mkdir()
    settings = Settings(database="b.duckdb", inbox="inbox", plans_file="p.yaml")
    command, env, cwd = dagster_dev(settings, "127.0.0.1", 3005)
    assert cwd == dagster_home(settings) and env["DAGSTER_HOME"] == str(cwd)
    assert command[-2:] == ["-w", str(cwd / "workspace.yaml")] and command[3:8] == [
        "dev",
        "-h",
        "127.0.0.1",
        "-p",
        "3005",
    ]
    (location,) = yaml.safe_load((cwd / "workspace.yaml").read_text())["load_from"]
    assert location["python_module"]["location_name"] == "ingest"  # as [tool.dagster] names it
    # dagster dev starts in the instance's folder: every path is absolute.
    assert (env["INGEST_STORE"], env["INGEST_INBOX"], env["INGEST_PLANS"]) == (
        str(project / "b.duckdb"),
        str(project / "inbox"),
        str(project / "p.yaml"),
    )


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
