"""The inbox and plan sensors, evaluated with build_sensor_context on a real ephemeral instance."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml
from dagster import DagsterInstance, build_sensor_context

from ingest_assets.defs.resources import DuckDBStore
from ingest_assets.defs.sensors import inbox_sensor, plan_sensor, shard_digests
from ingest_assets.plans import _plans_at
from tests.ingest.conftest import SAMPLE, plan_spec


def _store(tmp_path: Path, inbox: Path, plans: Path) -> DuckDBStore:
    return DuckDBStore(database=str(tmp_path / "i.duckdb"), inbox=str(inbox), plans_file=str(plans))


def test_inbox_sensor_requests_only_changed_shards(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    shutil.copytree(SAMPLE, inbox)
    store = _store(tmp_path, inbox, tmp_path / "plans.yaml")
    instance = DagsterInstance.ephemeral()

    first = inbox_sensor(build_sensor_context(instance=instance, cursor=None, resources={"store": store}))
    assert sorted(r.partition_key for r in first.run_requests) == [f"{i:02d}" for i in range(8)]
    cursor = first.cursor
    assert json.loads(cursor) == shard_digests(inbox)

    quiet = inbox_sensor(build_sensor_context(instance=instance, cursor=cursor, resources={"store": store}))
    assert quiet.run_requests == [] and quiet.cursor == cursor

    edited = inbox / "getting-started.md"
    edited.write_text(edited.read_text() + "\nmore\n")
    changed = inbox_sensor(build_sensor_context(instance=instance, cursor=cursor, resources={"store": store}))
    (request,) = changed.run_requests
    assert request.partition_key == shard_digests_changed(cursor, changed.cursor)
    assert request.job_name in (None, "documents_job")


def shard_digests_changed(before: str, after: str) -> str:
    old, new = json.loads(before), json.loads(after)
    (shard,) = [s for s in new if old[s] != new[s]]
    return shard


def test_plan_sensor_registers_new_keys_and_backfills_them(tmp_path: Path) -> None:
    plans = tmp_path / "plans.yaml"
    plans.write_text(yaml.safe_dump({"plans": {"default": plan_spec()}}))
    _plans_at.cache_clear()
    store = _store(tmp_path, SAMPLE, plans)
    instance = DagsterInstance.ephemeral()

    result = plan_sensor(build_sensor_context(instance=instance, cursor=None, resources={"store": store}))
    (key,) = json.loads(result.cursor)
    (add,) = result.dynamic_partitions_requests
    assert add.partitions_def_name == "plan" and list(add.partition_keys) == [key]
    (request,) = result.run_requests
    assert request.tags["dagster/asset_partition_range_start"] == f"{key}|00"
    assert request.tags["dagster/asset_partition_range_end"] == f"{key}|07"

    instance.add_dynamic_partitions("plan", [key])  # what the daemon does with the request
    again = plan_sensor(
        build_sensor_context(instance=instance, cursor=result.cursor, resources={"store": store})
    )
    assert again.run_requests == [] and again.dynamic_partitions_requests == []

    plans.write_text(yaml.safe_dump({"plans": {"default": plan_spec(child=150)}}))
    _plans_at.cache_clear()
    changed = plan_sensor(
        build_sensor_context(instance=instance, cursor=again.cursor, resources={"store": store})
    )
    (new_key,) = json.loads(changed.cursor)
    assert new_key != key and new_key.startswith("default-")
    kinds = {type(r).__name__: list(r.partition_keys) for r in changed.dynamic_partitions_requests}
    assert kinds == {"AddDynamicPartitionsRequest": [new_key], "DeleteDynamicPartitionsRequest": [key]}
    assert len(changed.run_requests) == 1


def test_plan_sensor_skips_an_invalid_plans_file(tmp_path: Path) -> None:
    plans = tmp_path / "plans.yaml"
    plans.write_text("plans: {default: {routes: {'*': {parent: {strategy: section, size: 0}}}}}")
    _plans_at.cache_clear()
    result = plan_sensor(
        build_sensor_context(
            instance=DagsterInstance.ephemeral(), resources={"store": _store(tmp_path, SAMPLE, plans)}
        )
    )
    assert "invalid" in str(result.skip_message)
