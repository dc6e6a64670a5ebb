"""Small work stays small: a one-file edit through ``ingest run`` launches the fewest Dagster
runs Dagster allows, over the edited file's shard alone, and its checks look at what the edit
wrote (and the rows it points at), whatever else the store holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from dagster import DagsterEventType

from ingest_assets.defs.sensors import RANGE_END_TAG, RANGE_START_TAG
from ingest_assets.engine import shard_of
from ingest_assets.store import invariants
from tests.ingest.conftest import Pipeline, plan_spec

START, END = RANGE_START_TAG, RANGE_END_TAG
ROOT = Path(__file__).resolve().parents[2]
# What a no-op never needs: Dagster, chonkie (with httpx), pyarrow and numpy.
HEAVY = ("dagster", "chonkie", "httpx", "pyarrow", "numpy")


def _edit_one(pipeline: Pipeline) -> Any:
    """Append a paragraph to one Markdown file of the inbox; returns its shard."""
    target = sorted(pipeline.inbox.rglob("*.md"))[0]
    with target.open("a", encoding="utf-8") as handle:
        handle.write("\n\nOne more paragraph, and nothing else changed.\n")
    (document_id,) = pipeline.rows("SELECT document_id FROM sources WHERE path = ?", str(target))[0]
    return shard_of(document_id)


def _check_metadata(pipeline: Pipeline, run_id: str) -> dict[str, dict[str, Any]]:
    """The metadata of each asset check evaluated in ``run_id``, by ``<asset>/<check>``."""
    found = {}
    for event in pipeline.instance.all_logs(run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION):
        evaluation = event.dagster_event.event_specific_data  # type: ignore[union-attr]
        key = evaluation.asset_check_key
        found[f"{key.asset_key.to_user_string()}/{key.name}"] = {
            name: value.value for name, value in evaluation.metadata.items()
        }
    return found


def test_a_one_file_edit_runs_its_shard_once_per_partitions_definition(pipeline: Pipeline) -> None:
    """Dagster runs one partitions definition per run (documents by shard, chunks by plan and
    shard), so two runs is the fewest: each over the edited file's shard alone, and its contract
    checks look at the sets the edit wrote. A no-op launches none."""
    pipeline.run()
    assert pipeline.run()["runs"] == 0
    before = {run.run_id for run in pipeline.instance.get_runs()}
    shard = _edit_one(pipeline)
    summary = pipeline.run()
    runs = [run for run in pipeline.instance.get_runs() if run.run_id not in before]
    assert summary["runs"] == len(runs) == 2
    (key,) = summary["plans"]
    ranges = sorted((run.job_name, run.tags[START], run.tags[END]) for run in runs)
    assert ranges == [
        ("chunks_job", f"{key}|{shard}", f"{key}|{shard}"),
        ("documents_job", shard, shard),
    ]
    assert summary["chunker_calls"] == 2  # the edited document's parents and children, no other
    (chunks_run,) = [run for run in runs if run.job_name == "chunks_job"]
    checks = _check_metadata(pipeline, chunks_run.run_id)
    # One parent set and the child set cut from it: the edited document's, checked once.
    assert checks["parent_chunks/contract"]["sets_checked"] == 1
    assert checks["child_chunks/contract"]["sets_checked"] == 1
    assert checks["graph_nodes/edges_resolve"]["edges_resolve"] == 0
    assert invariants.pending_sets(pipeline.store) == []


def test_the_rules_given_sets_find_what_the_whole_view_shows_in_them(pipeline: Pipeline) -> None:
    """Each per-set rule limited to some sets flags exactly the broken rows of those sets,
    reading the rest of the view only for the ids and parents they name."""
    pipeline.run_engine()
    store = pipeline.store
    # A child set with four chunks that are exact text slices (set keys follow the tmp paths).
    text_slices = (
        "json_extract_string(c.provenance, '$.kind') = 'text' "
        "AND coalesce(json_extract(c.metadata, '$.exact_slice')::BOOLEAN, true)"
    )
    (child_set,) = pipeline.rows(
        "SELECT m.set_key FROM staged_members m JOIN chunks c ON c.set_key = m.set_key "
        f"WHERE m.role = 'child' AND {text_slices} GROUP BY 1 HAVING count(*) >= 4 ORDER BY 1 LIMIT 1"
    )[0]
    (other,) = pipeline.rows(
        "SELECT set_key FROM staged_members WHERE role = 'child' AND set_key <> ? LIMIT 1", child_set
    )[0]
    parent_set = pipeline.rows(
        "SELECT based_on FROM staged_members WHERE role = 'child' AND set_key = ?", child_set
    )[0][0]
    first, second, third, fourth = (
        row[0]
        for row in pipeline.rows(
            f'SELECT c.id FROM chunks c WHERE c.set_key = ? AND {text_slices} ORDER BY c."index" LIMIT 4',
            child_set,
        )
    )
    for rule in (
        lambda keys: invariants.unique_ids(store, 0, keys),
        lambda keys: invariants.exact_slices(store, 0, set_keys=keys),
        lambda keys: invariants.no_orphans(store, keys),
        lambda keys: invariants.parent_covers_children(store, set_keys=keys),
    ):
        assert rule([child_set]) == [] and rule([other]) == []
    with store.transaction() as con:
        con.execute("INSERT INTO chunks SELECT * FROM chunks WHERE id = ?", [first])
        con.execute("UPDATE chunks SET text = 'tampered' WHERE id = ?", [second])
        con.execute("UPDATE chunks SET parent_id = ? WHERE id = ?", [uuid.uuid4(), third])
        con.execute(
            "UPDATE chunks SET provenance = json_object('kind', 'text', 'start', 0, 'end', 1000000000) "
            "WHERE id = ?",
            [fourth],
        )
    flagged = {
        "unique_ids": invariants.unique_ids(store, 0, [child_set]),
        "exact_slices": invariants.exact_slices(store, 0, set_keys=[child_set]),
        "no_orphans": invariants.no_orphans(store, [child_set]),
        "parent_covers_children": invariants.parent_covers_children(store, set_keys=[child_set]),
    }
    assert flagged == {
        "unique_ids": invariants.unique_ids(store, 0),
        "exact_slices": invariants.exact_slices(store, 0),
        "no_orphans": invariants.no_orphans(store),
        "parent_covers_children": invariants.parent_covers_children(store),
    }
    assert all(flagged.values()), flagged
    assert str(first) in flagged["unique_ids"][0] and str(second) in " ".join(flagged["exact_slices"])
    assert str(fourth) in " ".join(flagged["parent_covers_children"])
    # The other set, and the parents alone, hold nothing broken.
    assert invariants.unique_ids(store, 0, [other]) == []
    assert invariants.exact_slices(store, 0, set_keys=[other]) == []
    assert invariants.unique_ids(store, 1, [parent_set]) == []
    assert invariants.exact_slices(store, 1, set_keys=[parent_set]) == []


def test_the_summary_counts_what_the_views_show(pipeline: Pipeline) -> None:
    """The summary's view sizes come from the served sets' counts; they are the views' own,
    with two plans sharing their parents, after an edit and a deletion. (The engine's driver
    builds the summary ``ingest run`` prints from the same store records: test_pending compares
    the two.)"""
    pipeline.write_plans(default=plan_spec(), small=plan_spec(child=100))
    pipeline.run_engine()
    _edit_one(pipeline)
    sorted(pipeline.inbox.rglob("*.md"))[-1].unlink()
    summary = pipeline.run_engine()
    views = {
        name: pipeline.rows(f"SELECT count(*) FROM {view}")[0][0]
        for name, view in (
            ("documents", "current_documents"),
            ("chunks", "current_chunks"),
            ("graph_nodes", "graph_nodes"),
            ("failures", "ingest_failures"),
        )
    }
    assert summary["current"] == views
    assert views["chunks"] > 0 and views["graph_nodes"] > views["chunks"]


def test_a_noop_loads_none_of_the_heavy_packages(pipeline: Pipeline, tmp_path: Path) -> None:
    """A no-op ``ingest`` program reads the pending check and prints the summary: it imports
    neither Dagster nor the packages that only counting, writing or embedding need."""
    pipeline.run_engine()
    where = ["--inbox", str(pipeline.inbox), "--db", str(pipeline.db), "--plans", str(pipeline.plans_file)]
    program = (
        "import json, sys; from ingest_assets.cli import main; "
        f"code = main(['run', *{where!r}, '--json']); "
        f"print(json.dumps({{'code': code, 'loaded': [m for m in {HEAVY!r} if m in sys.modules]}}))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, check=False
    )
    summary, result = (json.loads(line) for line in done.stdout.strip().splitlines()[-2:])
    assert summary["runs"] == 0 and summary["chunker_calls"] == 0
    assert result == {"code": 0, "loaded": []}, done.stderr[-2000:]
