"""CSV parser: one table unit, header row first, rows on their own lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from chunking.errors import ParseError
from chunking.parsers import parse_bytes, parse_file
from tests.parsers.conftest import assert_blank_line_layout, assert_exact_offsets


def test_csv_sample_is_one_table_with_header_row(sample_dir: Path) -> None:
    document = parse_file(sample_dir / "orchard-harvest.csv")
    assert document.kind == "csv" and document.title == "orchard-harvest"
    [section] = document.sections
    [table] = section.units
    assert table.content_kind == "table" and table.header_rows == 1
    assert len(table.rows) == 31
    assert table.text[table.rows[0].start : table.rows[0].end] == "week,tree,variety,kg,notes"
    assert table.text[table.rows[1].start : table.rows[1].end] == '1,T01,apple,57.1,"late frost, light crop"'
    assert document.metadata["row_count"] == 30
    assert_exact_offsets(document)
    assert_blank_line_layout(document)


def test_csv_embedded_newlines_render_on_one_line() -> None:
    raw = b'name,note\nann,"two\nlines"\nbo,plain\n'
    document = parse_bytes(raw, kind="csv", source_uri="mem://n.csv")
    table = document.sections[0].units[0]
    assert [table.text[r.start : r.end] for r in table.rows] == ["name,note", "ann, two lines", "bo,plain"]
    assert_exact_offsets(document)


def test_csv_quote_never_closed_is_refused_naming_its_line() -> None:
    """The lenient reader took every line after an unclosed quote into one cell, silently:
    three rows became one. Refused, naming the line; a closed multi-line field still reads."""
    raw = b'name,note\nada,"unterminated\nbob,fine\ncy,ok\n'
    with pytest.raises(ParseError, match=r"quoted field opened on line 2 is never closed") as caught:
        parse_bytes(raw, kind="csv", source_uri="mem://q.csv")
    assert caught.value.source == "mem://q.csv" and "close the quote" in caught.value.hint
    for last in (b'dee,"open on the last line\n', b'dee,"closed\nlater"\n'):
        document = parse_bytes(
            raw.replace(b'"unterminated', b"closed") + last, kind="csv", source_uri="mem://q.csv"
        )
        assert document.metadata["row_count"] == 4


def test_csv_rows_leave_out_trailing_empty_cells() -> None:
    # A row's trailing empty cells say nothing; as ",,," they end its chunks in dangling commas.
    raw = b'country,2009,2010,2011,2012\nAland,1.10,1.22,,\nBorduria,2.10,"","",\nCarpania,3.1,"x,",,\n'
    raw += b'Dorsk,"two\nlines",,,\n'
    document = parse_bytes(raw, kind="csv", source_uri="mem://trail.csv")
    table = document.sections[0].units[0]
    assert [table.text[r.start : r.end] for r in table.rows] == [
        "country,2009,2010,2011,2012",
        "Aland,1.10,1.22",
        "Borduria,2.10",
        'Carpania,3.1,"x,"',
        "Dorsk, two lines",
    ]
    assert_exact_offsets(document)


def test_tsv_rows_leave_out_trailing_empty_cells() -> None:
    document = parse_bytes(b"a\tb\tc\n1\t\t\n2\t3\t\n", kind="csv", source_uri="mem://trail.tsv")
    table = document.sections[0].units[0]
    assert [table.text[r.start : r.end] for r in table.rows] == ["a\tb\tc", "1", "2\t3"]


def test_csv_semicolon_dialect_is_sniffed() -> None:
    raw = b"a;b;c\n1;2;3\n4;5;6\n"
    document = parse_bytes(raw, kind="csv", source_uri="mem://s.csv")
    assert document.metadata["delimiter"] == ";"
    assert document.metadata["row_count"] == 2
