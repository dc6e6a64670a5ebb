"""The harness on today's code: a real dagster dev loads the location, materializes an asset
partition launched over GraphQL, turns sensors on and off, lists runs with their tags, and
leaves no process behind when stopped."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ingest_assets.defs.sensors import RANGE_END_TAG, RANGE_START_TAG
from ingest_assets.engine import SHARDS
from tests.daemon.conftest import Workspace
from tests.daemon.harness import DagsterDev, DagsterDevError, group_pids

# Each module starts dagster dev at least twice (5-10 s each); the folder takes about 90 s.
pytestmark = pytest.mark.slow
# The tests of the module's shared ``dagster_dev`` run in order on one xdist worker (the first
# expects a fresh instance); those that start their own instance run anywhere.
SHARED = pytest.mark.xdist_group("daemon-harness")
ASSETS = {"sources", "documents", "parent_chunks", "child_chunks", "graph_nodes", "embeddings"}


def _alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


@SHARED
def test_code_location_loads_with_assets_jobs_and_automation(dagster_dev: DagsterDev) -> None:
    repo = dagster_dev.repository()
    assert {"/".join(n["assetKey"]["path"]) for n in repo["assetNodes"]} == ASSETS
    assert {"documents_job", "chunks_job", "verify_job"} <= {j["name"] for j in repo["jobs"]}
    # The one switch, off; plans_sensor (lists plan keys, launches nothing) on; the nightly full
    # verification off until turned on.
    assert dagster_dev.sensors() == {"ingest_sensor": "STOPPED", "plans_sensor": "RUNNING"}
    assert dagster_dev.schedules() == {"verify_schedule": "STOPPED"}
    # A fresh instance: no run yet, and plans_sensor lists the plans file's key within a tick.
    deadline = time.monotonic() + 90
    while not dagster_dev.plan_keys() and time.monotonic() < deadline:
        time.sleep(1)
    assert [key.split("-")[0] for key in dagster_dev.plan_keys()] == ["default"]
    assert dagster_dev.runs() == []


@SHARED
def test_materialize_one_documents_shard_and_read_its_metadata(
    dagster_dev: DagsterDev, shared_workspace: Workspace
) -> None:
    shard = shared_workspace.busiest_shard()
    other = next(s for s in SHARDS if s != shard)
    run_id = dagster_dev.launch_assets(["sources", "documents"], shard, tags={"test": "harness"})
    run = dagster_dev.wait_for_run(run_id)
    assert run.status == "SUCCESS", dagster_dev.run_errors(run_id)
    metadata = dagster_dev.latest_materialization("documents", shard)
    assert metadata is not None and metadata["_run_id"] == run_id and metadata["_partition"] == shard
    assert metadata["failed"] == 0 and metadata["parsed"] >= 1 and metadata["unchanged"] == 0
    assert dagster_dev.latest_materialization("documents", other) is None  # only one shard ran

    (listed,) = [r for r in dagster_dev.runs() if r.run_id == run_id]
    assert listed.partition == shard and listed.tags["test"] == "harness"
    assert listed.job_name == "__ASSET_JOB" and sorted(listed.assets) == ["documents", "sources"]
    assert dagster_dev.wait_until_idle(quiet=2, timeout=60)[0].run_id == run_id


@SHARED
def test_the_sensor_turns_on_and_off(dagster_dev: DagsterDev) -> None:
    assert dagster_dev.start_sensor("ingest_sensor") == "RUNNING"
    assert dagster_dev.sensors()["ingest_sensor"] == "RUNNING"
    assert dagster_dev.stop_sensor("ingest_sensor") == "STOPPED"
    assert dagster_dev.sensors()["ingest_sensor"] == "STOPPED"


@SHARED
def test_backfill_of_one_shard_runs_and_the_instance_goes_idle(
    dagster_dev: DagsterDev, shared_workspace: Workspace
) -> None:
    shard = shared_workspace.busiest_shard()
    backfill_id = dagster_dev.backfill(["sources", "documents"], [shard])
    runs = dagster_dev.wait_until_idle(quiet=3, timeout=180)
    (run,) = [r for r in runs if r.tags.get("dagster/backfill") == backfill_id]
    assert run.status == "SUCCESS"  # a UI backfill runs one run per stretch of partitions: here one
    assert run.covers == (shard, shard)
    assert dagster_dev.backfills()[backfill_id] == "COMPLETED_SUCCESS"
    assert dagster_dev.latest_materialization("documents", shard)["_run_id"] == run.run_id


def test_seeded_store_shows_ingest_runs_and_check_results(
    start_dagster_dev: Callable[..., DagsterDev],
) -> None:
    dev = start_dagster_dev(seed=True)
    (key,) = dev.plan_keys()
    assert key.startswith("default-")
    runs = dev.runs()
    # `ingest run`: a documents_job and a chunks_job per stretch of consecutive shards with files.
    jobs = sorted(r.job_name for r in runs)
    assert set(jobs) == {"chunks_job", "documents_job"} and jobs.count("chunks_job") == jobs.count(
        "documents_job"
    )
    chunks = [r for r in runs if r.job_name == "chunks_job"]
    assert all(r.status == "SUCCESS" for r in chunks)
    ranges = {(r.tags[RANGE_START_TAG], r.tags[RANGE_END_TAG]): r for r in chunks}
    (low, high), run = min(ranges.items())
    shard = low.split("|")[1]
    metadata = dev.latest_materialization("child_chunks", f"{key}|{shard}")
    assert low.startswith(f"{key}|") and high.startswith(f"{key}|")
    assert metadata is not None and metadata["_run_id"] == run.run_id
    assert metadata["plan"] == key  # each partition of the range run carries its own shard's figures
    checks = {c.name: c for c in dev.check_executions("child_chunks")}
    assert set(checks) == {"contract"}
    rules = ("unique_ids", "exact_slices", "budgets", "no_orphans", "parent_covers_children")
    assert all(c.status == "SUCCEEDED" and c.severity == "ERROR" and c.passed for c in checks.values())
    assert all(checks["contract"].metadata[rule] == 0 for rule in rules)

    # A chunk asset alone launches with its own checks (checks are attached per asset).
    run_id = dev.launch_assets(["parent_chunks"], f"{key}|03")
    assert dev.wait_for_run(run_id).status == "SUCCESS", dev.run_errors(run_id)


@SHARED
def test_reload_after_a_plans_edit_reports_a_bad_plan_then_loads_the_fixed_one(
    dagster_dev: DagsterDev, shared_workspace: Workspace
) -> None:
    plans_file = shared_workspace.plans_file
    good = plans_file.read_text()
    plans_file.write_text(good.replace("chunk_size: 256", "chunk_size: -5"))
    with pytest.raises(DagsterDevError, match=r"PlanError: .*plan 'default', route 'chat', child chunker"):
        dagster_dev.reload()
    plans_file.write_text(good.replace("chunk_size: 256", "chunk_size: 200"))
    assert set(dagster_dev.reload()) == ASSETS


@SHARED
def test_stop_leaves_no_process_of_the_group(dagster_dev: DagsterDev) -> None:
    """The module's last test: it stops the shared instance (the fixture's stop then does nothing)."""
    pgid = dagster_dev.process.pid
    members = group_pids(pgid)
    assert len(members) >= 4, members  # dagster dev, code server, webserver, daemon (at least)
    started = time.monotonic()
    dagster_dev.stop()
    assert group_pids(pgid) == [] and time.monotonic() - started < 25
    assert not [pid for pid in members if _alive(pid)]
    assert dagster_dev.stop() == 0.0  # idempotent
