"""The invariant checks: they flag broken rows, accept what the chunkers promise, and verify
each chunk set once so a no-op run checks and writes nothing; full verification (``ingest
verify``, ``verify_job``) looks at every set again and catches a row changed after its check."""

from __future__ import annotations

import json
from typing import Any

import pytest
from dagster import AssetCheckKey, AssetKey, DagsterInstance, DefaultScheduleStatus

from ingest_assets.cli import main
from ingest_assets.defs import build_definitions, checks
from ingest_assets.defs.partitions import PLAN_DIMENSION
from ingest_assets.engine.keys import chunk_partition
from ingest_assets.settings import Settings
from ingest_assets.store import invariants
from ingest_assets.store.shards import shard_of
from tests.ingest.conftest import Pipeline, plan_spec


def _a_child_slice(pipeline: Pipeline) -> Any:
    """The id of a current child chunk that is an exact slice of its document's text (ids follow
    the inbox path, which differs per session)."""
    return pipeline.rows(
        "SELECT id FROM current_chunks WHERE level = 0 "
        "AND json_extract_string(provenance, '$.kind') = 'text' "
        "AND coalesce(json_extract(metadata, '$.exact_slice')::BOOLEAN, true) ORDER BY id LIMIT 1"
    )[0][0]


def test_checks_pass_and_verify_every_set_on_a_fresh_run(pipeline: Pipeline) -> None:
    # Small turn windows: several turns per window, so the separators between turns push a
    # window's full token count over chunk_size while its turns alone fit, as the design says.
    turns = [{"speaker": "ana", "text": "x" * 95} for _ in range(9)]  # "ana: " + 95 = 100 chars
    (pipeline.inbox / "even-turns.json").write_text(json.dumps({"title": "even", "turns": turns}))
    pipeline.write_plans(default=plan_spec(chat_parent=300, chat_child=120))
    pipeline.run()
    store = pipeline.store
    windows = pipeline.rows(
        "SELECT count(*) FROM current_chunks WHERE chunker = 'turn-window' AND token_count > 300"
    )[0][0]
    assert windows > 0
    assert invariants.budgets(store, 1) == []
    # The multi-asset check marks sets verified only when every invariant held.
    assert invariants.pending_sets(store) == []
    verified = pipeline.rows("SELECT count(*) FROM verified_sets")[0][0]
    assert verified == pipeline.rows("SELECT count(*) FROM chunk_sets")[0][0]


def test_noop_run_checks_no_set_again(pipeline: Pipeline) -> None:
    pipeline.run()
    before = pipeline.rows("SELECT count(*), max(verified_at) FROM verified_sets")
    pipeline.run()
    assert pipeline.rows("SELECT count(*), max(verified_at) FROM verified_sets") == before


def test_checks_flag_tampered_rows(pipeline: Pipeline) -> None:
    pipeline.run()
    store = pipeline.store
    chunk_id = _a_child_slice(pipeline)
    with store.transaction() as con:
        con.execute("UPDATE chunks SET text = 'tampered', token_count = 1000000 WHERE id = ?", [chunk_id])
    assert any(str(chunk_id) in v for v in invariants.exact_slices(store, 0))
    assert any(str(chunk_id) in v for v in invariants.budgets(store, 0))
    # A verified set is not looked at again by the per-set checks of a run.
    assert invariants.exact_slices(store, 0, pending_only=True) == []
    with store.transaction() as con:
        con.execute("DELETE FROM verified_sets")
    assert invariants.exact_slices(store, 0, pending_only=True) != []


