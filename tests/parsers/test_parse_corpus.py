"""Every file of the shared corpus parses (or fails with ParseError) with exact offsets."""

from __future__ import annotations

from pathlib import Path

import pytest

from chunking.errors import ParseError
from chunking.parsers import parse_file
from tests.parsers.conftest import CORPUS, assert_blank_line_layout, assert_exact_offsets

_SKIP = {"README.md", "MANIFEST.tsv"}


def _corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.name not in _SKIP)


@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_file_parses_with_exact_offsets(corpus_dir: Path, path: Path) -> None:
    try:
        document = parse_file(path)
    except ParseError:
        return
    assert document.kind == path.parent.name
    assert any(s.units for s in document.sections)
    assert_exact_offsets(document)
    if document.kind in ("markdown", "html", "csv", "chat"):
        assert_blank_line_layout(document)
    if document.kind == "pdf":
        # Sections follow the outline when there is one, else one section per page.
        if not document.metadata["outline_entries"]:
            assert len(document.sections) == document.metadata["page_count"]
        firsts = [u.page for s in document.sections for u in s.units]
        assert firsts == sorted(firsts)
        assert all(
            1 <= n <= document.metadata["page_count"]
            for s in document.sections
            for u in s.units
            for n in u.pages
        )
    for unit in (u for s in document.sections for u in s.units):
        assert "\f" not in unit.text


def test_corpus_latin1_text_decodes(corpus_dir: Path) -> None:
    document = parse_file(corpus_dir / "text" / "genesis-french-segond1910.txt")
    assert "Au commencement, Dieu créa les cieux et la terre." in document.text
    assert document.metadata["encoding"] != "utf-8"
