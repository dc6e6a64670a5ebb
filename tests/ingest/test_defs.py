"""The code location: it loads, validates with Dagster's own command, and rejects bad plans."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from dagster import AssetKey, BackfillPolicy

from ingest_assets.cli import main
from ingest_assets.defs import build_definitions
from ingest_assets.plans import PlanError, parse_plans
from ingest_assets.settings import Settings
from tests.ingest.conftest import SAMPLE, plan_spec

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def test_definitions_hold_the_asset_graph() -> None:
    defs = build_definitions(Settings(plans_file=str(ROOT / "plans.yaml")))
    graph = defs.resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
    assert keys == {"sources", "documents", "parent_chunks", "child_chunks", "graph_nodes", "embeddings"}
    # embeddings reads children; it runs after graph_nodes, where documents of plans without
    # embeddings are promoted, so it is the last step of a plan that embeds.
    assert graph.get(AssetKey("embeddings")).parent_keys == {
        AssetKey("child_chunks"),
        AssetKey("graph_nodes"),
    }
    assert graph.get(AssetKey("child_chunks")).parent_keys == {AssetKey("parent_chunks")}
    dims = graph.get(AssetKey("parent_chunks")).partitions_def.partition_dimension_names
    assert dims == ["plan", "shard"]
    # The one switch, off by default; plans_sensor, on by default, only lists plan keys.
    sensors = {s.name: s.default_status.value for s in defs.sensors}
    assert sensors == {"ingest_sensor": "STOPPED", "plans_sensor": "RUNNING"}
    assert not any(graph.get(key).automation_condition for key in graph.get_all_asset_keys())
    checks = {(k.asset_key.to_user_string(), k.name) for k in graph.asset_check_keys}
    assert checks == {
        ("parent_chunks", "contract"), ("child_chunks", "contract"), ("graph_nodes", "edges_resolve"),
        ("graph_nodes", "coverage"), ("documents", "parse_failures"), ("parent_chunks", "chunk_failures"),
        ("embeddings", "coverage"),
    }  # fmt: skip


def test_a_backfill_is_one_run_per_stretch_of_shards_unless_the_setting_splits_it() -> None:
    """Each run costs a process and an import of the code location, so one run covers a
    backfill's stretch of shards; INGEST_BACKFILL_SHARDS splits it for machines that each take
    a run."""
    graph = build_definitions(Settings(plans_file=str(ROOT / "plans.yaml"))).resolve_asset_graph()
    policies = {graph.get(key).backfill_policy for key in graph.get_all_asset_keys()}
    assert policies == {BackfillPolicy.single_run()}
    split = Settings(plans_file=str(ROOT / "plans.yaml"), backfill_shards=2)
    graph = build_definitions(split).resolve_asset_graph()
    policies = {graph.get(key).backfill_policy for key in graph.get_all_asset_keys()}
    assert policies == {BackfillPolicy.multi_run(2)}


def test_dagster_definitions_validate_passes() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "INGEST_PLANS": str(ROOT / "plans.yaml")}
    env.pop("DAGSTER_HOME", None)
    result = subprocess.run(
        [str(BIN / "dagster"), "definitions", "validate", "-m", "ingest_assets.definitions"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Validation successful" in result.stderr + result.stdout


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda p: p["routes"]["*"]["child"].update(chunk_size=-5),
            ["'default'", "'*'", "child", "chunk_size"],
        ),
        (lambda p: p["routes"]["chat"]["parent"].update(strategy="nope"), ["'default'", "'chat'", "parent"]),
        (lambda p: p["routes"]["*"]["parent"].update(colour="red"), ["'default'", "'*'", "parent", "colour"]),
    ],
)
def test_bad_plan_names_plan_route_and_field(mutate, expected) -> None:
    spec = plan_spec()
    mutate(spec)
    with pytest.raises(PlanError) as error:
        parse_plans({"plans": {"default": spec}})
    for word in expected:
        assert word in str(error.value)


def test_bad_plan_fails_the_code_location(tmp_path: Path) -> None:
    bad = tmp_path / "plans.yaml"
    bad.write_text(
        yaml.safe_dump({"plans": {"default": {"routes": {"*": {"parent": {"strategy": "section"}}}}}})
    )
    with pytest.raises(PlanError, match="child"):
        build_definitions(Settings(plans_file=str(bad)))


def test_ingest_cli_runs_on_a_persistent_instance_and_logs_its_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """`ingest run -v --json` end to end, with run history under DAGSTER_HOME (SQLite, the
    repo's dagster.yaml): the summary on stdout, each step's log lines on stderr, and the same
    lines in each run's log (what the UI shows)."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copyfile(ROOT / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    plans = tmp_path / "plans.yaml"
    plans.write_text(yaml.safe_dump({"plans": {"default": plan_spec()}}))
    args = [
        "run",
        "-v",
        "--inbox",
        str(SAMPLE),
        "--db",
        str(tmp_path / "i.duckdb"),
        "--plans",
        str(plans),
        "--json",
    ]
    assert main(args) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert set(summary) >= {"documents", "chunk_sets", "plans"}
    assert summary["documents"]["parsed"] > 0 and summary["documents"]["failed"] == 0
    assert re.search(r"parse: \d+ of \d+ files parsed \(0 failed\) in [\d.]+ s", err), err[-2000:]
    assert re.search(r"child_chunks default-\w+: \d+ documents chunked", err), err[-2000:]
    assert main(["plans", "--plans", str(plans), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [p["key"] for p in listed] == summary["plans"]
    from dagster import DagsterInstance

    with DagsterInstance.get() as instance:
        assert instance.get_dynamic_partitions("plan") == summary["plans"]
        # A documents_job and a chunks_job per stretch of consecutive shards with files.
        records = instance.get_run_records()
        assert len(records) == summary["runs"] >= 2
        messages = [
            entry.user_message for record in records for entry in instance.all_logs(record.dagster_run.run_id)
        ]
    assert any(re.search(r"graph_nodes default-\w+: graph records of \d+ documents", m) for m in messages)
    # The steps ran in this process, whose output is the terminal: nothing copied it into
    # compute-log files (a tail and a watcher process per stream and run); the UI's instance
    # still captures the output of the runs it launches.
    captured = [p for p in (home / "storage").rglob("*") if p.suffix in {".out", ".err", ".complete"}]
    assert captured == []
    with DagsterInstance.get() as instance:
        assert type(instance.compute_log_manager).__name__ == "LocalComputeLogManager"


def test_ingest_inspect_prints_a_files_chunks(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "inspect",
                str(ROOT / "data" / "sample" / "getting-started.md"),
                "--plans",
                str(ROOT / "plans.yaml"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "getting-started.md (markdown" in out and "tokens" in out


def test_ingest_inspect_reads_the_plans_file_of_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``INGEST_PLANS`` was ignored by ``ingest inspect`` alone (it read ./plans.yaml)."""
    plans = tmp_path / "plans.yaml"
    plans.write_text(yaml.safe_dump({"plans": {"tiny": plan_spec(parent=300, child=120)}}))
    monkeypatch.setenv("INGEST_PLANS", str(plans))
    assert main(["inspect", str(ROOT / "data" / "sample" / "getting-started.md"), "--plan", "tiny"]) == 0
    assert "'chunk_size': 120" in capsys.readouterr().out
    monkeypatch.delenv("INGEST_PLANS")
    assert main(["inspect", str(ROOT / "data" / "sample" / "getting-started.md"), "--plan", "tiny"]) == 1
    assert "tiny" in capsys.readouterr().err


def test_ingest_inspect_parses_within_the_pipelines_limits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ingest inspect`` chunked a 20 MB file that ``ingest run`` refuses (the library's
    64 MiB against the pipeline's 16 MiB), and said "error:" where every command says
    "ingest:" (a new user's review). It parses as a run would, within ``INGEST_MAX_BYTES``."""
    big = tmp_path / "big.txt"
    big.write_text("word " * 2000)
    monkeypatch.setenv("INGEST_MAX_BYTES", "1000")
    assert main(["inspect", str(big), "--plans", str(ROOT / "plans.yaml")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ingest: ") and "max_bytes" in err
    monkeypatch.setenv("INGEST_MAX_BYTES", "100000")
    assert main(["inspect", str(big), "--plans", str(ROOT / "plans.yaml")]) == 0
