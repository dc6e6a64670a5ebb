"""Tables: children keep their table's column names; wide rows go as ``column: value`` cells."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import Document, ParentChildChunker, SectionChunker, parse_bytes
from chunking.chunkers.tables import cell_spans, column_names
from tests.chunking.invariants import check_flat, check_leveled
from tests.example_budget import examples


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


def columns_lines(document: Document, size: int = 16) -> list[str]:
    """The ``column: value`` lines of ``document``'s chunks, after checking the contract (the
    text after a row's last value is covered whether it is rendered or not)."""
    chunker = SectionChunker(chunk_size=size, tokenizer="cl100k_base")
    chunks = chunker.chunk(document)
    check_flat(chunker, document, chunks, exactly_once=True)
    return [line for c in chunks if c.metadata.get("rendering") == "columns" for line in c.text.split("\n")]


def test_trailing_empty_csv_cells_render_no_dangling_commas() -> None:
    document = csv_document(
        ["country", "2008", "2009", "2010", "2011", "2012"],
        [["Aland", "1.00", "1.10", "1.22", "", ""], ["Borduria", "2.00", "2.10", "", "", ""]],
    )
    lines = columns_lines(document)
    assert "2010: 1.22" in lines and "2009: 2.10" in lines, lines
    assert not [line for line in lines if line.rstrip().endswith(",")], lines


def test_an_empty_markdown_cell_renders_no_stray_pipe() -> None:
    text = "| 💡 | note |\n|---|---|\n| 💡 | |\n| tip | " + "word " * 30 + "|\n| end | x |\n"
    lines = columns_lines(parse_bytes(text.encode(), kind="markdown", source_uri="mem://tip.md"))
    assert lines[0] == "💡: 💡", lines
    assert "note: word word word word word word word word" in lines, lines
    assert lines[-1] == "note: x |"  # the table's last row (the test below)
    assert not [line for line in lines[:-1] if line.endswith("|")], lines


def test_a_tables_last_row_as_cells_keeps_its_closing_pipe() -> None:
    # The one place a row's tail is still rendered: nothing after it in the table can cover it,
    # and a chunk ends with the document's text at the end of its span.
    text = "| 💡 | note |\n|---|---|\n| tip | " + "word " * 30 + "|\n\nAfter."
    lines = columns_lines(parse_bytes(text.encode(), kind="markdown", source_uri="mem://last.md"))
    assert lines[-1].endswith(" |") and not [line for line in lines[:-1] if line.endswith("|")], lines


CELL = st.text(alphabet="abcxyz019 .-", max_size=12).map(str.strip)


@st.composite
def tables_with_empty_cells(draw: st.DrawFn) -> tuple[str, str]:
    """A CSV or Markdown table (kind, text) whose rows often end in empty cells."""
    kind = draw(st.sampled_from(["csv", "markdown"]))
    width = draw(st.integers(min_value=2, max_value=6))
    names = [f"c{i}" for i in range(width)]
    rows = []
    for _ in range(draw(st.integers(min_value=1, max_value=5))):
        key = draw(st.text(alphabet="klmn", min_size=1, max_size=6))
        cells = [key, *draw(st.lists(CELL, min_size=width - 1, max_size=width - 1))]
        empty_tail = draw(st.integers(min_value=0, max_value=width - 1))
        rows.append(cells[: width - empty_tail] + [""] * empty_tail)
    if kind == "csv":
        return kind, "\n".join(",".join(r) for r in [names, *rows])
    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return kind, "\n".join(lines)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=tables_with_empty_cells(), size=st.integers(min_value=6, max_value=24))
def test_column_lines_name_one_cell_and_end_in_no_delimiter(table: tuple[str, str], size: int) -> None:
    kind, text = table
    document = parse_bytes(text.encode(), kind=kind, source_uri=f"mem://t.{'csv' if kind == 'csv' else 'md'}")
    chunker = SectionChunker(chunk_size=size, tokenizer="cl100k_base")
    chunks = chunker.chunk(document)
    check_flat(chunker, document, chunks, exactly_once=True)
    delimiter = "," if kind == "csv" else "|"
    table = document.sections[0].units[0]
    last_row = table.start + table.rows[-1].start
    for chunk in chunks:
        if chunk.metadata.get("rendering") != "columns":
            continue
        if kind == "markdown" and chunk.provenance.end > last_row:
            continue  # a table's last row keeps its closing pipe (the test above)
        for line in chunk.text.split("\n"):
            value = line.partition(": ")[2]
            assert value and not value.endswith(delimiter), (line, text)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=tables_with_empty_cells(), size=st.integers(min_value=6, max_value=24))
