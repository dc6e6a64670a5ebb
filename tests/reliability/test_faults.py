"""Faults: ``ingest run`` killed with SIGKILL at random points, and runs writing one DuckDB file at once.

After every kill the store is consistent (no partial or duplicated set, unique ids, no orphans);
the next run completes the work and reuses every set committed before the kill (created + reused
counts). Concurrent runs (two plans files at once; a run started during another) both succeed,
show no lock error, and lose no row. Separate processes, since DuckDB's lock is per process.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ingest_assets.store import IngestStore
from tests.ingest.conftest import plan_spec
from tests.lake.postgres import Backend, on_both_backends, store_exists
from tests.reliability.conftest import (
    FIGURES,
    cli_command,
    consistency_violations,
    copy_sample,
    missing_sets,
    rows_lost,
    write_plans,
)


def _committed(store: IngestStore) -> dict[str, int]:
    if not store_exists(store.path):
        return {"parent": 0, "child": 0, "parsed": 0}
    members = dict(store.query("SELECT role, count(*) FROM plan_members GROUP BY role"))
    parsed = store.query("SELECT count(*) FROM sources WHERE version_id IS NOT NULL")[0][0]
    return {"parent": members.get("parent", 0), "child": members.get("child", 0), "parsed": parsed}


def _store_files(db: str | Path) -> list[Path]:
    """The files of a DuckDB store (the file and its WAL); none for a lake."""
    if str(db).startswith("ducklake:"):
        return []
    return [Path(db), Path(f"{db}.wal")]


def _kill_one(tmp: Path, inbox: Path, db: str | Path, plans: Path, delay: float, home: str) -> bool:
    """Start ``ingest run`` and SIGKILL its process group after ``delay`` seconds; whether it
    was still running then (False: it had finished, and nothing was killed)."""
    args, env = cli_command(tmp, inbox, db, plans, home=home)
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    try:
        proc.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        return proc.returncode == -signal.SIGKILL


_KILL_ATTEMPTS = 6


def _kill_trials(tmp: Path, delays: list[float], seed: int, db: str | Path | None = None) -> None:
    """Kill ``ingest run`` after each delay on one store (``db``, else a DuckDB file in ``tmp``),
    check it, then complete it with one run.

    Each trial must kill a running process: a run that finished before its kill point is
    undone (the DuckDB file put back as it was before the trial) and the trial tried again with
    half the delay, at most :data:`_KILL_ATTEMPTS` times; on a lake (no copy to put back) it
    fails the test."""
    inbox = copy_sample(tmp / "inbox")
    plans = write_plans(tmp / "plans.yaml")
    db = tmp / "i.duckdb" if db is None else db
    store = IngestStore(db)
    kills = 0
    for trial, delay in enumerate(delays):
        saved = tmp / f"before-trial-{trial}"
        saved.mkdir()
        for path in _store_files(db):
            if path.exists():
                shutil.copy2(path, saved / path.name)
        # A later trial finds less left to do, so its run may end before its kill point; halving
        # the delay reaches the run's start-up (imports, Dagster) within a few attempts.
        for attempt in range(_KILL_ATTEMPTS):
            if _kill_one(tmp, inbox, db, plans, delay, home=f"home-killed-{trial}-{attempt}"):
                kills += 1
                break
            assert _store_files(db), f"seed {seed}: the run finished before its kill at {delay:.1f} s"
            for path in _store_files(db):  # undo the completed run
                path.unlink(missing_ok=True)
                if (saved / path.name).exists():
                    shutil.copy2(saved / path.name, path)
            delay /= 2
        FIGURES["kill_trials"] += 1
        if store_exists(db):
            assert consistency_violations(store) == [], f"seed {seed}, killed after {delay:.1f} s"
        FIGURES["kill_consistent"] += 1
    # Every trial killed a running ``ingest run``.
    assert kills == len(delays), f"seed {seed}: {kills} of {len(delays)} trials killed a run"
    FIGURES["kill_real"] += kills
    before = _committed(store)
    args, env = cli_command(tmp, inbox, db, plans, home="home-rerun")
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    files = len(list(inbox.iterdir()))
    # Nothing committed is redone: exactly the missing sets are created, the rest reused.
    assert summary["documents"]["parsed"] == files - before["parsed"]
    for role in ("parent", "child"):
        sets = summary["chunk_sets"][role]
        assert sets == {"created": files - before[role], "reused": before[role]}, (role, before, seed)
    assert consistency_violations(store) == [] and missing_sets(store) == []
    assert store.query("SELECT count(*) FROM current_documents")[0][0] == files
    FIGURES["kill_completed"] += len(delays)
    FIGURES["kill_reused_sets"] += before["parent"] + before["child"]


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["lake"], indirect=True)
def test_sigkill_at_random_points_then_rerun_completes(tmp_path: Path, backend: Backend) -> None:
    # On the lake: one kill in the middle of a run, then one completing run (the twenty trials
    # below kill DuckDB files, each four times).
    rng = random.Random(20240601)
    _kill_trials(tmp_path, [rng.uniform(4.0, 8.0)], seed=0, db=backend.location)


@pytest.mark.long
@pytest.mark.slow
def test_twenty_sigkill_trials(tmp_path: Path) -> None:
    # 20 trials on 5 stores (four kills each at random points of the run, then a completing
    # run), two stores at a time.
    def chain(seed: int) -> None:
        rng = random.Random(seed)
        folder = tmp_path / f"t{seed}"
        folder.mkdir()
        _kill_trials(folder, sorted(rng.uniform(0.5, 14.0) for _ in range(4)), seed)

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(chain, range(5)))


def _concurrent(tmp: Path, plan_files: list[Path], stagger: float, db: str | Path) -> None:
    inbox = copy_sample(tmp / "inbox")
    procs = []
    for index, plans in enumerate(plan_files):
        args, env = cli_command(tmp, inbox, db, plans, home=f"home{index}")
        procs.append(
            subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        )
        time.sleep(stagger)
    outputs = [p.communicate(timeout=600) for p in procs]
    FIGURES["concurrent_runs"] += len(procs)
    FIGURES["lock_errors"] += sum("lock" in err.lower() for _, err in outputs)
    assert [p.returncode for p in procs] == [0] * len(procs), [err[-2000:] for _, err in outputs]
    FIGURES["concurrent_ok"] += len(procs)
    store = IngestStore(db)
    lost = rows_lost(store)
    FIGURES["rows_lost"] += lost
    assert lost == 0 and missing_sets(store) == [] and consistency_violations(store) == []
    # Each plans file makes only its own plans live (the other run's plan is retired, its rows
    # kept): every plan either run wrote holds a parent, child and graph set for every document.
    files = len(list(inbox.iterdir()))
    for key in {key for out, _ in outputs for key in json.loads(out)["plans"]}:
        roles = dict(
            store.query("SELECT role, count(*) FROM plan_members WHERE plan_key = ? GROUP BY role", [key])
        )
        assert roles == {"parent": files, "child": files, "graph": files}, (key, roles)


@pytest.mark.slow
@on_both_backends()
def test_two_backfills_of_different_plans_at_once(tmp_path: Path, backend: Backend) -> None:
    a = write_plans(tmp_path / "a.yaml", small=plan_spec(child=150, chat_child=150))
    b = write_plans(tmp_path / "b.yaml", large=plan_spec(parent=800, child=300))
    _concurrent(tmp_path, [a, b], stagger=0.0, db=backend.location)


@pytest.mark.slow
@on_both_backends()
def test_a_run_started_during_another_run(tmp_path: Path, backend: Backend) -> None:
    plans = write_plans(tmp_path / "plans.yaml")
    _concurrent(tmp_path, [plans, plans], stagger=5.0, db=backend.location)
