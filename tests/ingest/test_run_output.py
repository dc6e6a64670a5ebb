"""What ``ingest run`` prints when something fails: each file a step failed on, each check that
failed, and a run's failure, in its own lines, without Dagster's log lines and stack traces
above them (the run's events keep those for the UI; ``-v`` shows Dagster's warnings)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from ingest_assets.cli import main
from ingest_assets.cli.progress import show_progress
from tests.ingest.conftest import Pipeline

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A ``DAGSTER_HOME`` with the project's instance settings, as a user's is."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copyfile(ROOT / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    # A -v run's log handler stays with the process (another test's, or this one's).
    show_progress(verbose=False, quiet=True)
    yield home
    show_progress(verbose=False, quiet=True)


def _run(pipeline: Pipeline, *extra: str) -> list[str]:
    return [
        "run",
        "--inbox",
        str(pipeline.inbox),
        "--db",
        str(pipeline.db),
        "--plans",
        str(pipeline.plans_file),
        *extra,
    ]


def test_files_that_failed_are_named_by_the_cli_alone(
    pipeline: Pipeline, home: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A file that cannot be parsed was named only by Dagster's console logger (a dated
    ``dagster - WARNING - documents_job - <run id> - ...`` line). It is named by ``ingest run``
    itself, with the fix, once; the JSON summary lists it with its step."""
    (pipeline.inbox / "binary.md").write_bytes(b"\x00\x01\x02binary")
    assert main(_run(pipeline, "--json")) == 0
    out, err = capfd.readouterr()
    uri = (pipeline.inbox / "binary.md").resolve().as_uri()
    assert err.splitlines() == [
        f"ingest run: failed {uri}: not a text file (no text encoding decodes it) (convert the file "
        "to UTF-8 text or to a supported format (Markdown, HTML, CSV, chat JSON, PDF), or move it out "
        "of the inbox)"
    ]
    summary = json.loads(out)
    assert summary["documents"]["failed"] == 1 and summary["failed_checks"] == []
    (failure,) = summary["failures"]
    assert (failure["uri"], failure["step"], failure["plan"]) == (uri, "documents", None)
    # With -v Dagster's warnings are shown too, as the runs go.
    (pipeline.inbox / "binary.md").write_bytes(b"\x00\x01\x03binary")
    assert main(_run(pipeline, "-v")) == 0
    assert "dagster - WARNING - documents_job" in capfd.readouterr().err


def test_files_still_failing_are_named_again_and_strict_exits_1(
    pipeline: Pipeline, home: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A file that failed was named by the run that failed on it, then never again: later runs
    said "2 failures (query ingest_failures)" with no name, and exited 0, so a script or CI
    could not tell (a new user's review). Every run names the files still failing (no run
    tries one again until it changes) after its own failures; ``--strict`` exits 1 while any
    file fails; the work of the others is stored and served either way."""
    (pipeline.inbox / "binary.md").write_bytes(b"\x00\x01\x02binary")
    assert main(_run(pipeline)) == 0
    capfd.readouterr()
    uri = (pipeline.inbox / "binary.md").resolve().as_uri()
    assert main(_run(pipeline, "--json")) == 0  # nothing to do: the file has not changed
    out, err = capfd.readouterr()
    assert err.splitlines() == [
        f"ingest run: still failing {uri}: not a text file (no text encoding decodes it) (convert the "
        "file to UTF-8 text or to a supported format (Markdown, HTML, CSV, chat JSON, PDF), or move it "
        "out of the inbox)"
    ]
    summary = json.loads(out)
    assert summary["failures"] == [] and summary["still_failing_count"] == 1
    assert [(f["uri"], f["step"]) for f in summary["still_failing"]] == [(uri, "documents")]
    assert main(_run(pipeline, "--strict")) == 1
    assert capfd.readouterr().err.splitlines()[-1] == "ingest run: 1 file failure(s) (--strict)"
    (pipeline.inbox / "binary.md").unlink()
    assert main(_run(pipeline, "--strict")) == 0
    assert capfd.readouterr().err == ""


def test_a_failed_check_is_named_and_the_run_exits_1(
    pipeline: Pipeline, home: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A contract check that found a broken row failed in the run's events only: ``ingest run``
    printed its summary and exited 0. It now names the check, the rule, the count and an
    example, says the work is stored and how to see every violation, and exits 1."""
    pipeline.run_engine()  # every set written, none verified yet
    note = sorted(pipeline.inbox.rglob("*.md"))[0]
    (chunk_id,) = pipeline.rows(  # an exact slice in another document, which the edit leaves current
        "SELECT c.id FROM current_chunks c JOIN current_documents d ON d.document_id = c.document_id "
        "WHERE c.level = 0 AND json_extract_string(c.provenance, '$.kind') = 'text' AND d.source_uri <> ? "
        "AND coalesce(json_extract(c.metadata, '$.exact_slice')::BOOLEAN, true) "
        "ORDER BY c.id LIMIT 1",
        note.resolve().as_uri(),
    )[0]
    with pipeline.store.transaction() as con:
        con.execute("UPDATE chunks SET text = 'tampered' WHERE id = ?", [chunk_id])
    note.write_text(note.read_text() + "\n\nOne more paragraph, for an edit.\n")
    assert main(_run(pipeline, "--json")) == 1
    out, err = capfd.readouterr()
    failed = json.loads(out)["failed_checks"]
    plan = pipeline.plans()[0].key
    assert len(failed) == 1 and failed[0].startswith(f"child_chunks contract (plan {plan}, shards 00..07): ")
    assert "exact_slices 1" in failed[0] and str(chunk_id) in failed[0]
    assert err.splitlines() == [
        f"ingest run: check failed: {failed[0]}",
        "ingest run: 1 check(s) failed; the work is stored. `ingest verify` lists every violation; "
        "the Dagster UI shows each check's result",
    ]


def test_ingest_shards_names_the_files_of_its_shards_still_failing(
    pipeline: Pipeline, home: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """``ingest shards`` names, as ``ingest run`` does, the files still failing from earlier
    runs, those of its own shards only (another process runs the others)."""
    from chunking import Document
    from ingest_assets.engine.keys import SHARDS, shard_of

    (pipeline.inbox / "binary.md").write_bytes(b"\x00\x01\x02binary")
    assert main(_run(pipeline)) == 0
    capfd.readouterr()
    uri = (pipeline.inbox / "binary.md").resolve().as_uri()
    mine = shard_of(Document.node_id_for(uri))
    other = next(shard for shard in SHARDS if shard != mine)
    common = ["--inbox", str(pipeline.inbox), "--db", str(pipeline.db), "--plans", str(pipeline.plans_file)]
    assert main(["shards", mine, *common]) == 0
    assert f"ingest shards: still failing {uri}: not a text file" in capfd.readouterr().err
    assert main(["shards", other, *common]) == 0
    assert uri not in capfd.readouterr().err