def test_rows_with_unrendered_tails_keep_the_leveled_contract(table: tuple[str, str], size: int) -> None:
    kind, text = table
    document = parse_bytes(text.encode(), kind=kind, source_uri=f"mem://t.{'csv' if kind == 'csv' else 'md'}")
    chunker = ParentChildChunker(
        parent=SectionChunker(chunk_size=size * 3, tokenizer="cl100k_base"),
        child=SectionChunker(chunk_size=size, tokenizer="cl100k_base"),
    )
    check_leveled(chunker, document, chunker.chunk(document))


def test_an_empty_row_goes_into_the_exact_slice_of_the_rows_after_it() -> None:
    """A row of delimiters only ("|  |") is no chunk of its own; the next row's piece holds it,
    so a row group said to be an exact slice (the first, under its own header) is one."""
    rows = [f"| k{i} | {' '.join(['value'] * 4)} |" for i in range(12)]
    rows.insert(2, "|  |  |")
    text = "\n".join(["| key | value |", "|---|---|", *rows])
    document = parse_bytes(text.encode(), kind="markdown", source_uri="mem://t.md")
    chunker = SectionChunker(chunk_size=60, tokenizer="cl100k_base")
    chunks = chunker.chunk(document)
    check_flat(chunker, document, chunks, exactly_once=True)
    first = chunks[0]
    assert first.metadata["exact_slice"] and len(chunks) > 1
    assert "|  |  |" in first.text
    assert first.text == document.text[first.provenance.start : first.provenance.end]


@st.composite
def tables_with_empty_rows(draw: st.DrawFn) -> str:
    """A Markdown table whose body holds rows of delimiters only, anywhere."""
    width = draw(st.integers(min_value=1, max_value=4))
    lines = ["| " + " | ".join(f"c{i}" for i in range(width)) + " |", "|" + "---|" * width]
    for _ in range(draw(st.integers(min_value=1, max_value=14))):
        if draw(st.booleans()):
            lines.append("|" + "  |" * draw(st.integers(min_value=1, max_value=width)))
        else:
            lines.append("| " + " | ".join(draw(st.lists(CELL, min_size=width, max_size=width))) + " |")
    return "\n".join(lines)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=tables_with_empty_rows(),
    size=st.integers(min_value=8, max_value=60),
    tokenizer=st.sampled_from(["cl100k_base", "word", "character"]),
)
def test_tables_with_empty_rows_keep_the_contract(text: str, size: int, tokenizer: str) -> None:
    """Property: chunks of a table with empty rows are exact where they say so, within the
    budget, and cover the table once."""
    document = parse_bytes(text.encode(), kind="markdown", source_uri="mem://t.md")
    chunker = SectionChunker(chunk_size=size * (4 if tokenizer == "character" else 1), tokenizer=tokenizer)
    check_flat(chunker, document, chunker.chunk(document), exactly_once=True)


PROSE = (
    "The orchard keeps a record of every picking. Volunteers weigh the crates at the gate and write "
    "the weights into the book before the fruit goes to the store."
)
TABLE = "| fruit | crates |\n|---|---|\n" + "\n".join(f"| apple {i} | {i * 3} |" for i in range(40))


def _chunk_holding(chunks: list, text: str):
    return next(chunk for chunk in chunks if text in chunk.text)


@pytest.mark.parametrize(
    "lead_in",
    [
        "Table 4.1. Crates picked per variety",
        "Supported operations:",
        "The following crates, or the crates of a neighbour, are counted in /.",
        "Here is an example of a season's record (other layouts are possible.)",
    ],
)
def test_a_caption_or_an_introducing_line_leads_its_table(lead_in: str) -> None:
    # debian-reference's HTML: "Table 4.1. ..." ended the chunk before the table, whose chunk
    # then said nothing of what it held. fhs-3.0.html: "The following directories, or symbolic
    # links to directories, are required in /." ended the chunk before its table.
    document = parse_bytes(
        f"{PROSE}\n\n{lead_in}\n\n{TABLE}\n\n{PROSE}".encode(), kind="markdown", source_uri="mem://lead-in.md"
    )
    chunker = SectionChunker(chunk_size=128)
    chunks = chunker.chunk(document)
    check_flat(chunker, document, chunks, exactly_once=True)
    first_rows = _chunk_holding(chunks, "| apple 0 |")
    assert first_rows.text.startswith(lead_in) and first_rows.content_kind == "table_row"
    assert lead_in not in _chunk_holding(chunks, "Volunteers weigh").text
    # Row groups after the first repeat the column names, not the lead-in.
    later = _chunk_holding(chunks, "| apple 39 |")
    assert later is not first_rows and lead_in not in later.text


