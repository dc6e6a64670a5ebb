"""Every ``ingest`` command on a DuckLake store, as on a DuckDB file: ``plans`` (with
each key's state, and ``--diff``), ``changes``, ``export``, ``verify`` and ``search`` take ``--db`` as
the store's location and print the same things on both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest_assets.cli import main
from tests.ingest.conftest import Pipeline, plan_spec
from tests.lake.postgres import on_both_backends

pytestmark = on_both_backends()

MODEL = "wordllama:l2_supercat_256"


def _ingest(pipeline: Pipeline, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([*argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_every_command_works_on_either_backend(
    pipeline: Pipeline, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pipeline.write_plans(default={**plan_spec(), "embedding": {"model": MODEL, "text": "contextual"}})
    pipeline.engine().run_pending()
    db, plans = str(pipeline.db), str(pipeline.plans_file)
    (key,) = [plan.key for plan in pipeline.plans()]

    code, out, err = _ingest(pipeline, capsys, "plans", "--plans", plans, "--db", db, "--json")
    assert code == 0, err
    assert [(row["key"], row["state"]) for row in json.loads(out)] == [(key, "live")]

    pipeline.write_plans(
        default={**plan_spec(child=150), "embedding": {"model": MODEL, "text": "contextual"}}
    )
    (new_key,) = [plan.key for plan in pipeline.plans()]
    code, out, err = _ingest(pipeline, capsys, "plans", "--plans", plans, "--db", db)
    assert code == 0, err
    assert f"{new_key}" in out and "not in the store yet" in out and "live, not in this plans file" in out
    code, out, err = _ingest(pipeline, capsys, "plans", "--diff", "--plans", plans, "--db", db,
                             "--inbox", str(pipeline.inbox))  # fmt: skip
    assert code == 0, err
    assert f"plan {new_key} (not live in the store yet)" in out

    pipeline.write_plans(default={**plan_spec(), "embedding": {"model": MODEL, "text": "contextual"}})
    edited = pipeline.inbox / "troubleshooting.md"
    edited.write_text(edited.read_text() + "\n\nOne more tip, for the command tests.\n")
    pipeline.engine().run_pending()
    code, out, err = _ingest(pipeline, capsys, "changes", "--db", db, "--plan", "default")
    assert code == 0, err
    assert "troubleshooting.md" in out

    code, out, err = _ingest(pipeline, capsys, "export", "--db", db, "--plan", "default", "--out",
                             str(tmp_path / "export"), "--format", "jsonl")  # fmt: skip
    assert code == 0, err
    assert "chunks:" in out and (tmp_path / "export" / "chunks.jsonl").stat().st_size > 0

    code, out, err = _ingest(pipeline, capsys, "verify", "--db", db, "--json")
    assert code == 0, err
    assert json.loads(out)["exact_slices[child]"] == []

    code, out, err = _ingest(pipeline, capsys, "search", "how do I change the chunk size", "--db", db,
                             "--plans", plans, "-k", "3", "--json")  # fmt: skip
    assert code == 0, err
    found = json.loads(out)
    assert found["plan"] == key and len(found["hits"]) == 3
