"""DESIGN scenario 9 (a run killed mid-write) and runs sharing a Dagster home; they use separate
processes (DuckDB's lock is per process), so they are marked slow. Scenario 10, two runs writing
at once, on both backends, is ``tests/reliability/test_faults.py``: the same plans started five
seconds apart, and two plans files started together, with rows lost and consistency checked."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ingest_assets.store import IngestStore, invariants
from tests.ingest.conftest import SAMPLE, plan_spec

ROOT = Path(__file__).resolve().parents[2]


def _command(
    tmp_path: Path, inbox: Path, name: str, db: str | Path | None = None
) -> tuple[list[str], dict[str, str]]:
    home = tmp_path / f"home-{name}"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_HOME": str(home)}
    db = tmp_path / "i.duckdb" if db is None else db
    args = [sys.executable, "-m", "ingest_assets.cli", "run", "--inbox", str(inbox), "--db",
            str(db), "--plans", str(tmp_path / "plans.yaml"), "--json"]  # fmt: skip
    return args, env


def _setup(tmp_path: Path) -> Path:
    inbox = tmp_path / "inbox"
    shutil.copytree(SAMPLE, inbox)
    (tmp_path / "plans.yaml").write_text(yaml.safe_dump({"plans": {"default": plan_spec()}}))
    return inbox


def _assert_complete(tmp_path: Path, files: int, db: str | Path | None = None) -> None:
    store = IngestStore(tmp_path / "i.duckdb" if db is None else db)
    assert store.query("SELECT count(*) FROM current_documents")[0][0] == files
    assert (
        store.query("SELECT count(DISTINCT document_id) FROM current_chunks WHERE level = 0")[0][0] == files
    )
    duplicates = store.query(
        "SELECT count(*) FROM (SELECT set_key, id FROM chunks GROUP BY ALL HAVING count(*) > 1)"
    )
    assert duplicates[0][0] == 0
    assert invariants.no_orphans(store) == [] and invariants.unique_ids(store, 0) == []


@pytest.mark.slow
def test_run_killed_mid_write_then_rerun_is_complete(tmp_path: Path) -> None:
    inbox = _setup(tmp_path)
    args, env = _command(tmp_path, inbox, "a")
    proc = subprocess.Popen(
        args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    store_file = tmp_path / "i.duckdb"
    deadline = time.monotonic() + 60
    while not store_file.exists() and time.monotonic() < deadline:  # kill once writing has begun
        time.sleep(0.05)
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "the run had finished: nothing was killed"
    rerun = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    _assert_complete(tmp_path, len(list(inbox.iterdir())))


@pytest.mark.slow
def test_two_runs_with_different_plans_files_on_one_home_both_succeed(tmp_path: Path) -> None:
    """Each registers its own plan key (neither deletes the other's partition); both succeed,
    and the store serves the plans of the run that registered last."""
    inbox = _setup(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    shutil.copyfile(ROOT / "dagster.yaml", home / "dagster.yaml")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_HOME": str(home)}
    procs = []
    for name, child in (("a", 200), ("b", 150)):
        plans = tmp_path / f"plans-{name}.yaml"
        plans.write_text(yaml.safe_dump({"plans": {"default": plan_spec(child=child)}}))
        args = [sys.executable, "-m", "ingest_assets.cli", "run", "--inbox", str(inbox), "--db",
                str(tmp_path / "i.duckdb"), "--plans", str(plans), "--json"]  # fmt: skip
        procs.append(
            subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        )
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-1500:] for _, err in outputs]
    keys = {json.loads(out)["plans"][0] for out, _ in outputs}
    assert len(keys) == 2
    served = IngestStore(tmp_path / "i.duckdb").query("SELECT DISTINCT plan_key FROM current_chunks")
    assert len(served) == 1 and served[0][0] in keys


_OPEN_INSTANCE = """
import os, sys, time
from pathlib import Path
from ingest_assets.defs.private import instance_at
folder = Path(sys.argv[2])
(folder / f"ready-{os.getpid()}").touch()
while not (folder / "go").exists():
    time.sleep(0.001)
instance_at(Path(sys.argv[1])).get_runs()
"""


@pytest.mark.slow
def test_processes_opening_a_new_dagster_home_at_once_all_succeed(tmp_path: Path) -> None:
    """Six processes released together open one new home: each gets the instance (they race to
    create its SQLite tables and stamp its schema version unless opening is serialized)."""
    home, folder = tmp_path / "home", tmp_path / "start"
    home.mkdir()
    folder.mkdir()
    shutil.copyfile(ROOT / "dagster.yaml", home / "dagster.yaml")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _OPEN_INSTANCE, str(home), str(folder)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    deadline = time.monotonic() + 120
    while len(list(folder.glob("ready-*"))) < 6 and time.monotonic() < deadline:
        time.sleep(0.05)  # every process has imported Dagster: release them together
    (folder / "go").touch()
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, [e[-600:] for e in errors if e]
