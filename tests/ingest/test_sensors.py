"""``ingest_sensor``, evaluated with build_sensor_context on a real ephemeral instance and store."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

import pytest
import yaml
from dagster import (
    AddDynamicPartitionsRequest,
    AssetObservation,
    DagsterInstance,
    DagsterRunStatus,
    RunRequest,
    SensorResult,
    SkipReason,
    build_sensor_context,
    instance_for_test,
)
from dagster._core.test_utils import create_run_for_test

from chunking import Document
from ingest_assets.defs import build_definitions, sensors
from ingest_assets.defs.jobs import CHUNK_ASSETS, DOCUMENT_ASSETS
from ingest_assets.defs.partitions import PLAN_DIMENSION
from ingest_assets.defs.private import backfill_partitions
from ingest_assets.defs.resources import DuckDBStore
from ingest_assets.defs.sensors import (
    AFTER_TAG,
    AUTOMATION_TAG,
    MAX_ATTEMPTS,
    RANGE_END_TAG,
    RANGE_START_TAG,
    WORK_TAG,
    build_sensors,
    queues_after,
    range_tags,
)
from ingest_assets.engine import SHARDS, shard_of
from ingest_assets.engine.keys import chunk_partition, plan_and_shard, stretches
from ingest_assets.plans import PlanError
from ingest_assets.settings import Settings
from ingest_assets.store import invariants
from tests.ingest.conftest import Pipeline, plan_spec

# The sensors as the code location defines them (the interval plays no part in a direct tick).
SENSORS = {sensor.name: sensor for sensor in build_sensors(Settings.model_construct())}
ROOT = Path(__file__).resolve().parents[2]


def _run_queue(instance_file: str) -> dict[str, object]:
    """The run queue and concurrency settings of one of the project's instance files."""
    config = yaml.safe_load((ROOT / instance_file).read_text())
    return {key: config[key] for key in ("run_coordinator", "concurrency")}


def _tick(pipeline: Pipeline) -> SensorResult | SkipReason:
    store = DuckDBStore(
        database=str(pipeline.db), inbox=str(pipeline.inbox), plans_file=str(pipeline.plans_file)
    )
    try:  # the asset graph backfills are made from (an invalid plans file has none)
        repository = build_definitions(
            Settings(
                database=str(pipeline.db), inbox=str(pipeline.inbox), plans_file=str(pipeline.plans_file)
            )
        ).get_repository_def()
    except PlanError:
        repository = None
    context = build_sensor_context(
        instance=pipeline.instance, resources={"store": store}, repository_def=repository
    )
    return SENSORS["ingest_sensor"](context)


def _partitions(request: RunRequest) -> str:
    """A request's partition, or its range as ``first..last``."""
    if request.partition_key is not None:
        return request.partition_key
    return f"{request.tags[RANGE_START_TAG]}..{request.tags[RANGE_END_TAG]}"


def _backfill_partitions(request: RunRequest) -> list[str]:
    """The partitions a backfill request builds (every chunk asset of each of them)."""
    found = backfill_partitions(request)
    partitions = sorted({partition for _, partition in found})
    assert found == sorted((asset, p) for asset in CHUNK_ASSETS for p in partitions)
    return partitions


def _job(request: RunRequest) -> str:
    """The job whose assets a run request selects (the sensor targets assets, not jobs)."""
    selected = sorted(key.to_user_string() for key in request.asset_selection or ())
    jobs = {"documents_job": sorted(DOCUMENT_ASSETS), "chunks_job": sorted(CHUNK_ASSETS)}
    (job,) = [name for name, assets in jobs.items() if assets == selected]
    return job


def _requests(result: SensorResult | SkipReason) -> list[tuple[str, str, str]]:
    """Each request as (job, partitions, run key); a backfill as ("backfill", its partitions,
    its work tag)."""
    runs = result.run_requests if isinstance(result, SensorResult) else []
    return sorted(
        ("backfill", ",".join(_backfill_partitions(r)), r.tags[WORK_TAG])
        if r.asset_graph_subset is not None
        else (_job(r), _partitions(r), r.run_key)
        for r in runs
    )


