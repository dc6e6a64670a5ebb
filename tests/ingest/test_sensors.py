"""``ingest_sensor``, evaluated with build_sensor_context on a real ephemeral instance and store."""

from __future__ import annotations

import os
import shutil

from dagster import DagsterRunStatus, RunRequest, SensorResult, SkipReason, build_sensor_context
from dagster._core.test_utils import create_run_for_test

from ingest_assets.defs import build_definitions
from ingest_assets.defs.partitions import PLAN_DIMENSION
from ingest_assets.defs.resources import DuckDBStore
from ingest_assets.defs.sensors import AUTOMATION_TAG, MAX_ATTEMPTS, WORK_TAG, ingest_sensor
from ingest_assets.settings import Settings
from ingest_assets.store import invariants
from tests.ingest.conftest import Pipeline, plan_spec

RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"


def _tick(pipeline: Pipeline) -> SensorResult | SkipReason:
    store = DuckDBStore(
        database=str(pipeline.db), inbox=str(pipeline.inbox), plans_file=str(pipeline.plans_file)
    )
    context = build_sensor_context(instance=pipeline.instance, resources={"store": store})
    return ingest_sensor(context)


def _partitions(request: RunRequest) -> str:
    """A request's partition, or its range as ``first..last``."""
    if request.partition_key is not None:
        return request.partition_key
    return f"{request.tags[RANGE_START]}..{request.tags[RANGE_END]}"


def _requests(result: SensorResult | SkipReason) -> list[tuple[str, str, str]]:
    runs = result.run_requests if isinstance(result, SensorResult) else []
    return sorted((r.job_name, _partitions(r), r.run_key) for r in runs)


def _execute(pipeline: Pipeline, result: SensorResult | SkipReason) -> int:
    """Run what a tick asked for, in this process, as the daemon would (partition, tags)."""
    defs = build_definitions(
        Settings(database=str(pipeline.db), inbox=str(pipeline.inbox), plans_file=str(pipeline.plans_file))
    )
    for request in result.dynamic_partitions_requests if isinstance(result, SensorResult) else ():
        pipeline.instance.add_dynamic_partitions(PLAN_DIMENSION, list(request.partition_keys))
    runs = result.run_requests if isinstance(result, SensorResult) else []
    for request in runs:
        outcome = defs.resolve_job_def(request.job_name).execute_in_process(
            instance=pipeline.instance, partition_key=request.partition_key, tags=request.tags
        )
        assert outcome.success
    return len(runs)


def _settle(pipeline: Pipeline, ticks: int = 6) -> None:
    """Tick and run what is asked until nothing is (at most ``ticks`` times)."""
    for _ in range(ticks):
        if not _execute(pipeline, _tick(pipeline)):
            return
    raise AssertionError("the sensor kept asking for runs")


def _skip(result: SensorResult | SkipReason) -> str:
    reason = result.skip_message if isinstance(result, SkipReason) else result.skip_reason
    return getattr(reason, "skip_message", reason) or ""


def test_a_new_store_gets_one_documents_run_over_its_shards_then_nothing(pipeline: Pipeline) -> None:
    first = _tick(pipeline)
    jobs = {job for job, _, _ in _requests(first)}
    assert jobs == {"documents_job"} and len(_requests(first)) >= 1
    (request,) = first.dynamic_partitions_requests
    assert list(request.partition_keys) == [p.key for p in pipeline.plans()]
    assert _requests(_tick(pipeline)) == _requests(first)  # same work, same run keys: launched once
    _settle(pipeline)
    quiet = _tick(pipeline)
    assert _requests(quiet) == [] and _skip(quiet) == "nothing pending"


def test_an_edit_asks_for_its_shard_then_its_chunks(pipeline: Pipeline) -> None:
    _settle(pipeline)
    edited = pipeline.inbox / "getting-started.md"
    edited.write_text(edited.read_text() + "\n\nOne more paragraph.\n")
    (docs,) = _requests(_tick(pipeline))
    assert docs[0] == "documents_job" and ".." not in docs[1]  # one shard: a one-partition run
    pipeline.engine().run("sources", [docs[1]])
    pipeline.engine().run("documents", [docs[1]])
    (chunks,) = _requests(_tick(pipeline))
    assert chunks[0] == "chunks_job" and chunks[1].endswith(f"|{docs[1]}") and ".." not in chunks[1]


def test_a_returning_plan_key_is_chunked_again(pipeline: Pipeline) -> None:
    """A -> B -> A -> B: each change is pending work with a run key never used before."""
    _settle(pipeline)
    seen: set[str] = set()
    for child in (150, 200, 150, 200):
        pipeline.write_plans(default=plan_spec(child=child))
        requests = _requests(_tick(pipeline))
        assert requests and all(job == "chunks_job" for job, _, _ in requests)
        keys = {key for _, _, key in requests}
        assert not keys & seen
        seen |= keys
        parents = pipeline.rows("SELECT count(*) FROM chunk_sets WHERE level = 1")
        _settle(pipeline)
        assert _requests(_tick(pipeline)) == []
        live = [p.key for p in pipeline.plans()]
        assert pipeline.rows("SELECT DISTINCT plan_key FROM current_chunks") == [(live[0],)]
        assert pipeline.rows("SELECT count(*) FROM chunk_sets WHERE level = 1") == parents  # reused
        assert invariants.coverage(pipeline.store) == []


def test_an_invalid_plans_file_launches_nothing_and_says_why(pipeline: Pipeline) -> None:
    pipeline.plans_file.write_text("plans:\n  default:\n    routes: {'*': {parent: {strategy: nope}}}\n")
    result = _tick(pipeline)
    assert _requests(result) == [] and "plans file is invalid" in _skip(result)


def test_a_failed_run_is_retried_then_given_up(pipeline: Pipeline) -> None:
    first = _requests(_tick(pipeline))
    job, partition, run_key = first[0]
    work = run_key.split(":")[2]
    for attempt in range(1, MAX_ATTEMPTS + 1):
        create_run_for_test(pipeline.instance, job_name=job, status=DagsterRunStatus.FAILURE,
                            tags={AUTOMATION_TAG: "true", WORK_TAG: work})  # fmt: skip
        retried = {p: k for _, p, k in _requests(_tick(pipeline))}
        if attempt < MAX_ATTEMPTS:
            assert retried[partition].endswith(f":{attempt}")
        else:
            assert partition not in retried
    create_run_for_test(pipeline.instance, job_name=job, status=DagsterRunStatus.STARTED,
                        tags={AUTOMATION_TAG: "true", WORK_TAG: "other"})  # fmt: skip
    waiting = _tick(pipeline)
    assert _requests(waiting) == [] and _skip(waiting).startswith("waiting for run")


def test_a_dangling_link_and_a_fifo_do_not_stop_a_tick(pipeline: Pipeline) -> None:
    _settle(pipeline)
    (pipeline.inbox / "dangling.md").symlink_to(pipeline.inbox / "gone.md")
    os.mkfifo(pipeline.inbox / "pipe")
    shutil.copyfile(pipeline.inbox / "getting-started.md", pipeline.inbox / "copy.md")
    (request,) = _requests(_tick(pipeline))
    assert request[0] == "documents_job"


def test_retired_plan_keys_keep_their_partitions(pipeline: Pipeline) -> None:
    pipeline.run()
    old = [p.key for p in pipeline.plans()]
    pipeline.write_plans(default=plan_spec(child=150))
    pipeline.run()
    _tick(pipeline)
    keys = set(pipeline.instance.get_dynamic_partitions(PLAN_DIMENSION))
    assert set(old) < keys and len(keys) == 2
