"""What ``ingest`` says to input it cannot use: one line on stderr naming the value and the fix,
a non-zero exit, and nothing created (no store, no Dagster run); a closed stdout (``| head``)
ends a command without a word; a run is named by its id or the start of it the Dagster UI shows."""

from __future__ import annotations

import errno
import io
import json
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from ingest_assets.cli import main
from ingest_assets.store import IngestStore

ROOT = Path(__file__).resolve().parents[2]
PLANS = str(ROOT / "plans.yaml")
NOT_A_FOLDER = "is not a folder; pass --inbox or set INGEST_INBOX"
NO_STORE = "no store file there; run `ingest run` first, or pass --db / set INGEST_DUCKDB"


@pytest.fixture
def environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A missing inbox and store in the environment, and a Dagster home of this test alone."""
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    monkeypatch.setenv("INGEST_INBOX", str(tmp_path / "no_inbox"))
    monkeypatch.setenv("INGEST_DUCKDB", str(tmp_path / "no_store" / "x.duckdb"))
    monkeypatch.setenv("INGEST_PLANS", PLANS)
    return tmp_path


def _created(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize(
    "argv",
    [["run", "--inbox", "{tmp}/nonexist_inbox", "--db", "{tmp}/x/x.duckdb"], ["shards", "00"]],
    ids=["run", "shards"],
)
def test_a_run_over_a_missing_inbox_says_so_in_one_line_and_creates_nothing(
    environment: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([a.format(tmp=environment) for a in argv]) == 1
    out, err = capsys.readouterr()
    inbox = environment / ("nonexist_inbox" if argv[0] == "run" else "no_inbox")
    assert (out, err) == ("", f"ingest: inbox {inbox} {NOT_A_FOLDER}\n")
    assert _created(environment) == []  # no store, no Dagster home (no run launched)


# The commands that need a store and only read it.
READING = [
    ["search", "foo"],
    ["changes"],
    ["verify"],
    ["export", "--plan", "default", "--out", "{tmp}/out"],
]


@pytest.mark.parametrize("argv", READING, ids=lambda argv: argv[0])
def test_a_read_only_command_given_a_missing_store_creates_none(
    environment: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    database = environment / "nonexistent_dir" / "x.duckdb"
    assert main([*(a.format(tmp=environment) for a in argv), "--db", str(database)]) == 1
    assert f"--db {database}: {NO_STORE}" in capsys.readouterr().err
    assert _created(environment) == []


@pytest.mark.parametrize(
    "argv",
    [*READING, ["plans"], ["plans", "--diff", "--inbox", str(ROOT / "data" / "sample")]],
    ids=lambda argv: argv[0] + ("-diff" if "--diff" in argv else ""),
)
def test_a_read_only_command_leaves_an_empty_duckdb_file_as_it_was(
    environment: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty DuckDB file (made by `duckdb.connect`) was given the whole schema (12 KiB ->
    524 KiB, 35 tables and views) by every command that only reads, ``plans --diff`` too while
    it said 'nothing was written'. It is no store: the commands say so, or (``plans``, ``plans
    --diff``) answer as before a first run, and the file is byte for byte as it was."""
    import duckdb

    database = environment / "empty.duckdb"
    duckdb.connect(str(database)).close()
    before = database.read_bytes()
    code = main([*(a.format(tmp=environment) for a in argv), "--db", str(database)])
    out, err = capsys.readouterr()
    if argv[0] == "plans":
        assert code == 0 and "no store yet" in out, err
    else:
        assert (
            code == 1
            and f"--db {database}: an empty DuckDB file, no store yet; run `ingest run` first" in err
        )
    assert database.read_bytes() == before
    assert _created(environment) == ["empty.duckdb"]


