"""Worker processes: the same store as inline work, and no lost batch when a worker dies."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from ingest_assets.engine import IngestEngine, workers
from ingest_assets.plans import load_plans
from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore
from tests.ingest.conftest import SAMPLE

ROOT = Path(__file__).resolve().parents[2]
PLANS = """plans:
  default:
    routes:
      chat:
        parent: {strategy: turn-window, chunk_size: 300, tokenizer: cl100k_base}
        child: {strategy: recursive, chunk_size: 60, tokenizer: cl100k_base}
      "*":
        parent: {strategy: section, chunk_size: 300, tokenizer: cl100k_base}
        child: {strategy: section, chunk_size: 60, tokenizer: cl100k_base}
"""


def ingest_sample(root: Path, database: str, plans: str = PLANS) -> IngestStore:
    """Ingest the sample (in ``root``: ids follow paths) into a new store under ``plans`` (YAML)."""
    inbox = root / "inbox"
    if not inbox.exists():
        shutil.copytree(SAMPLE, inbox)
    plans_file = root / "plans.yaml"
    plans_file.write_text(plans)
    store = IngestStore(root / database)
    IngestEngine(store, inbox, load_plans(plans_file)).run_pending()
    return store


def _ingest(root: Path, database: str) -> list[tuple[Any, ...]]:
    """Ingest the sample into a new store (see :func:`ingest_sample`); every chunk and graph node."""
    store = ingest_sample(root, database)
    chunks = store.query(
        'SELECT id, set_key, "index", text, token_count, provenance::VARCHAR FROM chunks ORDER BY id'
    )
    nodes = store.query(
        "SELECT id, label, json_merge_patch(properties, '{\"created_at\": null}')::VARCHAR "
        "FROM graph_node_rows ORDER BY id"
    )  # every property but the time the chunk was made
    return chunks + nodes


def test_workers_store_exactly_what_inline_work_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INGEST_WORKERS", "1")
    inline = _ingest(tmp_path, "inline.duckdb")
    monkeypatch.setenv("INGEST_WORKERS", "2")
    monkeypatch.setattr(workers, "PARALLEL_MIN_BYTES", 0)  # the sample is small: use the pool anyway
    parallel = _ingest(tmp_path, "parallel.duckdb")
    assert parallel == inline
    assert len(inline) > 100
    assert workers._pool is not None, "the pool was never used"


def _die_in_a_worker(parent: int) -> int:
    """Kill the worker process it runs in (as the OOM killer would); inline, return the pid."""
    if os.getpid() != parent:
        os._exit(9)
    return parent


def test_a_dead_worker_costs_no_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INGEST_WORKERS", "2")
    parent = os.getpid()
    batches = [(n, [parent, parent]) for n in range(3)]
    results = list(
        workers.run_batches(_die_in_a_worker, batches, total_bytes=1 << 40, settings=Settings.from_env())
    )
    assert results == [(n, [parent, parent]) for n in range(3)]


def test_inline_below_the_threshold_and_with_one_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    parent = os.getpid()
    monkeypatch.setenv("INGEST_WORKERS", "2")
    assert list(
        workers.run_batches(_die_in_a_worker, [("a", [parent])], total_bytes=10, settings=Settings.from_env())
    ) == [("a", [parent])]
    monkeypatch.setenv("INGEST_WORKERS", "1")
    assert list(
        workers.run_batches(
            _die_in_a_worker, [("a", [parent])], total_bytes=1 << 40, settings=Settings.from_env()
        )
    ) == [("a", [parent])]


def test_a_bad_worker_count_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INGEST_WORKERS", "many")
    with pytest.raises(ValueError, match="INGEST_WORKERS='many' is not a whole number of processes"):
        Settings.from_env()


def test_a_script_without_a_main_guard_runs_once(tmp_path: Path) -> None:
    """Workers never import the caller's script, so an unguarded script is not run again in them."""
    marker = tmp_path / "runs.txt"
    script = tmp_path / "unguarded.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import os
            from ingest_assets.engine import workers
            from ingest_assets.settings import Settings
            from ingest_assets.engine.tasks import ParseTask, parse_source
            from chunking.parsers import ParseLimits

            with open({str(marker)!r}, "a") as handle:
                handle.write("run\\n")
            workers.PARALLEL_MIN_BYTES = 0
            tasks = [
                ParseTask({str(SAMPLE / "getting-started.md")!r}, "mem://a", "k", ParseLimits()),
                ParseTask({str(SAMPLE / "field-notes.html")!r}, "mem://b", "k", ParseLimits()),
            ]
            ((_, results),) = workers.run_batches(parse_source, [("batch", tasks)], 1 << 30, Settings())
            print(sorted(result.kind for result in results))
            """
        )
    )
    env = {**os.environ, "INGEST_WORKERS": "2", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['html', 'markdown']"
    assert "Traceback" not in done.stderr
    assert marker.read_text() == "run\n"


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (not ended, not a zombie). A process may end between any two
    looks, so each look that finds it gone says so."""
    try:
        os.kill(pid, 0)
        if not Path("/proc/self/stat").exists():  # no /proc: the signal check is all there is
            return True
        return not Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[-1].startswith("Z")
    except (ProcessLookupError, FileNotFoundError):
        return False


