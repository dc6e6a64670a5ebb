"""The typed contracts between layers: limit errors, step results, metadata, settings, the inbox walk."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
from pathlib import Path

import pytest
from dagster import MetadataValue

from chunking import LimitExceeded, ParseError
from chunking.parsers import ParseLimits, parse_bytes
from ingest_assets.defs.metadata import md_cell, result_metadata
from ingest_assets.engine import (
    ChunkResult,
    FailedFile,
    GraphResult,
    IngestEngine,
    ParseResult,
    ScanResult,
    ShardResults,
    combined,
)
from ingest_assets.engine.parse import limit_message
from ingest_assets.engine.results import counts, from_counts
from ingest_assets.inbox import file_name, walk_inbox
from ingest_assets.settings import ENVIRONMENT, Settings
from ingest_assets.settings import __doc__ as SETTINGS_DOC
from ingest_assets.store import IngestStore, SetSummary


def test_a_refusal_over_a_limit_carries_the_limit_and_survives_a_worker() -> None:
    with pytest.raises(LimitExceeded) as caught:
        parse_bytes(b"x" * 100, kind="text", source_uri="file:///big.txt", limits=ParseLimits(max_bytes=10))
    error = caught.value
    assert isinstance(error, ParseError)
    assert (error.limit, error.allowed, error.value, error.source) == (
        "max_bytes",
        10,
        100,
        "file:///big.txt",
    )
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is LimitExceeded and (again.limit, again.allowed, again.value) == (
        "max_bytes",
        10,
        100,
    )
    assert str(again) == str(error)
    message = limit_message(error)
    assert "INGEST_MAX_BYTES=100" in message and "ingest run --max-bytes 100" in message


def test_shard_results_add_up_counts_lists_and_kinds() -> None:
    results = ShardResults(
        ParseResult,
        {
            "00": ParseResult(
                parsed=2, kinds={"pdf": 1, "text": 1}, failures=[FailedFile("file:///a", "bad")]
            ),
            "01": ParseResult(
                parsed=1, failed=1, kinds={"text": 1}, failures=[FailedFile("file:///b", "worse")]
            ),
        },
    )
    total = results.total
    assert (total.parsed, total.failed, total.kinds) == (3, 1, {"pdf": 1, "text": 2})
    assert [f.source_uri for f in total.failures] == ["file:///a", "file:///b"]
    assert results["00"].parsed == 2  # the parts are left as they were
    scans = combined(
        [ScanResult(files=2, skipped=1, skipped_files=["a: a link"]), ScanResult(files=1, skipped=2)],
        ScanResult(),
    )
    assert (scans.files, scans.skipped, scans.skipped_files) == (3, 3, ["a: a link"])  # each in its shard


def test_every_result_goes_through_the_stores_record_and_back() -> None:
    """What ``step_results`` records of a result (run summaries read it) reads back equal, but
    for the lists the store keeps elsewhere; the metadata the UI shows has each number."""
    summary = SetSummary(3, 30, 3, 5, 15, ((5, 0, "first | piece"), (10, 1, "second")))
    examples = [
        ScanResult(files=4, new=1, changed=1, unchanged=2, deleted=1, skipped=2),
        ParseResult(parsed=2, unchanged=1, failed=1, kinds={"markdown": 2}),
        ChunkResult(
            "child",
            documents=3,
            created=1,
            reused=2,
            waiting=1,
            chunker_calls=1,
            sets={"k": ("file:///in/notes%20one.md", summary)},
        ),
        GraphResult(documents=3, created=1, reused=1, waiting=1, rows_written=12),
    ]
    for result in examples:
        back = from_counts(type(result), json.loads(json.dumps(counts(result))))
        for f in dataclasses.fields(result):
            if f.name not in ("failures", "sets", "skipped_files"):
                assert getattr(back, f.name) == getattr(result, f.name), (type(result).__name__, f.name)
        metadata = result_metadata(result)
        assert all(metadata[name] == value for name, value in counts(result).items() if name != "role"
                   and not isinstance(value, dict))  # fmt: skip
    chunk_meta = result_metadata(examples[2])
    assert (chunk_meta["chunks"], chunk_meta["tokens_min"], chunk_meta["tokens_max"]) == (3, 5, 15)
    preview = chunk_meta["preview"].value
    assert "| notes one.md | 0 | 5 | first \\| piece |" in preview  # the file name, the pipe kept


def test_metadata_cells_stay_on_one_line_and_keep_pipes() -> None:
    assert md_cell("a |\nb") == "a \\| b"
    assert file_name("file:///x/y/r%C3%A9sum%C3%A9.pdf") == "résumé.pdf"
    failed = result_metadata(ParseResult(failed=1, failures=[FailedFile("file:///x/bad.pdf", "not a PDF")]))
    assert (
        isinstance(failed["failures"], type(MetadataValue.md(""))) and "bad.pdf" in failed["failures"].value
    )


def test_settings_name_every_variable_in_one_place(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in [*ENVIRONMENT.values(), "INGEST_STORE"]:
        monkeypatch.delenv(variable, raising=False)
    defaults = Settings.model_construct()  # the fields' defaults, no environment read
    assert set(ENVIRONMENT) == set(Settings.model_fields)  # every setting has its variable
    for variable in ENVIRONMENT.values():
        assert f"``{variable}``" in SETTINGS_DOC  # the table in the module docstring lists it
    environ = {
        "INGEST_DUCKDB": "/tmp/x.duckdb",
        "INGEST_MAX_ROWS": "1_000",
        "INGEST_WORKERS": "0",
        "INGEST_DEBUG": "1",
        "INGEST_SENSOR_SECONDS": "5",
    }
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    read = Settings.from_env()
    assert (read.database, read.max_rows, read.worker_count(), read.debug, read.sensor_seconds) == (
        "/tmp/x.duckdb", 1000, 1, True, 5
    )  # fmt: skip
    assert Settings.from_env(database="/tmp/y.duckdb").database == "/tmp/y.duckdb"
    assert read.updated(max_rows=5, workers=None).max_rows == 5 and read.updated(workers=None) is read
    monkeypatch.setenv("INGEST_STORE", "ducklake:postgres:dbname=x")  # names the store over INGEST_DUCKDB
    assert Settings.from_env().database == "ducklake:postgres:dbname=x"
    for name in environ:
        monkeypatch.delenv(name)
    monkeypatch.delenv("INGEST_STORE")
    assert Settings.from_env() == defaults
    monkeypatch.setenv("INGEST_SENSOR_SECONDS", "soon")
    with pytest.raises(ValueError, match="INGEST_SENSOR_SECONDS='soon' is not a positive whole number"):
        Settings.from_env()
    with pytest.raises(ValueError, match="INGEST_MAX_ROWS=0 is not a positive whole number"):
        defaults.updated(max_rows=0)


def test_the_inbox_walk_skips_links_specials_and_hidden_files(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    (inbox / "sub").mkdir(parents=True)
    (inbox / "a.md").write_text("# A\n")
    (inbox / "sub" / "b.txt").write_text("b\n")
    (inbox / ".hidden.md").write_text("no\n")
    (inbox / "dangling.md").symlink_to(tmp_path / "gone.md")
    (inbox / "linked-dir").symlink_to(inbox / "sub")
    os.mkfifo(inbox / "pipe")
    walk = walk_inbox(inbox)
    assert [f.path.name for f in walk.files] == ["a.md", "b.txt"] and walk.skipped == 3
    engine = IngestEngine(IngestStore(tmp_path / "s.duckdb"), inbox, [])
    assert engine.scan().total.files == 2 and engine.pending().documents  # the sensor's view too
    by_shard = engine.scan()
    assert by_shard.total.skipped == 3
    # Each skipped entry is counted once, in one shard, and named with why.
    named = [(shard, text) for shard, result in by_shard.items() for text in result.skipped_files]
    assert sorted(text.split(": ")[0].rsplit("/", 1)[1] for _, text in named) == [
        "dangling.md",
        "linked-dir",
        "pipe",
    ]
    assert sum(result.skipped for result in by_shard.values()) == 3
    assert any("links are never followed" in text for _, text in named)


def test_the_inbox_walk_names_each_skipped_entry_with_why_in_path_order(tmp_path: Path) -> None:
    """What ``ingest run``, ``ingest shards`` and the sensor name: every entry the scan skips,
    hidden ones left out, sorted by path."""
    inbox = tmp_path / "inbox"
    (inbox / "sub" / ".hidden").mkdir(parents=True)
    (inbox / "a.md").write_text("# A\n")
    (inbox / "sub" / "b.txt").write_text("b\n")
    (inbox / "sub" / ".hidden" / "link.md").symlink_to(inbox / "a.md")  # hidden: not an entry
    (inbox / "sub" / "dangling.md").symlink_to(tmp_path / "gone.md")
    (inbox / "sub" / "again.md").symlink_to(inbox / "a.md")
    (inbox / "linked-dir").symlink_to(inbox / "sub")
    os.mkfifo(inbox / "sub" / "pipe")
    with open(os.path.join(os.fsencode(inbox), b"latin-\xe9.md"), "wb") as handle:
        handle.write(b"# name not UTF-8\n")
    walk = walk_inbox(inbox)
    assert [f.path.name for f in walk.files] == ["a.md", "b.txt"]
    assert [
        (path.relative_to(inbox.resolve()).as_posix(), why.split(" (")[0]) for path, why in walk.skipped_paths
    ] == [
        ("latin-\udce9.md", "a name that is not UTF-8"),
        ("linked-dir", "a link to a folder"),
        ("sub/again.md", "a link"),
        ("sub/dangling.md", "a link"),
        ("sub/pipe", "not a regular file"),
    ]


def _as_a_user(command: list[str]) -> list[str]:
    """``command`` run with file permissions checked: root reads and writes any file, so it
    runs without that right."""
    if os.geteuid() == 0:
        return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
    return command


def test_an_unreadable_file_is_named_and_the_rest_of_the_inbox_is_ingested(tmp_path: Path) -> None:
    """One file the process may not read stopped the whole inbox (``Permission denied`` from
    the scan's hash, nothing ingested); now it is skipped and named, the rest goes on. Run as
    ``ingest run`` in a process without the root's right to read any file."""
    import subprocess
    import sys

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "readable.md").write_text("# Readable\n\nA file anyone may read.\n")
    locked = inbox / "locked.md"
    locked.write_text("# Locked\n\nNobody may read this.\n")
    locked.chmod(0)
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text((Path(__file__).resolve().parents[2] / "dagster.yaml").read_text())
    command = [sys.executable, "-m", "ingest_assets.cli", "run", "--json", "--inbox", str(inbox)]
    command += ["--db", str(tmp_path / "store.duckdb")]
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    done = subprocess.run(
        _as_a_user(command), capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["documents"]["parsed"] == 1 and summary["current"]["documents"] == 1
    assert summary["skipped"] == [f"{locked.resolve()}: cannot be read (Permission denied; make it readable)"]
    assert f"ingest run: skipped {locked.resolve()}: cannot be read" in done.stderr


def test_a_full_disk_is_named_with_the_fix_and_the_store_works_once_there_is_room(tmp_path: Path) -> None:
    """A store on a full disk failed with Dagster's 'Error occurred while executing op' and
    nothing after it (the cause was cut), under the step's stack trace. Now the run's failure
    is one message that names the store, the full disk and the fix; with room again the next
    run completes and the store verifies. A small tmpfs
    in a mount namespace of its own (gone with the process), as ``ingest`` runs."""
    import shlex
    import subprocess
    import sys

    sample = Path(__file__).resolve().parents[2] / "data" / "sample"
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text((Path(__file__).resolve().parents[2] / "dagster.yaml").read_text())
    disk = tmp_path / "disk"
    disk.mkdir()
    ingest = f"{shlex.quote(sys.executable)} -m ingest_assets.cli"
    store = shlex.quote(str(disk / "store.duckdb"))
    script = f"""
        mount -t tmpfs -o size=1M tmpfs {shlex.quote(str(disk))} || exit 90
        {ingest} run --inbox {shlex.quote(str(sample))} --db {store} 2>&1; echo "exit=$?"
        mount -o remount,size=64M {shlex.quote(str(disk))} || exit 91
        {ingest} run --inbox {shlex.quote(str(sample))} --db {store} --json > /dev/null 2>&1; echo "exit=$?"
        {ingest} verify --db {store} 2>&1; echo "exit=$?"
    """
    unshare = ["unshare", "--mount"] if os.geteuid() == 0 else ["unshare", "--map-root-user", "--mount"]
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    done = subprocess.run(
        [*unshare, "bash", "-c", script], capture_output=True, text=True, env=env, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    full_disk = f"{disk / 'store.duckdb'}: the disk holding the store is full ("
    assert full_disk in out and "No space left on device); free space there, or pass another --db" in out
    assert [line for line in out.splitlines() if line.startswith("exit=")] == ["exit=1", "exit=0", "exit=0"]
    assert "unexpected error" not in out
    # The failure is ingest's line alone: Dagster's ERROR event and the step's stack trace (a
    # hundred lines above it) stay in the run's log, for the UI.
    assert out.startswith("ingest: run ") and "Stack Trace" not in out and "dagster - ERROR" not in out, out


def test_a_store_this_user_may_only_read_serves_every_reading_command(tmp_path: Path) -> None:
    """A store file the user may read but not write (a shared store, a copy made read-only)
    was refused by every command, ``verify`` and ``changes`` too ('the store cannot be
    written'). The commands that only read now work on it; a run that has work to write is
    refused with the fix, and the store is unchanged."""
    import shutil
    import subprocess
    import sys

    inbox = tmp_path / "inbox"
    shutil.copytree(Path(__file__).resolve().parents[2] / "data" / "sample", inbox)
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text((Path(__file__).resolve().parents[2] / "dagster.yaml").read_text())
    store = tmp_path / "store.duckdb"
    env = {**os.environ, "DAGSTER_HOME": str(home)}

    def ingest(*args: str) -> subprocess.CompletedProcess[str]:
        command = _as_a_user([sys.executable, "-m", "ingest_assets.cli", *args, "--db", str(store)])
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=False)

    assert ingest("run", "--inbox", str(inbox)).returncode == 0
    store.chmod(0o444)
    before = store.read_bytes()
    for args, shown in (
        (["verify"], "edges_resolve: ok"),
        (["changes", "--plan", "default"], "getting-started.md"),
        (["search", "orchard harvest"], "orchard"),
        (["export", "--plan", "default", "--out", str(tmp_path / "export")], "in view"),
    ):
        done = ingest(*args)
        assert done.returncode == 0 and shown in done.stdout, (args, done.stderr)
    (inbox / "new.md").write_text("# New\n\nA file added after the store was made read-only.\n")
    done = ingest("run", "--inbox", str(inbox))
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr  # before any run starts
    assert f"{store}: the store cannot be written (" in done.stderr
    assert "make the file and its folder writable by this user, or pass another --db" in done.stderr
    assert store.read_bytes() == before