def test_full_verification_catches_a_row_changed_after_its_check(
    pipeline: Pipeline, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run verified every set; a chunk changed afterwards hides from the per-set checks of
    later runs, and ``ingest verify`` and ``verify_job`` (nightly, stopped by default) find it."""
    pipeline.run()
    db = str(pipeline.db)
    assert main(["verify", "--db", db]) == 0
    assert "exact_slices[child]: ok" in capsys.readouterr().out
    chunk_id = _a_child_slice(pipeline)
    with pipeline.store.transaction() as con:
        con.execute("UPDATE chunks SET text = 'tampered' WHERE id = ?", [chunk_id])
    assert invariants.pending_sets(pipeline.store) == []  # the runs' checks would not look again
    assert main(["verify", "--db", db]) == 1
    out = capsys.readouterr().out
    assert "exact_slices[child]: 1 violation(s)" in out and str(chunk_id) in out
    defs = build_definitions(
        Settings(database=db, inbox=str(pipeline.inbox), plans_file=str(pipeline.plans_file))
    )
    assert defs.resolve_schedule_def("verify_schedule").default_status == DefaultScheduleStatus.STOPPED
    result = defs.resolve_job_def("verify_job").execute_in_process(
        instance=DagsterInstance.ephemeral(), raise_on_error=False
    )
    assert not result.success
    (failure,) = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert str(chunk_id) in str(failure.step_failure_data.user_failure_data.metadata["violations"].value)


def _unverified_by_shard(pipeline: Pipeline, role: str) -> dict[str, set[str]]:
    rows = pipeline.rows(
        "SELECT DISTINCT m.set_key, m.document_id::VARCHAR FROM staged_members m WHERE m.role = ? "
        "AND m.set_key NOT IN (SELECT set_key FROM verified_sets)",
        role,
    )
    by_shard: dict[str, set[str]] = {}
    for set_key, document in rows:
        by_shard.setdefault(shard_of(document), set()).add(set_key)
    return by_shard


def test_a_runs_contract_checks_the_sets_of_its_own_partitions(pipeline: Pipeline) -> None:
    """Two runs of different shards at once each check what they wrote: a run's contract check
    looks at the unverified sets of its plan and shards alone, and leaves the others pending
    for the runs that wrote them (else every run re-checks everything written meanwhile)."""
    pipeline.run_engine()  # every set written, none verified (the engine's driver runs no check)
    pending = _unverified_by_shard(pipeline, "child")
    assert len(pending) >= 2, "the sample spreads over several shards"
    shard = sorted(pending)[0]
    plan_key = pipeline.plans()[0].key
    scoped = invariants.pending_sets(pipeline.store, 0, {plan_key: [shard]})
    assert set(scoped) == pending[shard]
    assert invariants.pending_sets(pipeline.store, 0, {"another-plan": [shard]}) == []
    assert set(invariants.pending_sets(pipeline.store, 0)) == set().union(*pending.values())

    pipeline.instance.add_dynamic_partitions(PLAN_DIMENSION, [plan_key])
    defs = build_definitions(
        Settings(database=str(pipeline.db), inbox=str(pipeline.inbox), plans_file=str(pipeline.plans_file))
    )
    result = defs.resolve_job_def("chunks_job").execute_in_process(
        instance=pipeline.instance, partition_key=chunk_partition(plan_key, shard)
    )
    assert result.success
    (child,) = [e for e in result.get_asset_check_evaluations() if e.asset_key.path[-1] == "child_chunks"]
    assert child.passed and child.metadata["sets_checked"].value == len(pending[shard])
    after = _unverified_by_shard(pipeline, "child")
    assert shard not in after
    assert after == {s: keys for s, keys in pending.items() if s != shard}


def test_a_check_that_cannot_run_fails_and_its_asset_still_materializes(pipeline: Pipeline) -> None:
    """The checks run in their asset's step, after its work is in the store: a check whose
    query fails is a failed check with the error in its metadata, not a failed step, so the
    materialization (and its data version) is recorded as when each check was its own step."""
    pipeline.run()
    with pipeline.store.transaction() as con:
        con.execute("DROP TABLE verified_sets")  # what the contract checks read and write
    note = next(pipeline.inbox.rglob("*.md"))
    note.write_text(note.read_text() + "\n\nOne more paragraph, for an edit.\n")
    summary = pipeline.run()
    assert summary["documents"]["parsed"] == 1
    for asset in ("parent_chunks", "child_chunks"):
        record = pipeline.instance.get_latest_asset_check_evaluation_record(
            AssetCheckKey(AssetKey(asset), "contract")
        )
        assert record is not None and record.evaluation is not None
        assert not record.evaluation.passed
        assert "verified_sets" in record.evaluation.metadata["error"].value
        made = pipeline.instance.fetch_materializations(AssetKey(asset), limit=1).records
        assert made and made[0].run_id == record.run_id


def test_a_contract_with_no_new_set_reads_no_chunk(pipeline: Pipeline) -> None:
    """A contract check whose run wrote no set (a run of shards without change, a repeated
    run) passes on the pending-set lookup alone: its rules read nothing (on a lake every query
    reads the catalog of each table it names, however little it finds)."""
    pipeline.run()
    store = pipeline.store
    assert invariants.pending_sets(store) == []
    with store.transaction() as con:
        con.execute("DROP TABLE chunks")  # what every rule of the contract reads
    for level in (1, 0):
        result = checks._contract(store, None, level)
        assert result.passed, result.metadata
        assert result.metadata["sets_checked"].value == 0
    with pytest.raises(Exception, match="chunks"):
        invariants.unique_ids(store, 0, ["any-set"])  # the rules do read it when a set is new
