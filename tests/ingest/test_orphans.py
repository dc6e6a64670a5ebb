"""A killed ``ingest run`` must not leave the next one waiting on its pool slot."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dagster import DagsterRunStatus, RunsFilter

from ingest_assets.defs.private import instance_at
from tests.ingest.conftest import SAMPLE

ROOT = Path(__file__).resolve().parents[2]


def _command(tmp: Path) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "DAGSTER_HOME": str(tmp / "home"), "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "ingest_assets.cli", "run", "--inbox", str(tmp / "inbox"),
            "--db", str(tmp / "i.duckdb"), "--json"]  # fmt: skip
    return args, env


@pytest.mark.slow  # two `ingest run` processes, one killed
def test_run_after_a_killed_run_with_the_same_home_completes(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "inbox")
    (tmp_path / "home").mkdir()
    shutil.copyfile(ROOT / "dagster.yaml", tmp_path / "home" / "dagster.yaml")
    args, env = _command(tmp_path)
    victim = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)  # fmt: skip
    # Opened as ``ingest run`` opens it (under the home's lock): opening a new home beside the
    # victim without the lock races it to create the SQLite tables.
    instance = instance_at(tmp_path / "home")
    deadline = time.monotonic() + 120
    started = []
    while not started and time.monotonic() < deadline and victim.poll() is None:
        time.sleep(0.2)
        started = instance.get_runs(filters=RunsFilter(statuses=[DagsterRunStatus.STARTED]))
    assert started, "the first run never started"
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait(timeout=30)
    # The killed run still holds its slot of the duckdb_writer pool; the next run must free it.
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    (killed,) = instance.get_runs(filters=RunsFilter(run_ids=[started[0].run_id]))
    assert killed.status == DagsterRunStatus.FAILURE
