"""Markdown parser: headings, block kinds, tables and exact offsets."""

from __future__ import annotations

from pathlib import Path

from chunking.parsers import parse_bytes, parse_file
from tests.parsers.conftest import assert_blank_line_layout, assert_exact_offsets

SOURCE = b"""---
title: ignored front matter
---

# Guide

Intro paragraph
on two lines.

## Install { #install }

```bash
pip install thing

echo done
```

- one
- two
  - nested

## Table

| a | b |
|---|---|
| 1 | 2 |
| 3 | 4 |

### Deep `code` heading

Setext Title
============

Under setext.

[ref]: https://example.org
"""


def _doc():
    return parse_bytes(SOURCE, kind="markdown", source_uri="mem://guide.md")


def test_markdown_units_have_kinds_and_source_text() -> None:
    units = [(u.content_kind, u.text) for s in _doc().sections for u in s.units]
    assert units == [
        ("heading", "# Guide"),
        ("text", "Intro paragraph\non two lines."),
        ("heading", "## Install { #install }"),
        ("code", "```bash\npip install thing\n\necho done\n```"),
        ("list", "- one\n- two\n  - nested"),
        ("heading", "## Table"),
        ("table", "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |"),
        ("heading", "### Deep `code` heading"),
        ("heading", "Setext Title\n============"),
        ("text", "Under setext."),
        ("text", "[ref]: https://example.org"),
    ]


def test_markdown_heading_paths_nest_and_strip_markup() -> None:
    paths = [s.heading_path for s in _doc().sections]
    assert paths == [
        ("Guide",),
        ("Guide", "Install"),
        ("Guide", "Table"),
        ("Guide", "Table", "Deep code heading"),
        ("Setext Title",),
    ]


def test_markdown_layout_is_units_joined_by_blank_lines() -> None:
    document = _doc()
    assert_exact_offsets(document)
    assert_blank_line_layout(document)
    assert document.title == "Guide"
    assert document.metadata["front_matter"] == "title: ignored front matter"
    assert document.metadata["encoding"] == "utf-8"


def test_markdown_table_rows_are_lines_with_two_header_rows() -> None:
    table = next(u for s in _doc().sections for u in s.units if u.content_kind == "table")
    rows = [table.text[r.start : r.end] for r in table.rows]
    assert rows == ["| a | b |", "|---|---|", "| 1 | 2 |", "| 3 | 4 |"]
    assert table.header_rows == 2


def test_markdown_crlf_is_normalized_before_offsets() -> None:
    document = parse_bytes(b"# T\r\n\r\nline one\r\nline two\r\n", kind="markdown", source_uri="mem://c.md")
    assert document.text == "# T\n\nline one\nline two"
    assert_exact_offsets(document)


def test_markdown_sample_files_parse_with_tables_code_and_lists(sample_dir: Path) -> None:
    document = parse_file(sample_dir / "getting-started.md")
    kinds = {u.content_kind for s in document.sections for u in s.units}
    assert kinds == {"heading", "text", "code", "list", "table"}
    assert document.sections[-1].heading_path == (
        "Getting started with the ingestion pipeline",
        "Supported formats",
        "What happens to a bad file",
    )
    table = next(u for s in document.sections for u in s.units if u.content_kind == "table")
    assert len(table.rows) == 8 and table.header_rows == 2
    assert_blank_line_layout(document)