def test_plans_diff_before_the_first_run_forecasts_it_and_creates_nothing(
    environment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``plans --diff`` is the cost of a run before it runs; before the first one it refused
    ('no store file there'). It now says what a first run would parse and build."""
    database = environment / "nonexistent_dir" / "x.duckdb"
    argv = ["plans", "--diff", "--inbox", str(ROOT / "data" / "sample"), "--db", str(database), "--json"]
    assert main(argv) == 0
    forecast = json.loads(capsys.readouterr().out)
    assert forecast["files"]["new"] == len([p for p in (ROOT / "data" / "sample").iterdir() if p.is_file()])
    assert _created(environment) == []


def test_plans_without_a_store_lists_the_plans_and_creates_none(
    environment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plans", "--db", str(environment / "nonexistent_dir" / "x.duckdb")]) == 0
    assert "no store yet" in capsys.readouterr().out
    assert _created(environment) == []


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_search_refuses_an_empty_query(
    environment: Path, query: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", query]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", "ingest search: the query is empty; pass the text to search for\n")


class _ClosedPipe(io.StringIO):
    """A stdout whose reader has left."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")


def test_a_closed_stdout_ends_a_command_quietly(
    environment: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main(["plans"]) == 1
    assert capsys.readouterr().err == ""


def test_a_closed_pipe_leaves_no_error_at_exit_either(environment: Path) -> None:
    """What a command printed stays in stdout's buffer until Python's flush at exit, which
    would fail then ("Exception ignored ... BrokenPipeError", exit 120)."""
    child = subprocess.Popen(
        [sys.executable, "-m", "ingest_assets.cli", "plans"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    child.stdout.close()  # `| head -1` gone before the first line is written
    err = child.communicate(timeout=120)[1]
    assert (child.returncode, err) == (1, "")


# Two Dagster runs whose ids start alike (the UI shows 8 characters), and one more.
RUNS = [
    "2b3c4d5e-0000-4000-8000-000000000001",
    "15a76050-1111-4000-8000-000000000002",
    "15a76050-2222-4000-8000-000000000003",
]


@pytest.fixture
def recorded(tmp_path: Path) -> str:
    """A store whose ``chunk_changes`` hold one added chunk per run of :data:`RUNS`, in order."""
    store = IngestStore(tmp_path / "changes.duckdb")
    store.check()
    start = datetime(2025, 1, 1, 12)
    with store.connect() as con:
        for n, run_id in enumerate(RUNS):
            con.execute(
                "INSERT INTO chunk_changes VALUES (?, 'k', uuid(), uuid(), 0, 'added', ?)",
                [run_id, start + timedelta(minutes=n)],
            )
    return str(store.path)


def _runs(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [json.loads(line)["run_id"] for line in capsys.readouterr().out.splitlines()]


def test_changes_names_a_run_by_a_unique_start_of_its_id(
    recorded: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["changes", "--db", recorded, "--json"]
    assert main([*argv, "--since", "2b3c4d5e"]) == 0
    assert _runs(capsys) == RUNS[1:]
    assert main([*argv, "--since", "15A76050-1111"]) == 0  # as pasted, in capitals
    assert _runs(capsys) == RUNS[2:]
    assert main([*argv, "--since", RUNS[1]]) == 0
    assert _runs(capsys) == RUNS[2:]
    assert main([*argv, "--run", "15a76050-2"]) == 0
    assert _runs(capsys) == RUNS[2:]


def test_changes_refuses_an_ambiguous_or_short_start_of_a_run_id(
    recorded: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for flag in ("--since", "--run"):
        assert main(["changes", "--db", recorded, flag, "15a76050"]) == 1
        err = capsys.readouterr().err
        assert f"{flag} 15a76050: ambiguous, it starts the ids of 2 runs" in err
        assert f"({RUNS[1]}, {RUNS[2]}); pass more of the run id" in err
    assert main(["changes", "--db", recorded, "--since", "2b3c4d5"]) == 1  # 7 characters: no run
    assert "--since 2b3c4d5: neither a time" in capsys.readouterr().err
