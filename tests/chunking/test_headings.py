"""A heading travels with what follows it: never a chunk of headings while more follows."""

from __future__ import annotations

from chunking import SectionChunker
from tests.chunking.strategies import build_document

TABLE = "| name | kg |\n|---|---|\n" + "\n".join(f"| tree {i:02d} | {i}.5 |" for i in range(30))


def kinds_and_starts(chunks: list) -> list[tuple[str, str]]:
    return [(c.content_kind, c.text.split("\n")[0]) for c in chunks]


def test_heading_before_a_table_starts_the_tables_first_chunk() -> None:
    document = build_document(
        [
            (("Intro",), "heading", "# Intro"),
            (("Intro",), "text", "Some words."),
            (("Data",), "heading", "## Data"),
            (("Data",), "table", TABLE),
        ]
    )
    chunks = SectionChunker(chunk_size=100, min_size=0, tokenizer="character").chunk(document)
    assert all(c.content_kind != "heading" for c in chunks), kinds_and_starts(chunks)
    first_table = next(c for c in chunks if c.content_kind == "table_row")
    assert first_table.text.startswith("## Data\n\n| name | kg |")
    assert all(c.metadata["token_count"] <= 100 for c in chunks)


def test_heading_before_an_oversized_unit_goes_with_its_first_part() -> None:
    long = " ".join(f"Sentence number {i} is here." for i in range(40))
    document = build_document([(("A",), "heading", "# A"), (("A",), "text", long)])
    chunks = SectionChunker(chunk_size=120, tokenizer="character").chunk(document)
    assert len(chunks) > 2
    assert chunks[0].text.startswith("# A\n\nSentence number 0")
    assert all(c.content_kind == "text" for c in chunks)
    assert all(len(c.text) <= 120 for c in chunks)


def test_heading_before_a_list_that_does_not_fit_moves_on_with_it() -> None:
    items = "\n".join(f"- item {i}" for i in range(8))
    document = build_document([((), "text", "x" * 70), (("L",), "heading", "## L"), (("L",), "list", items)])
    chunks = SectionChunker(chunk_size=80, min_size=0, tokenizer="character").chunk(document)
    assert [c.text for c in chunks] == ["x" * 70, "## L\n\n" + items]
    assert chunks[1].heading_path == ["L"]


def test_section_ending_on_a_heading_carries_it_on() -> None:
    document = build_document(
        [
            (("A",), "heading", "# A"),
            (("A",), "text", "a" * 60),
            (("A", "B"), "heading", "## B"),
            (("A", "B"), "text", "b" * 60),
        ]
    )
    chunks = SectionChunker(chunk_size=70, min_size=0, tokenizer="character").chunk(document)
    assert [c.text for c in chunks] == ["# A\n\n" + "a" * 60, "## B\n\n" + "b" * 60]


def test_a_document_of_headings_only_may_be_headings() -> None:
    document = build_document([(("A",), "heading", "# A"), (("A", "B"), "heading", "## B")])
    chunks = SectionChunker(chunk_size=70, tokenizer="character").chunk(document)
    assert [c.text for c in chunks] == ["# A\n\n## B"] and chunks[0].content_kind == "heading"


def test_trailing_heading_joins_the_chunk_before() -> None:
    document = build_document(
        [(("A",), "heading", "# A"), (("A",), "text", "body"), (("Z",), "heading", "# Z")]
    )
    chunks = SectionChunker(chunk_size=70, min_size=0, tokenizer="character").chunk(document)
    assert [c.text for c in chunks] == ["# A\n\nbody\n\n# Z"]
