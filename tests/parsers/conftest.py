"""Shared fixtures for the parser tests: the sample corpus, the shared corpus, invariant checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from chunking.document import Document

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture(scope="session")
def sample_dir() -> Path:
    """The shipped sample corpus (always present)."""
    return SAMPLE


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The shared real-document corpus; tests using it skip when it is absent."""
    if not (CORPUS / "MANIFEST.tsv").is_file():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return CORPUS


def assert_exact_offsets(document: Document) -> None:
    """Every offset-bearing unit and turn slices the document text to its own text."""
    for section in document.sections:
        for unit in section.units:
            if unit.has_offsets:
                assert document.text[unit.start : unit.end] == unit.text
            for row in unit.rows:
                assert 0 <= row.start <= row.end <= len(unit.text)
                assert "\n" not in unit.text[row.start : row.end]
    for turn in document.turns or ():
        assert 0 <= turn.start <= turn.end <= len(document.text)


def assert_blank_line_layout(document: Document) -> None:
    """Units laid out in reading order, separated by exactly one blank line, covering the text."""
    units = [u for s in document.sections for u in s.units]
    assert document.text == "\n\n".join(u.text for u in units)
    position = 0
    for unit in units:
        assert unit.start == position
        position = unit.end + 2
