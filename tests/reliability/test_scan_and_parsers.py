"""Guards that need no Dagster run: the scan never follows a link or reads a special file, and a
damaged PDF page is a ParseError (it was an uncaught PdfiumError, recorded as a parser crash)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chunking.errors import ParseError
from chunking.parsers import parse_file
from ingest_assets.engine import IngestEngine
from ingest_assets.plans import load_plans
from ingest_assets.store import IngestStore
from tests.reliability.conftest import write_plans
from tests.reliability.corpus import CLEAN_TEXT, SECRET, _corrupt_pdf


@pytest.mark.timeout(60)  # without the guard, hashing the FIFO blocks forever
def test_scan_skips_links_inside_and_outside_and_special_files(tmp_path: Path) -> None:
    inbox, outside = tmp_path / "inbox", tmp_path / "outside"
    inbox.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text(f"# S\n\n{SECRET}\n")
    (inbox / "good.md").write_text(CLEAN_TEXT)
    (inbox / "out.md").symlink_to(outside / "secret.md")
    (inbox / "dotdot.md").symlink_to(Path("..") / "outside" / "secret.md")
    (inbox / "dir").symlink_to(outside, target_is_directory=True)
    (inbox / "again.md").symlink_to(inbox / "good.md")  # same file twice: used to break the scan
    os.mkfifo(inbox / "fifo.md")
    plans = load_plans(write_plans(tmp_path / "p.yaml"))
    engine = IngestEngine(IngestStore(tmp_path / "i.duckdb"), inbox, plans)
    stats = engine.scan().total
    assert stats.files == 1 and stats.new == 1 and stats.skipped == 5
    assert engine.store.query("SELECT uri FROM sources") == [((inbox / "good.md").as_uri(),)]


def test_scan_through_a_linked_inbox_keeps_files_inside_it(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.md").write_text(CLEAN_TEXT)
    (tmp_path / "alias").symlink_to(real, target_is_directory=True)
    engine = IngestEngine(IngestStore(tmp_path / "i.duckdb"), tmp_path / "alias", [])
    assert engine.scan().total.files == 1  # the inbox itself may be a link; its files are read


def test_damaged_pdf_page_is_a_parse_error_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "damaged.pdf"
    path.write_bytes(_corrupt_pdf())
    with pytest.raises(ParseError, match="corrupt or truncated") as info:
        parse_file(path)
    assert "re-download or re-export" in info.value.hint
