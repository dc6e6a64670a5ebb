"""Tables: children keep their table's column names; wide rows go as ``column: value`` cells."""

from __future__ import annotations

import pytest

from chunking import Document, ParentChildChunker, SectionChunker, parse_bytes
from chunking.chunkers.tables import cell_spans, column_names


def csv_document(header: list[str], rows: list[list[str]]) -> Document:
    lines = [",".join(header), *(",".join(row) for row in rows)]
    return parse_bytes("\n".join(lines).encode(), kind="csv", source_uri="mem://table.csv")


def leveled(parent: int, child: int, tokenizer: str = "cl100k_base") -> ParentChildChunker:
    return ParentChildChunker(
        parent=SectionChunker(chunk_size=parent, tokenizer=tokenizer),
        child=SectionChunker(chunk_size=child, tokenizer=tokenizer),
    )


def test_every_child_of_a_long_table_carries_the_header() -> None:
    document = csv_document(
        ["date", "co2"], [[f"1958{i:04d}", f"{310 + i % 9}.{i % 10}"] for i in range(900)]
    )
    chunks = leveled(1024, 256).chunk(document)
    parents = [c for c in chunks if c.level == 1]
    children = [c for c in chunks if c.level == 0]
    assert len(parents) > 2 and len(children) > len(parents)
    assert all(c.text.startswith("date,co2\n") for c in children), [c.text[:20] for c in children]
    assert all(c.content_kind == "table_row" for c in children)
    # The header is said once per child: the rows under it are the document's own text.
    for child in children:
        body = child.text.removeprefix("date,co2\n")
        assert body in document.text
        assert child.metadata["token_count"] <= 256


def wide_document(columns: int = 60) -> Document:
    header = ["id", *(f"measurement_{i:02d}_of_the_station" for i in range(1, columns))]
    rows = [[f"row{r}", *(f"{r * 100 + i}.{i % 7}" for i in range(1, columns))] for r in range(6)]
    return csv_document(header, rows)


def test_wide_rows_are_column_value_cells_with_the_key_in_every_piece() -> None:
    document = wide_document()
    chunker = SectionChunker(chunk_size=256, tokenizer="cl100k_base")
    header_tokens = chunker.count_tokens(document.text.split("\n")[0])
    assert header_tokens > 256  # header + one row is over the budget
    chunks = chunker.chunk(document)
    assert chunks and all(c.metadata["token_count"] <= 256 for c in chunks)
    header = document.text.split("\n")[0]
    names = set(header.split(","))
    for chunk in chunks:
        assert chunk.text != header, "a header-only chunk"
        assert chunk.metadata.get("rendering") == "columns"
        assert chunk.content_kind == "table_row"
        lines = chunk.text.split("\n")
        assert all(line.split(": ", 1)[0] in names for line in lines), lines[:3]
        assert lines[0].startswith("id: row"), "every piece starts with the row's key cell"
    # No cell is split in two: each value is one whole cell of its row.
    cells = {cell for line in document.text.split("\n")[1:] for cell in line.split(",")}
    for chunk in chunks:
        assert all(line.split(": ", 1)[1] in cells for line in chunk.text.split("\n"))


def test_wide_rows_cover_the_table_and_children_keep_names() -> None:
    document = wide_document(40)
    chunks = leveled(1024, 128).chunk(document)
    children = [c for c in chunks if c.level == 0]
    assert all(": " in line for c in children for line in c.text.split("\n"))
    starts = sorted((c.provenance.start, c.provenance.end) for c in children)
    table = document.sections[0].units[0]
    assert starts[0][0] == table.start and starts[-1][1] == table.end


def test_a_markdown_table_wide_row_keeps_names() -> None:
    long = "word " * 80
    text = f"| key | note |\n|---|---|\n| a1 | {long.strip()} |\n| a2 | short |"
    document = parse_bytes(text.encode(), kind="markdown", source_uri="mem://wide.md")
    chunks = SectionChunker(chunk_size=64, tokenizer="cl100k_base").chunk(document)
    assert all(c.text.strip() != "| key | note |\n|---|---|" for c in chunks)
    noted = [c for c in chunks if "note: word" in c.text]
    assert noted and all(c.text.startswith("key: a1\n") or c.text.startswith("key: a1") for c in noted[1:])


@pytest.mark.parametrize(
    ("row", "delimiter", "cells"),
    [
        ("a,b,,d", ",", ["a", "b", "", "d"]),
        ('"x, y",2', ",", ['"x, y"', "2"]),
        ("| a | b \\| c |  |", "|", ["a", "b \\| c", ""]),
        ("a | b | c", "|", ["a", "b", "c"]),
    ],
)
def test_cell_spans_split_at_delimiters_outside_quotes(row: str, delimiter: str, cells: list[str]) -> None:
    assert [row[a:b] for a, b in cell_spans(row, delimiter)] == cells


def test_column_names_skip_the_markdown_delimiter_row() -> None:
    assert column_names("| Name | Size |\n|:---|---:|", "|") == ["Name", "Size"]
    assert column_names('"date","co2"', ",") == ["date", "co2"]
