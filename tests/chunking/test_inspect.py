"""``python -m chunking.inspect``: a plan's chunks of one file, read without the pipeline."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from chunking.inspect import histogram, main
from chunking.plans import leveler_for, plan_routes

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
PLANS = ROOT / "plans.yaml"


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main([*argv], out=out), out.getvalue()


def test_inspect_prints_both_levels_with_kinds_and_a_histogram() -> None:
    code, text = run(str(SAMPLE / "getting-started.md"), "--plans", str(PLANS))
    assert code == 0
    assert "== parents:" in text and "== children:" in text
    assert "table_row" in text and "tok" in text
    assert text.count("sizes (tokens):") == 2
    assert "budget 1024" in text and "budget 256" in text


def test_inspect_chat_shows_speakers_and_turns() -> None:
    code, text = run(str(SAMPLE / "chat-allotment.json"), "--plans", str(PLANS), "--level", "children")
    assert code == 0 and "turns 0-" in text and "== parents" not in text


def test_inspect_full_prints_the_contextual_text() -> None:
    code, text = run(
        str(SAMPLE / "getting-started.md"), "--plans", str(PLANS), "--full", "--level", "parents"
    )
    assert code == 0 and "    ## Supported formats" in text


def test_inspect_unknown_plan_or_file_fails_with_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(str(SAMPLE / "getting-started.md"), "--plans", str(PLANS), "--plan", "nope")[0] == 1
    assert "no plan 'nope'" in capsys.readouterr().err
    assert run(str(SAMPLE / "missing.md"), "--plans", str(PLANS))[0] == 1


def test_plan_routes_build_the_chunkers_the_plans_file_names() -> None:
    routes = plan_routes(PLANS)
    chat, other = leveler_for(routes, "chat"), leveler_for(routes, "markdown")
    assert chat is not None and other is not None
    assert (chat.parent.strategy, chat.child.strategy) == ("turn-window", "recursive")
    assert (other.parent.chunk_size, other.child.chunk_size) == (1024, 256)


def test_histogram_buckets_counts_up_to_the_budget() -> None:
    lines = histogram([1, 10, 100, 250, 256], 256, buckets=4)
    assert [line.split()[1] for line in lines[:4]] == ["2", "1", "0", "2"]
    assert lines[3].split()[0].endswith("-256")
    assert "5 chunks" in lines[-1]


def test_inspect_never_imports_the_pipeline() -> None:
    code = (
        "import sys, chunking.inspect, chunking.plans; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('dagster', 'ingest_assets')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_inspect_labels_use_the_room_the_width_gives() -> None:
    """A wide line shows whole labels (half the room the other facts leave); the default and
    narrow widths keep the 40-character cut; the text start fills the rest of the line."""
    file = str(SAMPLE / "getting-started.md")
    code, wide = run(file, "--plans", str(PLANS), "--level", "parents", "--width", "200")
    assert code == 0
    assert "[Getting started with the ingestion pipeline > Supported formats] | ## Supported" in wide
    assert all(len(line) <= 200 for line in wide.splitlines() if line.startswith("#"))
    for width in ("110", "60"):
        code, narrow = run(file, "--plans", str(PLANS), "--level", "parents", "--width", width)
        assert code == 0 and "[Getting started with the ingestion pi...] | " in narrow


def test_a_cut_label_keeps_its_innermost_headings() -> None:
    """A label too long for the line was cut at its end, so every chunk of a document with a
    long title read "[Getting started with the ingestion pi...]" and the heading that says
    where the chunk is was lost (a new user's review). The outer headings give way to
    "... >" first; a label of one heading is cut at its end."""
    file = str(SAMPLE / "getting-started.md")
    code, narrow = run(file, "--plans", str(PLANS), "--level", "parents", "--width", "60")
    assert code == 0
    assert "[... > Supported formats] | " in narrow and "[... > What happens to a bad file] | " in narrow
    assert "[Getting started with the ingestion pi...] | " in narrow  # the title's own chunk
