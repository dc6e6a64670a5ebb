"""Section chunker behaviour: packing, splitting, carry-over, tables, provenance."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import (
    ChunkingError,
    Document,
    PageProvenance,
    RecursiveChunker,
    Section,
    SectionChunker,
    TextProvenance,
    Unit,
)
from tests.chunking.strategies import build_document, texts
from tests.example_budget import examples


def layout(blocks: list[tuple[tuple[str, ...], str, str]]) -> Document:
    """Build a document whose units are joined by blank lines: (heading path, kind, text); a
    table's first line is its header."""
    return build_document(blocks, header_rows=1, source_uri="mem://layout")


def test_section_packs_units_until_next_would_pass_size() -> None:
    doc = layout([((), "text", "a" * 30), ((), "text", "b" * 30), ((), "text", "c" * 30)])
    chunks = SectionChunker(chunk_size=64, min_size=0, tokenizer="character").chunk(doc)
    # 30 + 2 (blank line) + 30 = 62 fits; adding 32 more would pass 64.
    assert [c.text for c in chunks] == ["a" * 30 + "\n\n" + "b" * 30, "c" * 30]
    assert [c.metadata["token_count"] for c in chunks] == [62, 30]
    assert all(doc.text[c.provenance.start : c.provenance.end] == c.text for c in chunks)


def test_section_size_counts_the_joining_blank_line() -> None:
    doc = layout([((), "text", "a" * 31), ((), "text", "b" * 32)])
    chunks = SectionChunker(chunk_size=64, min_size=0, tokenizer="character").chunk(doc)
    assert len(chunks) == 2  # 31 + 2 + 32 = 65 > 64


def test_section_splits_oversized_unit_at_sentence_boundaries() -> None:
    sentence = "This sentence is exactly forty chars!! "
    doc = layout([((), "text", (sentence * 5).strip())])
    chunks = SectionChunker(chunk_size=90, tokenizer="character").chunk(doc)
    assert len(chunks) >= 3
    assert all(c.metadata["token_count"] <= 90 for c in chunks)
    assert all(c.text.endswith("!!") for c in chunks)


def test_section_small_chunk_carries_over_into_next_section() -> None:
    doc = layout(
        [(("A",), "heading", "# A"), (("A", "B"), "heading", "## B"), (("A", "B"), "text", "body " * 5)]
    )
    carried = SectionChunker(chunk_size=100, min_size=25, tokenizer="character").chunk(doc)
    assert len(carried) == 1 and carried[0].text.startswith("# A\n\n## B")
    assert carried[0].heading_path == ["A"]  # the headings that contain the whole chunk
    # Issue 17: a section that ends on a heading carries it on whatever min_size says (a
    # heading travels with what follows it); one that ends on text still closes at min_size 0.
    headed = SectionChunker(chunk_size=100, min_size=0, tokenizer="character").chunk(doc)
    assert [c.text for c in headed] == [carried[0].text]
    texts = layout([(("A",), "text", "alpha " * 3), (("B",), "text", "beta " * 3)])
    separate = SectionChunker(chunk_size=100, min_size=0, tokenizer="character").chunk(texts)
    assert [c.heading_path for c in separate] == [["A"], ["B"]]


def test_section_default_min_size_is_a_quarter_of_size() -> None:
    assert SectionChunker(chunk_size=400, tokenizer="character").effective_min_size == 100


def test_section_table_never_mixes_with_text() -> None:
    table = "| h1 | h2 |\n| 1 | 2 |"
    doc = layout([((), "text", "intro"), ((), "table", table), ((), "text", "outro")])
    chunks = SectionChunker(chunk_size=200, tokenizer="character").chunk(doc)
    assert [c.text for c in chunks] == ["intro", table, "outro"]
    assert [c.content_kind for c in chunks] == ["text", "table_row", "text"]


