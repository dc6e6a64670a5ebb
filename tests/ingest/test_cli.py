"""The ``ingest`` command line is one argparse parser: every command is a subcommand with its
own help, an unknown command is an argparse error (exit 2), and ``python -m ingest_assets.cli``
is the console script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ingest_assets.cli import main
from ingest_assets.cli.common import DB_HELP
from ingest_assets.cli.parser import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = {"run", "plans", "changes", "export", "verify", "search", "inspect", "shards", "ui"}


def test_every_command_is_a_subcommand_of_one_parser() -> None:
    assert set(COMMANDS) == EXPECTED
    parser = build_parser()
    (subcommands,) = [a for a in parser._actions if a.dest == "command"]
    assert set(subcommands.choices) == EXPECTED  # type: ignore[arg-type]


@pytest.mark.parametrize("command", sorted(EXPECTED))
def test_every_subcommand_has_its_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: ingest {command}")
    assert "--json" in out or command in ("inspect", "shards", "ui")  # text only; JSON only; a server


def test_the_flags_of_each_command_stay(capsys: pytest.CaptureFixture[str]) -> None:
    flags = {
        "run": [
            "--inbox",
            "--db",
            "--plans",
            "--json",
            "--verbose",
            "--max-bytes",
            "--max-pages",
            "--max-rows",
        ],
        "plans": ["--plans", "--json", "--diff", "--db", "--inbox"],
        "changes": ["--db", "--since", "--run", "--plan", "--chunks", "--json"],
        "export": ["--db", "--plan", "--format", "--out", "--since", "--json"],
        "verify": ["--db", "--json"],
        "search": ["--plan", "-k", "--db", "--json"],
        "inspect": ["--plans", "--plan", "--kind", "--level", "--full", "--width"],
        "shards": ["SHARD", "--inbox", "--db", "--plans"],
        "ui": ["--inbox", "--db", "--plans", "--host", "--port"],
    }
    for command, expected in flags.items():
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = capsys.readouterr().out
        assert [f for f in expected if f not in out] == [], command


def _option_help(command: str) -> dict[str, str | None]:
    """Each option of ``command``'s subparser with its help text."""
    (subcommands,) = [a for a in build_parser()._actions if a.dest == "command"]
    sub = subcommands.choices[command]  # type: ignore[index]
    return {flag: action.help for action in sub._actions for flag in action.option_strings}


def test_every_db_option_takes_a_duckdb_file_or_a_lake_in_one_wording() -> None:
    with_db = {command: _option_help(command).get("--db") for command in sorted(EXPECTED)}
    with_db = {command: text for command, text in with_db.items() if text is not None}
    assert set(with_db) == EXPECTED - {"inspect"}
    assert set(with_db.values()) == {DB_HELP}
    assert "DuckDB file" in DB_HELP and "ducklake:postgres:<conninfo>" in DB_HELP
    assert "$INGEST_STORE" in DB_HELP and "$INGEST_DUCKDB" in DB_HELP


def test_shards_has_the_store_inbox_and_plans_options_of_run(capsys: pytest.CaptureFixture[str]) -> None:
    run, shards = _option_help("run"), _option_help("shards")
    assert {flag: shards[flag] for flag in ("--inbox", "--db", "--plans")} == {
        flag: run[flag] for flag in ("--inbox", "--db", "--plans")
    }
    with pytest.raises(SystemExit):
        main(["shards", "--help"])
    out = capsys.readouterr().out
    assert "[--inbox DIR] [--db STORE] [--plans FILE]" in " ".join(out.split())


def test_an_unknown_command_is_an_error_naming_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["frobnicate"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'frobnicate'" in err and "run" in err and "shards" in err


def test_no_command_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([])
    assert exit_.value.code == 2
    assert "the following arguments are required: command" in capsys.readouterr().err


def test_an_unknown_shard_fails_with_the_shards_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["shards", "09"]) == 1
    assert "unknown shards ['09']: the shards are 00, 01" in capsys.readouterr().err


def test_python_dash_m_runs_the_same_parser() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ingest_assets.cli", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert all(command in done.stdout for command in EXPECTED)