def test_workers_of_a_killed_run_exit(tmp_path: Path) -> None:
    """A SIGKILLed owner cannot shut its pool down: its workers must notice and exit."""
    script = tmp_path / "owner.py"
    script.write_text(
        textwrap.dedent(
            """
            import os, sys, time
            from ingest_assets.engine import workers
            from ingest_assets.settings import Settings
            workers.PARALLEL_MIN_BYTES = 0
            batches = [("warm", [0, 0])]
            list(workers.run_batches(abs, batches, 1 << 30, Settings()))
            pool = workers._pool
            print(" ".join(str(p) for p in pool._processes), flush=True)
            time.sleep(60)
            """
        )
    )
    env = {**os.environ, "INGEST_WORKERS": "2", "PYTHONPATH": str(ROOT)}
    owner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        pids = [int(p) for p in owner.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
        owner.kill()
        owner.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in pids if _alive(p)], "workers outlived the killed run"
    finally:
        owner.kill()


def _where(tag: str) -> tuple[str, int]:
    """``tag`` and the process this ran in."""
    return tag, os.getpid()


def test_a_prefetched_job_is_taken_by_the_step_that_asks_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """What prefetch() started in the workers answers an equal job later; any other job runs
    as usual (here inline, as the later call is below the threshold)."""
    monkeypatch.setenv("INGEST_WORKERS", "2")
    settings = Settings.from_env()
    started = workers.prefetch(_where, [("a", 1 << 20), ("b", 2 << 20)], settings)
    assert started == 2
    ((_, results),) = workers.run_batches(_where, [("batch", ["a", "b", "c"])], 10, settings)
    here = os.getpid()
    assert [tag for tag, _ in results] == ["a", "b", "c"]
    assert results[0][1] != here and results[1][1] != here, "the prefetched results were not used"
    assert results[2][1] == here
    assert not workers._prefetched, "a taken result stays held"
    # Each prefetched result answers once: the same jobs again are work again.
    ((_, again),) = workers.run_batches(_where, [("batch", ["a"])], 10, settings)
    assert again == [("a", here)]


def _twice(number: int) -> int:
    return 2 * number


def test_a_prefetched_jobs_follow_ups_start_when_it_is_done_and_answer_their_steps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A prefetched job's follow-ups start from its result once it is done, and theirs from
    theirs; a later step takes each by its key, and nothing is left held."""
    monkeypatch.setenv("INGEST_WORKERS", "2")
    settings = Settings.from_env()

    def then(result: int) -> list[workers.FollowUp]:
        return [workers.FollowUp(_twice, result, result, then if result < 8 else None)]

    assert workers.prefetch(_twice, [(1, workers.PARALLEL_MIN_BYTES)], settings, then=then) == 1
    deadline = time.monotonic() + 30
    while 8 not in workers._prefetched.get(_twice, {}) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sorted(workers._prefetched[_twice]) == [1, 2, 4, 8]  # 1 -> 2 -> 4 -> 8 -> 16
    taken = [workers._prefetched[_twice][n] for n in (1, 2, 4, 8)]
    ((_, results),) = workers.run_batches(_twice, [("batch", [1, 2, 4, 8])], 10, settings)
    assert results == [2, 4, 8, 16]
    assert all(future.done() for future in taken) and not workers._prefetched


def test_prefetch_bounds_what_it_starts_and_starts_nothing_for_little_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("INGEST_WORKERS", "2")
    settings = Settings.from_env()
    assert workers.prefetch(_where, [("small", workers.PARALLEL_MIN_BYTES - 1)], settings) == 0
    many = [(str(n), 4 << 20) for n in range(10)]
    started = workers.prefetch(_where, many, settings)
    assert started * (4 << 20) >= workers.PREFETCH_BYTES > (started - 1) * (4 << 20)
    workers.forget_prefetched()
    assert not workers._prefetched
    monkeypatch.setenv("INGEST_WORKERS", "1")
    assert workers.prefetch(_where, many, Settings.from_env()) == 0


def _niceness(_: int) -> int:
    return os.nice(0)


def test_workers_yield_the_cpu_to_their_owner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INGEST_WORKERS", "2")
    ((_, found),) = workers.run_batches(_niceness, [("batch", [0, 1])], 1 << 40, Settings.from_env())
    assert found == [min(os.nice(0) + workers.WORKER_NICENESS, 19)] * 2  # 19: the lowest priority


def test_ingest_run_with_its_parse_prefetched_stores_what_it_stores_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ingest run`` starts the parse before its Dagster runs, and chunks each parsed file's
    parent and child sets as soon as it is parsed: the steps take every one of those results,
    and the store ends the same as without."""
    from dagster import DagsterInstance

    from ingest_assets.engine.tasks import chunk_document, parse_source
    from tests.ingest.conftest import Pipeline

    pipeline = Pipeline(tmp_path)  # one inbox (ids follow paths), a store and an instance each

    def stored(database: str) -> list[tuple[Any, ...]]:
        pipeline.db, pipeline.instance = tmp_path / database, DagsterInstance.ephemeral()
        pipeline.run()
        return pipeline.store.query(
            'SELECT id, set_key, "index", text, provenance::VARCHAR, metadata::VARCHAR, parent_id '
            "FROM chunks ORDER BY id"
        ) + pipeline.store.query("SELECT document_id, version_id, kind, title FROM documents ORDER BY 1")

    monkeypatch.setenv("INGEST_WORKERS", "1")
    inline = stored("inline.duckdb")
    monkeypatch.setenv("INGEST_WORKERS", "2")
    monkeypatch.setattr(workers, "PARALLEL_MIN_BYTES", 0)
    answered: dict[Any, list[Any]] = {parse_source: [], chunk_document: []}
    take = workers._take_prefetched

    def counted(function: Any, job: Any, key: Any) -> Any:
        future = take(function, job, key)
        if future is not None:
            answered[function].append(key(job))
        return future

    monkeypatch.setattr(workers, "_take_prefetched", counted)
    prefetched = stored("prefetched.duckdb")
    assert prefetched == inline and len(inline) > 100
    files = [path for path in pipeline.inbox.rglob("*") if path.is_file()]
    assert sorted(job.path for job in answered[parse_source]) == sorted(str(path) for path in files)
    made = [key for (key,) in pipeline.rows("SELECT set_key FROM chunk_sets")]
    assert sorted(answered[chunk_document]) == sorted(made), "a set was chunked again by its step"
    assert not workers._prefetched