def test_section_large_table_becomes_row_groups_repeating_header() -> None:
    rows = [f"| row {i:02d} | value {i:02d} |" for i in range(20)]
    table = "\n".join(["| name | value |", *rows])
    doc = layout([((), "table", table)])
    chunks = SectionChunker(chunk_size=100, tokenizer="character").chunk(doc)
    assert len(chunks) > 1
    assert all(c.text.startswith("| name | value |\n") for c in chunks)
    assert all(c.metadata["token_count"] <= 100 for c in chunks)
    assert chunks[0].metadata["exact_slice"] is True
    assert all(c.metadata["exact_slice"] is False for c in chunks[1:])
    body = [line for c in chunks for line in c.text.split("\n")[1:]]
    assert body == rows  # every row once, in order
    for chunk in chunks[1:]:  # the span covers the chunk's rows
        span = doc.text[chunk.provenance.start : chunk.provenance.end]
        assert chunk.text == "| name | value |\n" + span


def test_section_mixed_text_and_page_units_is_an_error() -> None:
    doc = Document.create(
        source_uri="mem://mixed",
        text="x\n\ny",
        sections=[Section(units=(Unit(text="x", start=0, end=1), Unit(text="y", page=1)))],
    )
    with pytest.raises(ChunkingError, match="mixes units"):
        SectionChunker(chunk_size=50, tokenizer="character").chunk(doc)


def test_section_page_units_give_page_provenance() -> None:
    doc = Document.create(
        source_uri="mem://pdf",
        text="one\fTwo",
        sections=[Section(units=(Unit(text="one", page=1),)), Section(units=(Unit(text="two", page=2),))],
        kind="pdf",
    )
    chunks = SectionChunker(chunk_size=50, tokenizer="character").chunk(doc)
    assert len(chunks) == 1
    assert chunks[0].provenance == PageProvenance(pages=(1, 2))
    assert chunks[0].text == "one\n\ntwo"


def test_section_text_provenance_spans_its_units() -> None:
    doc = Document.from_text("alpha\n\nbeta\n\ngamma", source_uri="mem://t")
    (chunk,) = SectionChunker(chunk_size=100, tokenizer="character").chunk(doc)
    assert chunk.provenance == TextProvenance(start=0, end=len(doc.text))


def test_section_joins_across_irregular_blank_lines_exactly() -> None:
    doc = Document.from_text("alpha\r\n \r\nbeta", source_uri="mem://crlf")
    (chunk,) = SectionChunker(chunk_size=100, tokenizer="character").chunk(doc)
    assert chunk.text == doc.text and chunk.metadata["exact_slice"] is True


def test_section_min_size_above_size_is_rejected() -> None:
    with pytest.raises(ValueError, match="min_size"):
        SectionChunker(chunk_size=10, min_size=11, tokenizer="character")


def test_section_split_returns_exact_slices_within_size() -> None:
    chunker = SectionChunker(chunk_size=20, tokenizer="character")
    text = "One sentence here. Another one there. And a third, with a clause."
    pieces = chunker.split(text)
    assert "".join(p.text for p in pieces) == text
    assert all(text[p.start : p.end] == p.text and p.token_count <= 20 for p in pieces)


@pytest.mark.parametrize("tokenizer", ["cl100k_base", "o200k_base", "character", "word"])
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts(), size=st.integers(min_value=4, max_value=80))
def test_packed_split_pieces_are_exact_trimmed_slices_within_budget(
    tokenizer: str, text: str, size: int
) -> None:
    # The section chunker's split of a unit over its budget: every piece is the trimmed slice
    # at its offsets, in order and apart, counted exactly, within budget, and no visible
    # character is left out.
    splitter = RecursiveChunker(chunk_size=size, tokenizer=tokenizer)
    pieces = splitter.split_packed(text, size + 1)
    position = 0
    for piece in pieces:
        assert piece.text == text[piece.start : piece.end] == piece.text.strip() != ""
        assert piece.start >= position
        assert not text[position : piece.start].strip()
        assert piece.token_count == splitter.count_tokens(piece.text) <= size
        position = piece.end
    assert not text[position:].strip()