def _execute(pipeline: Pipeline, result: SensorResult | SkipReason) -> int:
    """Run what a tick asked for, in this process, as the daemon would (partition, tags), a
    backfill's partitions in ranges."""
    defs = build_definitions(
        Settings(database=str(pipeline.db), inbox=str(pipeline.inbox), plans_file=str(pipeline.plans_file))
    )
    for request in result.dynamic_partitions_requests if isinstance(result, SensorResult) else ():
        pipeline.instance.add_dynamic_partitions(PLAN_DIMENSION, list(request.partition_keys))
    runs = result.run_requests if isinstance(result, SensorResult) else []
    for request in runs:
        if request.asset_graph_subset:
            # A backfill: the daemon launches a run per stretch of partitions (the assets'
            # single-run backfill policy; tests/daemon shows it), as here.
            by_plan: dict[str, list[str]] = {}
            for partition in _backfill_partitions(request):
                plan, shard = plan_and_shard(partition)
                by_plan.setdefault(plan, []).append(shard)
            for plan, shards in by_plan.items():
                for run in stretches(shards):
                    first, last = chunk_partition(plan, run[0]), chunk_partition(plan, run[-1])
                    single = first == last
                    outcome = defs.resolve_job_def("chunks_job").execute_in_process(
                        instance=pipeline.instance,
                        partition_key=first if single else None,
                        tags={**request.tags, **({} if single else range_tags(first, last))},
                    )
                    assert outcome.success
            continue
        outcome = defs.resolve_job_def(_job(request)).execute_in_process(
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


def _ingested(pipeline: Pipeline) -> None:
    """The inbox ingested and the sensor quiet: the state the tests below start from. ``ingest
    run`` does the work in a few range runs (the sensor's own first pass over a new store, with
    the new key's backfill, is what the first test checks); the ticks
    after it run what only the sensor asks for (partitions ``ingest run`` had no work in)."""
    pipeline.run()
    _settle(pipeline)


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
    _ingested(pipeline)
    edited = pipeline.inbox / "getting-started.md"
    edited.write_text(edited.read_text() + "\n\nOne more paragraph.\n")
    (docs,) = _requests(_tick(pipeline))
    assert docs[0] == "documents_job" and ".." not in docs[1]  # one shard: a one-partition run
    pipeline.engine().run("sources", [docs[1]])
    pipeline.engine().run("documents", [docs[1]])
    (chunks,) = _requests(_tick(pipeline))
    assert chunks[0] == "chunks_job" and chunks[1].endswith(f"|{docs[1]}") and ".." not in chunks[1]


@pytest.mark.parametrize("instance_file", ["dagster.yaml", "dagster.postgres.yaml"])
def test_the_projects_run_queues_hold_chunk_runs_behind_their_documents_run(instance_file: str) -> None:
    with instance_for_test(overrides=_run_queue(instance_file)) as instance:
        assert queues_after(instance)
    assert not queues_after(DagsterInstance.ephemeral())  # no run queue: chunks wait for a tick


def test_an_edits_chunk_runs_are_queued_behind_its_documents_run(
    pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a run queue like the project's, the tick that sees an edit also asks for the edited
    shard's chunk run of each live plan key, tagged like the documents run and at a lower
    priority (the queue starts it when the documents run ends); run in that order they leave
    nothing pending. (The ephemeral instance has no run queue, so the test says it has one:
    the test above checks the project's instance files do; tests/daemon runs the queue.)"""
    monkeypatch.setattr(sensors, "queues_after", lambda instance: True)
    _ingested(pipeline)
    pipeline.write_plans(default=plan_spec(), building=plan_spec(child=120))  # a key not live yet
    edited = pipeline.inbox / "getting-started.md"
    edited.write_text(edited.read_text() + "\n\nOne more paragraph about pears.\n")
    shard = shard_of(Document.node_id_for(edited.resolve().as_uri()))
    result = _tick(pipeline)
    assert isinstance(result, SensorResult)
    docs, *chunks = result.run_requests  # the queue starts them in this order
    assert (_job(docs), _partitions(docs)) == ("documents_job", shard)
    keys = [plan.key for plan in pipeline.plans()]
    (live,), (building,) = (
        [key for key in keys if key.startswith(name)] for name in ("default-", "building-")
    )
    # The live keys' chunk runs; a key that does not serve yet is built by a backfill later.
    assert [(_job(r), _partitions(r)) for r in chunks] == [("chunks_job", f"{live}|{shard}")]
    assert {r.tags[AFTER_TAG] for r in result.run_requests} == {docs.tags[AFTER_TAG]}
    assert all(r.tags["dagster/priority"] == "-1" for r in chunks) and "dagster/priority" not in docs.tags
    assert len({r.run_key for r in result.run_requests}) == 2
    assert _requests(_tick(pipeline)) == _requests(result)  # same work, same run keys
    _execute(pipeline, result)
    assert pipeline.engine().pending().chunks.keys() == {building}  # the live key has no work left
    texts = pipeline.rows(
        "SELECT DISTINCT plan_key FROM current_chunks WHERE level = 0 AND text LIKE '%about pears%'"
    )
    assert texts == [(live,)]  # the new paragraph served


def test_a_returning_plan_key_is_chunked_again(pipeline: Pipeline) -> None:
    """A -> B -> A: each change is one backfill of the key (once its partitions are registered)
    with a work key never used before; the old key serves until it is done."""
    _ingested(pipeline)
    seen: set[str] = set()
    for child in (150, 200, 150):
        pipeline.write_plans(default=plan_spec(child=child))
        first = _tick(pipeline)
        if not _requests(first):  # a key never seen: its partitions are registered first
            assert first.dynamic_partitions_requests
            _execute(pipeline, first)
        served = pipeline.rows("SELECT DISTINCT plan_key FROM current_chunks")
        requests = _requests(_tick(pipeline))
        assert requests and all(job == "backfill" for job, _, _ in requests)
        assert pipeline.rows("SELECT DISTINCT plan_key FROM current_chunks") == served
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
    _ingested(pipeline)
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


def _files_in_shards_apart(pipeline: Pipeline, count: int) -> dict[str, Path]:
    """Write ``count`` new Markdown files into the inbox, in shards no two of them adjacent;
    the files by shard. A document's shard follows its absolute path, so the names are
    searched for here rather than taken from the sample (whose shards vary with tmp_path)."""
    chosen: dict[str, Path] = {}
    for index in range(10_000):
        path = (pipeline.inbox / f"spread-{index}.md").resolve()
        shard = shard_of(Document.node_id_for(path.as_uri()))
        if all(abs(SHARDS.index(shard) - SHARDS.index(other)) > 1 for other in chosen):
            path.write_text(f"# Spread {index}\n\nA file placed in shard {shard}.\n")
            chosen[shard] = path
            if len(chosen) == count:
                return dict(sorted(chosen.items()))
    raise AssertionError(f"no {count} shards apart found among 10000 names")


def _edit(paths: Iterable[Path]) -> None:
    """Append a paragraph to each file: new text, so a new version of each document."""
    for path in paths:
        path.write_bytes(path.read_bytes() + b"\n\nAn edit.\n")


def test_runs_cover_only_the_partitions_with_work(pipeline: Pipeline) -> None:
    """Edits in shards apart from each other launch one run each: no run, so no
    materialization, of a shard between them that has nothing to do."""
    files = _files_in_shards_apart(pipeline, 2)
    _ingested(pipeline)
    _edit(files.values())
    shards = list(files)
    docs = _requests(_tick(pipeline))
    assert [(job, partition) for job, partition, _ in docs] == [("documents_job", s) for s in shards]
    _execute(pipeline, _tick(pipeline))
    (plan,) = [p.key for p in pipeline.plans()]
    chunks = _requests(_tick(pipeline))
    assert [(job, partition) for job, partition, _ in chunks] == [
        ("chunks_job", f"{plan}|{s}") for s in shards
    ]


def test_plans_sensor_lists_a_new_key_and_drops_one_that_never_served(pipeline: Pipeline) -> None:
    """Without ingest_sensor: a new key's partitions are listed at once (a backfill from the UI
    can build them), a key given up before it served loses them, each key's state change is
    observed on its partitions, and nothing is launched."""
    store = DuckDBStore(
        database=str(pipeline.db), inbox=str(pipeline.inbox), plans_file=str(pipeline.plans_file)
    )
    cursor: list[str | None] = [None]

    def tick() -> dict[str, set[str]]:
        """One tick, applied as the daemon would; the plan states it observed, by key."""
        context = build_sensor_context(
            instance=pipeline.instance, resources={"store": store}, cursor=cursor[0]
        )
        result = SENSORS["plans_sensor"](context)
        cursor[0] = context.cursor
        for request in result.dynamic_partitions_requests if isinstance(result, SensorResult) else ():
            if isinstance(request, AddDynamicPartitionsRequest):
                pipeline.instance.add_dynamic_partitions(PLAN_DIMENSION, list(request.partition_keys))
            else:
                for key in request.partition_keys:
                    pipeline.instance.delete_dynamic_partition(PLAN_DIMENSION, key)
        assert not isinstance(result, SensorResult) or not result.run_requests
        observed: dict[str, set[str]] = {}
        for event in result.asset_events if isinstance(result, SensorResult) else ():
            if isinstance(event, AssetObservation) and "plan_state" in event.metadata:  # not a forecast
                observed.setdefault(event.partition.split("|")[0], set()).add(
                    event.metadata["plan_state"].value
                )
        return observed

    pipeline.run()
    (served,) = [p.key for p in pipeline.plans()]
    assert tick() == {served: {"live"}}
    pipeline.write_plans(default=plan_spec(child=150))
    (abandoned,) = [p.key for p in pipeline.plans()]
    tick()
    assert set(pipeline.instance.get_dynamic_partitions(PLAN_DIMENSION)) == {served, abandoned}
    pipeline.engine().run("parent_chunks", ["00"], abandoned)  # it starts building, then is given up
    assert {key: {s.split(" ")[0] for s in v} for key, v in tick().items()} == {abandoned: {"building"}}
    assert isinstance(tick(), dict) and tick() == {}
    pipeline.write_plans(default=plan_spec(child=120))
    (wanted,) = [p.key for p in pipeline.plans()]
    tick()
    pipeline.engine().run("parent_chunks", ["00"], wanted)
    tick()
    assert set(pipeline.instance.get_dynamic_partitions(PLAN_DIMENSION)) == {served, wanted}
    pipeline.engine().run_pending()
    changed = {key: {s.split(" ")[0] for s in v} for key, v in tick().items()}
    assert changed == {served: {"retired"}, wanted: {"live"}}


class _Warnings(logging.Handler):
    """The warnings a tick logs (its ``context.log``), as text."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_skipped_inbox_entries_are_warned_once_per_set(pipeline: Pipeline) -> None:
    """A link or a pipe in the inbox is no work, so no run's scan names it: the tick warns of
    the skipped entries itself, once per distinct set (the cursor holds its digest), through
    the real evaluation the daemon makes."""
    _ingested(pipeline)
    store = DuckDBStore(
        database=str(pipeline.db), inbox=str(pipeline.inbox), plans_file=str(pipeline.plans_file)
    )
    repository = build_definitions(
        Settings(database=str(pipeline.db), inbox=str(pipeline.inbox), plans_file=str(pipeline.plans_file))
    ).get_repository_def()
    cursor: list[str | None] = [None]

    def tick() -> list[str]:
        """One tick as the daemon evaluates it, its cursor kept; the warnings it logged."""
        context = build_sensor_context(
            instance=pipeline.instance,
            resources={"store": store},
            cursor=cursor[0],
            repository_def=repository,
        )
        handler = _Warnings()
        context.log.addHandler(handler)
        data = SENSORS["ingest_sensor"].evaluate_tick(context)
        assert not data.run_requests  # a skipped entry is no work
        cursor[0] = data.cursor
        return handler.messages

    assert tick() == [] and not cursor[0]  # nothing skipped: nothing said
    inbox = pipeline.inbox.resolve()
    (inbox / "dangling.md").symlink_to(inbox / "gone.md")
    os.mkfifo(inbox / "pipe")
    (warning,) = tick()
    assert "2 inbox entries are skipped" in warning
    assert f"{inbox / 'dangling.md'}: a link (links are never followed" in warning
    assert f"{inbox / 'pipe'}: not a regular file (a pipe, socket or device)" in warning
    first = cursor[0]
    assert first and tick() == [] and tick() == [] and cursor[0] == first  # the same set: quiet
    (inbox / "linked").symlink_to(inbox, target_is_directory=True)
    (warning,) = tick()
    assert "3 inbox entries are skipped" in warning and f"{inbox / 'linked'}: a link to a folder" in warning
    for name in ("dangling.md", "pipe", "linked"):
        (inbox / name).unlink()
    assert tick() == [] and cursor[0] == ""
    (inbox / "dangling.md").symlink_to(inbox / "gone.md")
    os.mkfifo(inbox / "pipe")
    (warning,) = tick()  # the set is back: said again
    assert "2 inbox entries are skipped" in warning and cursor[0] == first
    # A name that is not UTF-8 failed every tick ('utf-8' codec can't encode ...): it is one
    # more entry named, its byte escaped.
    with open(os.path.join(os.fsencode(inbox), b"caf\xe9.md"), "wb") as handle:
        handle.write(b"# Latin-1 name\n")
    (warning,) = tick()
    assert "3 inbox entries are skipped" in warning
    assert f"{inbox}/caf\\xe9.md: a name that is not UTF-8 (rename the file)" in warning