@pytest.mark.parametrize("before", [PROSE, "Tables of crates go to the store below the gate."])
def test_a_paragraph_before_a_table_stays_with_the_text(before: str) -> None:
    # Short, but a paragraph of its own (it ends in a full stop, says nothing follows it, and
    # opening with "Table" makes no caption without a number): it is not the table's lead-in.
    document = parse_bytes(f"{before}\n\n{TABLE}".encode(), kind="markdown", source_uri="mem://lead-in.md")
    chunks = SectionChunker(chunk_size=128).chunk(document)
    assert chunks[0].text == before and chunks[1].text.startswith("| fruit |")


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    before=st.lists(CELL.filter(bool), min_size=1, max_size=30).map(" ".join),
    lead_words=st.integers(min_value=1, max_value=12),
    rows=st.integers(min_value=1, max_value=30),
    size=st.integers(min_value=24, max_value=200),
    tokenizer=st.sampled_from(["cl100k_base", "word", "character"]),
)
def test_a_short_line_before_a_table_never_ends_the_chunk_before(
    before: str, lead_words: int, rows: int, size: int, tokenizer: str
) -> None:
    """Property: the line right before a table, a quarter of the budget or less, is never in a
    chunk with the text before it, and the chunks keep the contract."""
    lead_in = " ".join(f"column{i}" for i in range(lead_words)) + ":"
    table = "| a | b |\n|---|---|\n" + "\n".join(f"| r{i} | {i} |" for i in range(rows))
    document = parse_bytes(
        f"{before}.\n\n{lead_in}\n\n{table}".encode(), kind="markdown", source_uri="mem://lead-in.md"
    )
    chunker = SectionChunker(chunk_size=size * (4 if tokenizer == "character" else 1), tokenizer=tokenizer)
    chunks = chunker.chunk(document)
    check_flat(chunker, document, chunks, exactly_once=True)
    lead_tokens = chunker._packer.tokenizer.count(lead_in)
    if lead_tokens <= min(48, chunker.chunk_size // 4):
        holding = [chunk for chunk in chunks if lead_in in chunk.text]
        assert holding and all(f"{before}." not in chunk.text for chunk in holding)


def test_a_parent_cut_into_children_leaves_no_two_row_child_at_its_end() -> None:
    """statsmodels-co2.csv: parents of 1024 tokens cut at 256 made four full children and one
    of the header and two rows, in every parent; the last two are evened out instead."""
    document = csv_document(
        ["date", "co2"], [[f"1958{i:04d}", f"{310 + i % 9}.{i % 10}"] for i in range(900)]
    )
    chunks = leveled(1024, 256).chunk(document)
    check_leveled(leveled(1024, 256), document, chunks)
    parents = [c for c in chunks if c.level == 1]
    assert len(parents) > 2
    for parent in parents:
        sizes = [c.metadata["token_count"] for c in chunks if c.parent_id == parent.id]
        assert len(sizes) >= 2 and min(sizes) * 4 >= 256 and max(sizes) <= 256, sizes


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=st.integers(min_value=1000, max_value=9000),
    count=st.integers(min_value=2, max_value=120),
    size=st.integers(min_value=48, max_value=240),
)
def test_the_last_row_group_holds_a_quarter_of_the_budget_when_rows_are_small(
    first: int, count: int, size: int
) -> None:
    """Whenever each row costs at most an eighth of the budget, a table cut into row groups ends
    on a group of at least a quarter of it (the one before gives rows), and no group is over it."""
    rows = range(first, first + count)
    document = csv_document(["id", "value"], [[str(n), str(n % 97)] for n in rows])
    chunker = SectionChunker(chunk_size=size, tokenizer="character")
    chunks = chunker.chunk(document)
    check_flat(chunker, document, chunks, exactly_once=True)
    if len(chunks) >= 2 and max(len(f"{n},{n % 97}") + 1 for n in rows) <= size // 8:
        assert len(chunks[-1].text) * 4 >= size, [len(c.text) for c in chunks]
        assert all(len(c.text) <= size for c in chunks)
