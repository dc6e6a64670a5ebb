"""Every ``ingest`` command on a DuckLake store, as on a DuckDB file: ``plans`` (with
each key's state, and ``--diff``), ``changes``, ``export``, ``verify`` and ``search`` take ``--db`` as
the store's location and print the same things on both backends; ``run`` and ``shards`` take the
store, inbox and plans file from their options and name the inbox entries the scan skips."""

from __future__ import annotations

import itertools
import json
import os
import shutil
from pathlib import Path

import pytest

from chunking import Document
from ingest_assets.cli import main
from ingest_assets.engine import shard_of
from ingest_assets.engine.scan import SKIPPED_SHOWN
from tests.ingest.conftest import Pipeline, plan_spec
from tests.lake.postgres import on_both_backends

ROOT = Path(__file__).resolve().parents[2]

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
    assert f"plan {new_key}: not in the store yet (the next run builds it)" in out

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
                             "-k", "3", "--json")  # fmt: skip
    assert code == 0, err
    found = json.loads(out)
    assert found["plan"] == key and len(found["hits"]) == 3


def test_ingest_run_names_the_skipped_inbox_entries_with_nothing_to_do(
    pipeline: Pipeline, capsys: pytest.CaptureFixture[str]
) -> None:
    pipeline.engine().run_pending()  # all ingested: links and a pipe are no work for the next run
    inbox = pipeline.inbox.resolve()
    (inbox / "dangling.md").symlink_to(inbox / "gone.md")
    os.mkfifo(inbox / "pipe.txt")
    for n in range(SKIPPED_SHOWN):
        (inbox / f"link-{n:02}.md").symlink_to(inbox / "getting-started.md")
    code, out, err = _ingest(pipeline, capsys, "run", "--inbox", str(inbox), "--db", str(pipeline.db),
                             "--plans", str(pipeline.plans_file), "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["runs"] == 0
    link = "a link (links are never followed: copy the file into the inbox)"
    named = [f"{inbox / 'dangling.md'}: {link}"] + [
        f"{inbox / f'link-{n:02}.md'}: {link}" for n in range(SKIPPED_SHOWN - 1)
    ]
    assert err.splitlines() == [
        *(f"ingest run: skipped {line}" for line in named),
        f"ingest run: skipped 2 more inbox entries ({SKIPPED_SHOWN + 2} in all; none of them is read)",
    ]
    for path in inbox.glob("link-*.md"):
        path.unlink()
    code, _, err = _ingest(pipeline, capsys, "run", "--inbox", str(inbox), "--db", str(pipeline.db),
                           "--plans", str(pipeline.plans_file))  # fmt: skip
    assert code == 0 and err.splitlines() == [
        f"ingest run: skipped {inbox / 'dangling.md'}: {link}",
        f"ingest run: skipped {inbox / 'pipe.txt'}: not a regular file (a pipe, socket or device)",
    ]


def test_a_file_name_that_is_not_utf8_is_named_and_the_rest_ingested(
    pipeline: Pipeline, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file named in Latin-1 (``caf\\xe9.md``) stopped ``ingest run``, ``plans --diff`` and
    every tick of the sensor with "'utf-8' codec can't encode character '\\udce9'", naming no
    file, and no other file was ingested while it was there (a new user's review). It is
    skipped and named, with its undecodable byte escaped, and the rest goes on."""
    inbox = pipeline.inbox.resolve()
    with open(os.path.join(os.fsencode(inbox), b"caf\xe9.md"), "wb") as handle:
        handle.write(b"# Latin-1 name\n")
    (inbox / "another.md").write_text("# Another\n\nA file beside it.\n")
    common = ("--inbox", str(inbox), "--db", str(pipeline.db), "--plans", str(pipeline.plans_file))
    code, _, err = _ingest(pipeline, capsys, "plans", "--diff", *common)
    assert code == 0, err
    code, _, err = _ingest(pipeline, capsys, "run", *common, "--json")
    assert code == 0, err
    assert f"ingest run: skipped {inbox}/caf\\xe9.md: a name that is not UTF-8 (rename the file)" in err
    ingested = "SELECT count(*) FROM current_documents WHERE source_uri LIKE '%another.md'"
    assert pipeline.rows(ingested) == [(1,)]


def test_ingest_shards_runs_the_store_inbox_and_plans_of_its_options(
    pipeline: Pipeline, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copyfile(ROOT / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    for variable in ("INGEST_INBOX", "INGEST_STORE", "INGEST_DUCKDB", "INGEST_PLANS"):
        monkeypatch.setenv(variable, str(tmp_path / "not_these"))  # the options win
    inbox = pipeline.inbox.resolve()
    # Names until one falls in shard 00 and one outside it (the shard hashes the path, which
    # moves with the test's temporary folder: a fixed number of names can miss shard 00).
    links = (inbox / f"link-{n}.md" for n in itertools.count())
    inside = next(p for p in links if shard_of(Document.node_id_for(p.as_uri())) == "00")
    outside = next(p for p in links if shard_of(Document.node_id_for(p.as_uri())) != "00")
    for link in (inside, outside):
        link.symlink_to(inbox / "getting-started.md")
    files = sum(1 for p in inbox.iterdir() if p.is_file() and not p.is_symlink()
                and shard_of(Document.node_id_for(p.as_uri())) == "00")  # fmt: skip
    code, out, err = _ingest(pipeline, capsys, "shards", "00", "--inbox", str(inbox), "--db",
                             str(pipeline.db), "--plans", str(pipeline.plans_file))  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    assert report["00"]["sources"]["files"] == files and report["00"]["sources"]["skipped"] == 1
    assert pipeline.rows("SELECT DISTINCT shard FROM sources") == ([("00",)] if files else [])
    # The scan of shard 00 names its link; the other is another shard's.
    assert f"ingest shards: skipped {inside}: a link (links are never followed" in err
    assert str(outside) not in err
    assert not (tmp_path / "not_these").exists()
