"""``ingest ui`` over one of two stores in a project: the UI shows that store's runs and plan
keys alone, and its ``plans_sensor`` leaves the other store's instance as it was.

Both stores are ingested with no ``DAGSTER_HOME`` set, as a user does: each records its runs
in an instance of its own, which ``ingest ui --db`` opens. Before, both shared ``.dagster_home``:
the UI of one showed the other's runs and materializations, and its ``plans_sensor`` deleted
the other's plan keys.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ingest_assets.defs.launch import STORE_TAG
from ingest_assets.defs.partitions import PLAN_DIMENSION
from ingest_assets.defs.private import instance_at
from tests.daemon.conftest import SAMPLE
from tests.daemon.harness import ROOT, DagsterDev

pytestmark = pytest.mark.slow


class IngestUi(DagsterDev):
    """``ingest ui ARGS`` started in ``project`` with no ``DAGSTER_HOME``, driven as DagsterDev."""

    def __init__(self, project: Path, args: list[str]) -> None:
        super().__init__(
            project / "ui",
            database=project / "unused.duckdb",
            inbox=project / "unused",
            plans_file=project / "unused.yaml",
            env={"INGEST_SENSOR_SECONDS": "5"},
        )
        for name in ("DAGSTER_HOME", "INGEST_DUCKDB", "INGEST_STORE", "INGEST_INBOX", "INGEST_PLANS"):
            self.env.pop(name, None)
        self.cwd = project
        self.args = args

    def command(self) -> list[str]:
        return [sys.executable, "-m", "ingest_assets.cli", "ui", *self.args, "-p", str(self.port)]


def _ingest(project: Path, *args: str) -> dict[str, object]:
    """``ingest run --json ARGS`` in ``project``, with no DAGSTER_HOME; its summary."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INGEST_", "DAGSTER_HOME"))}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "ingest_assets.cli", "run", "--json", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(done.stdout)


def _plan_keys(home: Path) -> list[str]:
    with instance_at(home) as instance:
        return instance.get_dynamic_partitions(PLAN_DIMENSION)


def test_ingest_ui_shows_its_store_alone_and_leaves_the_others_instance_be(tmp_path: Path) -> None:
    if not SAMPLE.is_dir():
        pytest.skip("data/sample is missing")
    project = tmp_path / "project"
    shutil.copytree(SAMPLE, project / "inbox_a")
    (project / "inbox_b").mkdir()
    for path in sorted(SAMPLE.glob("*.md"))[:2]:
        shutil.copyfile(path, project / "inbox_b" / path.name)
    plans = yaml.safe_load((ROOT / "plans.yaml").read_text())
    (project / "plans_a.yaml").write_text(yaml.safe_dump(plans))
    (project / "plans_b.yaml").write_text(yaml.safe_dump({"plans": {"other": plans["plans"]["default"]}}))

    a = _ingest(project, "--inbox", "inbox_a", "--plans", "plans_a.yaml")  # the project's store
    b = _ingest(project, "--inbox", "inbox_b", "--plans", "plans_b.yaml", "--db", "b.duckdb")
    (key_a,), (key_b,) = a["plans"], b["plans"]
    home_a = project / ".dagster_home"
    (home_b,) = (project / ".dagster_homes").iterdir()
    assert _plan_keys(home_a) == [key_a] and _plan_keys(home_b) == [key_b]

    args = ["--db", "b.duckdb", "--inbox", "inbox_b", "--plans", "plans_b.yaml"]
    with IngestUi(project, args) as ui:
        runs = ui.runs()
        assert {run.tags.get(STORE_TAG) for run in runs} == {str(project / "b.duckdb")}
        assert len(runs) == b["runs"]
        assert ui.plan_keys() == [key_b]
        ui._wait("two plans_sensor ticks", lambda: len(ui.sensor_ticks("plans_sensor")) >= 2 or None, 60)
        assert ui.plan_keys() == [key_b]
    assert not (ui.workdir / "home" / "history").exists()  # the harness's own home went unused

    assert _plan_keys(home_a) == [key_a]
    again = _ingest(project, "--inbox", "inbox_a", "--plans", "plans_a.yaml")
    assert again["runs"] == 0
