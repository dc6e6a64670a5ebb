"""``ingest plans --diff`` predicts, set for set, what the next run does: the forecast is made
read-only (the store file is byte-identical after it), then the real run (the engine's driver,
the steps each asset runs) is compared with it key for key, for a new plan, a child-size change
and an edit (plus a deletion); through Dagster, the sensor's forecast is what each partition's
run then reports."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ingest_assets.cli import main
from ingest_assets.engine.forecast import ROLES, Forecast, forecast
from ingest_assets.settings import Settings
from tests.ingest.conftest import Pipeline, plan_spec
from tests.lake.postgres import on_both_backends

MODEL, SMALLER_MODEL = "wordllama:l2_supercat_256", "wordllama:l2_supercat_128"


def _digest(p: Pipeline) -> str:
    """The store file's bytes, or on the lake its snapshots (any commit adds one)."""
    if p.store.is_lake:
        with p.store.connect() as con:
            alias = con.execute("SELECT current_database()").fetchone()[0]
            return repr(con.execute("SELECT * FROM ducklake_snapshots(?)", [alias]).fetchall())
    return hashlib.sha256(Path(p.db).read_bytes()).hexdigest()


def _stored(p: Pipeline) -> dict[str, set[str]]:
    return {
        "parent": {k for (k,) in p.rows("SELECT set_key FROM chunk_sets WHERE level = 1")},
        "child": {k for (k,) in p.rows("SELECT set_key FROM chunk_sets WHERE level = 0")},
        "graph": {k for (k,) in p.rows("SELECT set_key FROM graph_sets")},
    }


def _predict(p: Pipeline) -> Forecast:
    """The forecast, asserting it wrote nothing."""
    before, counts = _digest(p), p.store.table_counts()
    result = forecast(p.store, p.inbox, p.plans(), Settings.from_env())
    assert _digest(p) == before and p.store.table_counts() == counts
    return result


def _assert_run_matches(p: Pipeline, predicted: Forecast) -> None:
    """Run, then compare what the run did with ``predicted``, set for set."""
    stored_before = _stored(p)
    p.run_engine()
    stored_after = _stored(p)
    for role in ROLES:
        created = stored_after[role] - stored_before[role]
        assert created == set().union(*(plan.keys(role, "create") for plan in predicted.plans)), role
    available = {role: set(keys) for role, keys in stored_before.items()}
    for plan in predicted.plans:
        members = p.rows("SELECT role, set_key FROM current_members WHERE plan_key = ?", plan.key)
        for role in ROLES:
            create, reuse = plan.keys(role, "create"), plan.keys(role, "reuse")
            assert {k for r, k in members if r == role} == create | reuse, (plan.key, role)
            assert reuse <= available[role] and not create & available[role]
            available[role] |= create
    versions = dict(p.rows("SELECT uri, version_id::VARCHAR FROM sources WHERE NOT deleted"))
    assert {uri: versions[uri] for uri in predicted.versions} == predicted.versions


def test_forecast_of_a_fresh_store_and_a_new_plan_matches_the_runs(pipeline: Pipeline) -> None:
    pipeline.run_engine()  # the store exists; then the inbox starts over in a new plan
    pipeline.write_plans(default=plan_spec(), wide=plan_spec(parent=900, child=300))
    predicted = _predict(pipeline)
    default, wide = predicted.plans
    assert default.live and not wide.live
    assert not default.keys("parent", "create") and wide.keys("parent", "create")
    _assert_run_matches(pipeline, predicted)


def test_forecast_of_a_child_size_change_reuses_every_parent(pipeline: Pipeline) -> None:
    first = pipeline.run_engine()
    pipeline.write_plans(default=plan_spec(child=150, chat_child=150))
    predicted = _predict(pipeline)
    (plan,) = predicted.plans
    files = first["documents"]["parsed"]
    assert len(plan.keys("parent", "reuse")) == files and not plan.keys("parent", "create")
    assert len(plan.keys("child", "create")) == files and predicted.retired == first["plans"]
    assert predicted.seconds is not None  # the first run stored timings
    _assert_run_matches(pipeline, predicted)