@pytest.mark.parametrize(
    ("change", "levels"),
    [
        ({"child": 150, "chat_child": 150}, {0}),  # every parent set stored: the children
        ({"parent": 500, "chat_child": 120}, {0, 1}),  # new parents, and chat children over stored parents
    ],
)
def test_ingest_run_with_its_chunks_prefetched_stores_what_it_stores_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: dict[str, int], levels: set[int]
) -> None:
    """After a plan change, ``ingest run`` starts chunking before its Dagster runs: the parent
    sets to make, and the child sets to make over parent sets already stored. The steps take
    those results, and the store ends exactly as without the prefetch."""
    from dagster import DagsterInstance

    from ingest_assets.engine.tasks import chunk_document
    from tests.ingest.conftest import Pipeline, plan_spec

    pipeline = Pipeline(tmp_path)  # one inbox (ids follow paths), a store and an instance each
    answered: list[Any] = []
    take = workers._take_prefetched

    def counted(function: Any, job: Any, key: Any) -> Any:
        future = take(function, job, key)
        if future is not None and function is chunk_document:
            answered.append(key(job))
        return future

    monkeypatch.setattr(workers, "_take_prefetched", counted)

    def stored(database: str) -> tuple[list[tuple[Any, ...]], dict[str, int]]:
        """The chunks after a run and a plan change; the sets the change made, with their level."""
        pipeline.db, pipeline.instance = tmp_path / database, DagsterInstance.ephemeral()
        pipeline.write_plans(default=plan_spec())
        pipeline.run()
        before = {key for (key,) in pipeline.rows("SELECT set_key FROM chunk_sets")}
        pipeline.write_plans(default=plan_spec(**change))
        answered.clear()
        pipeline.run()
        made = {key: level for key, level in pipeline.rows("SELECT set_key, level FROM chunk_sets")}
        chunks = pipeline.store.query(
            'SELECT id, set_key, "index", text, provenance::VARCHAR FROM chunks ORDER BY id'
        )
        return chunks, {key: level for key, level in made.items() if key not in before}

    monkeypatch.setenv("INGEST_WORKERS", "1")
    inline, made_inline = stored("inline.duckdb")
    assert not answered, "one worker prefetches nothing"
    monkeypatch.setenv("INGEST_WORKERS", "2")
    monkeypatch.setattr(workers, "PARALLEL_MIN_BYTES", 0)  # the sample is small: use the pool anyway
    prefetched, made = stored("prefetched.duckdb")
    assert prefetched == inline and len(inline) > 100
    assert made == made_inline
    assert answered, "no prefetched chunk set was taken"
    assert set(answered) <= set(made), "a prefetched set the change did not make"
    assert {made[key] for key in answered} == levels
    if levels == {0}:
        assert sorted(answered) == sorted(made), "a set the change made was not prefetched"
    assert not workers._prefetched


def test_a_step_whose_jobs_do_not_hash_ignores_another_functions_prefetch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Prefetched jobs are held per function: a step of another function, whose jobs do not
    hash (a chunk job holds lists), never hashes them to look for a prefetched result."""
    monkeypatch.setenv("INGEST_WORKERS", "2")
    settings = Settings.from_env()
    assert workers.prefetch(_where, [("left over", workers.PARALLEL_MIN_BYTES)], settings) == 1
    try:
        ((_, results),) = workers.run_batches(len, [("batch", [[1, 2], [3]])], 10, settings)
        assert results == [2, 1]
    finally:
        workers.forget_prefetched()