@on_both_backends()
def test_forecast_of_an_edit_and_a_delete_names_that_document_only(pipeline: Pipeline) -> None:
    pipeline.run_engine()
    edited = pipeline.inbox / "chunking-settings.md"
    edited.write_text(edited.read_text() + "\n\nOne more setting, explained.\n")
    (pipeline.inbox / "orchard-harvest.csv").unlink()
    predicted = _predict(pipeline)
    assert (predicted.changed, predicted.deleted, predicted.parse) == (1, 1, {"markdown": 1})
    (plan,) = predicted.plans
    assert all(len(plan.keys(role, "create")) == 1 for role in ROLES)
    assert "csv" not in plan.kinds
    _assert_run_matches(pipeline, predicted)
    # Nothing left to do: the forecast says so, and a run creates nothing.
    after = _predict(pipeline)
    assert after.parse == {} and not any(p.keys(r, "create") for p in after.plans for r in ROLES)


def test_ingest_plans_diff_prints_per_kind_and_refuses_bad_input(
    pipeline: Pipeline, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pipeline.run_engine()
    pipeline.write_plans(default=plan_spec(child=150, chat_child=150))
    before = _digest(pipeline)
    argv = ["plans", "--diff", "--db", str(pipeline.db), "--inbox", str(pipeline.inbox)]
    assert main([*argv, "--plans", str(pipeline.plans_file)]) == 0
    out = capsys.readouterr().out
    assert "read-only" in out and "markdown" in out and "estimate for the run:" in out
    assert _digest(pipeline) == before
    assert main([*argv, "--plans", str(tmp_path / "none.yaml")]) == 2
    assert "none.yaml" in capsys.readouterr().err
    # Before the first run there is no store: the forecast is of that run, and makes no store.
    first = ["plans", "--diff", "--db", str(tmp_path / "no.duckdb"), "--inbox", str(pipeline.inbox)]
    assert main([*first, "--plans", str(pipeline.plans_file)]) == 0
    out = capsys.readouterr().out
    assert f"against no store yet at {tmp_path / 'no.duckdb'} (a first run)" in out and "markdown" in out
    assert not (tmp_path / "no.duckdb").exists()


def test_sensor_shows_a_new_plan_keys_forecast_on_its_partitions(pipeline: Pipeline) -> None:
    from dagster import AssetKey, MultiPartitionKey, SensorResult

    from tests.ingest.test_sensors import _execute, _ingested, _settle, _tick

    _ingested(pipeline)
    pipeline.write_plans(default=plan_spec(child=150, chat_child=150))
    (new_key,) = [plan.key for plan in pipeline.plans()]
    predicted = _predict(pipeline)
    result = _tick(pipeline)
    assert isinstance(result, SensorResult)
    events = {e.partition: e for e in result.asset_events}
    assert set(events) == {
        MultiPartitionKey({"plan": new_key, "shard": s})
        for s in ("00", "01", "02", "03", "04", "05", "06", "07")
    }
    (plan,) = predicted.plans
    by_shard = {key.keys_by_dimension["shard"]: e.metadata for key, e in events.items()}
    for shard, metadata in by_shard.items():
        work = plan.shards.get(shard)
        expected = len(work.sets["child"]["create"]) if work else 0
        assert metadata["forecast_child_sets_created"].value == expected
        assert metadata["forecast_parent_sets_created"].value == 0
    assert sum(m["forecast_child_sets_created"].value for m in by_shard.values()) == len(
        plan.keys("child", "create")
    )
    # The figures are what each partition's run then reports.
    _execute(pipeline, result)
    _settle(pipeline)
    seen = set()
    for record in pipeline.instance.fetch_materializations(AssetKey("child_chunks"), limit=200).records:
        materialization = record.asset_materialization
        if materialization.partition.startswith(new_key):
            seen.add(materialization.partition)
            shard = materialization.partition.split("|")[1]
            assert (
                materialization.metadata["created"].value
                == by_shard[shard]["forecast_child_sets_created"].value
            )
    assert len(seen) == 8


def _kind_row(out: str, kind: str) -> list[str]:
    """The cells of ``kind``'s row in ``ingest plans --diff``'s table (one plan printed)."""
    (line,) = [line for line in out.splitlines() if line.startswith(f"  {kind} ")]
    return [cell.strip() for cell in line.split("  ") if cell.strip()]


@on_both_backends()
def test_ingest_plans_diff_words_each_keys_state_and_shows_embeddings(
    pipeline: Pipeline, capsys: pytest.CaptureFixture[str]
) -> None:
    """A retired key put back is "retired", not "not live in the store yet"; a new key is "not
    in the store yet"; each plan's embedding key is live, stored or not stored yet, and a column
    counts the child sets to embed and those embedded already."""
    embed = {"embedding": {"model": MODEL, "text": "contextual"}}
    pipeline.write_plans(default={**plan_spec(), **embed})
    ((old, embedding),) = [(p.key, p.embedding_key) for p in pipeline.plans()]
    pipeline.run_engine()
    argv = ["plans", "--diff", "--db", str(pipeline.db), "--inbox", str(pipeline.inbox),
            "--plans", str(pipeline.plans_file)]  # fmt: skip
    markdown = len(pipeline.rows("SELECT 1 FROM current_documents WHERE kind = 'markdown'"))

    pipeline.write_plans(default={**plan_spec(child=150, chat_child=150), **embed})
    (new,) = [p.key for p in pipeline.plans()]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"plan {new}: not in the store yet (the next run builds it)" in out
    assert f"  embedding key {embedding}: live (a live plan's vectors" in out  # the old key serves it
    assert "embed new/reused" in out
    # `ingest plans` names the same key (it showed the model's fingerprint alone, another id).
    assert main(["plans", "--db", str(pipeline.db), "--plans", str(pipeline.plans_file)]) == 0
    assert f"embedding        key {embedding} (vectors stored under it)" in capsys.readouterr().out
    # kind, docs, parent, child, graph, embed: the new child sets have no vectors yet
    assert _kind_row(out, "markdown") == ["markdown", str(markdown), f"0 / {markdown}", f"{markdown} / 0",
                                          f"{markdown} / 0", f"{markdown} / 0"]  # fmt: skip

    pipeline.run_engine()  # the new key serves, the old one retires
    pipeline.write_plans(default={**plan_spec(), **embed})  # its settings back
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"plan {old}: retired (stored: the next run serves it again, reusing its stored sets)" in out
    assert "not live in the store yet" not in out and "not in the store yet" not in out
    assert _kind_row(out, "markdown")[-1] == f"0 / {markdown}"  # its child sets kept their vectors
    assert main([*argv, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["plans"][old]
    assert (plan["state"], plan["live"], plan["embedding"]) == (
        "retired",
        False,
        {"key": embedding, "state": "live"},
    )
    assert plan["kinds"]["markdown"]["embeddings"] == {"create": 0, "reuse": markdown}

    pipeline.write_plans(default={**plan_spec(), "embedding": {"model": SMALLER_MODEL, "text": "contextual"}})
    assert main([*argv, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["plans"][old]
    assert plan["embedding"]["state"] == "new" and plan["embedding"]["key"] != embedding
    assert plan["kinds"]["markdown"]["embeddings"] == {"create": markdown, "reuse": 0}

    pipeline.write_plans(default=plan_spec())
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "  embedding: none (the plan embeds nothing)" in out and _kind_row(out, "markdown")[-1] == "-"


def test_the_estimate_counts_the_dagster_runs_ingest_run_will_launch(
    pipeline: Pipeline, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a small store the estimate said 0.09 s for a run that took 9 s: the steps' work only,
    not the Dagster runs around it. ``ingest run`` records each run's own seconds (its wall time
    less its steps'); the estimate adds them for each run it would launch."""
    pipeline.run()  # a documents run and a chunks run
    ((runs, own),) = pipeline.rows("SELECT count(*), min(seconds) FROM step_timings WHERE step = 'run'")
    assert runs == 2 and own > 0
    edited = pipeline.inbox / "getting-started.md"
    edited.write_text(edited.read_text() + "\n\nOne more paragraph.\n")
    predicted = _predict(pipeline)
    rate = predicted.rates["run"]
    assert predicted.run_seconds == pytest.approx(2 * rate)  # the documents run and one plan's
    assert predicted.seconds is not None and predicted.seconds > 2 * rate
    argv = ["plans", "--diff", "--db", str(pipeline.db), "--inbox", str(pipeline.inbox)]
    assert main([*argv, "--plans", str(pipeline.plans_file)]) == 0
    assert f"run {rate:.2f} s/Dagster run" in capsys.readouterr().out
    edited.write_text(edited.read_text())  # the same edit: nothing more to predict after the run
    pipeline.run()
    assert _predict(pipeline).run_seconds == 0
