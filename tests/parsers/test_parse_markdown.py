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


def test_markdown_raw_html_headings_open_sections() -> None:
    source = (
        b'<h1 align="center"> Yargs </h1>\n\n## Usage\n\nRun it.\n\n<h3 align="center">Sponsors <br /></h3>\n'
    )
    document = parse_bytes(source, kind="markdown", source_uri="mem://readme.md")
    assert document.title == "Yargs"
    assert [(s.heading_path, [u.content_kind for u in s.units]) for s in document.sections] == [
        (("Yargs",), ["heading"]),
        (("Yargs", "Usage"), ["heading", "text"]),
        (("Yargs", "Usage", "Sponsors"), ["heading"]),
    ]


def test_an_html_block_is_a_heading_only_as_far_as_its_heading_element() -> None:
    """The rest of an HTML block that opens with a heading (a sponsors table) is text, so no
    chunk of it is taken for a heading."""
    source = (
        b"# Axios\n\nIntro.\n\n"
        b'<h3 align="center">Platinum sponsors</h3>\n<table align="center">\n<tr><td>'
        b'<a href="https://x.test">Sponsor A</a></td></tr>\n</table>\n'
    )
    document = parse_bytes(source, kind="markdown", source_uri="mem://readme.md")
    sponsors = document.sections[-1]
    assert sponsors.heading_path == ("Axios", "Platinum sponsors")
    assert [u.content_kind for u in sponsors.units] == ["heading", "text"]
    assert sponsors.units[0].text == '<h3 align="center">Platinum sponsors</h3>'
    assert "Sponsor A" in sponsors.units[1].text
    assert_blank_line_layout(document)


def test_markdown_heading_badges_and_reference_links_are_cleaned() -> None:
    source = (
        b"# Multer [![NPM Version][npm-version-image]][npm-url] [![Build][ci-image]][ci-url]\n\n"
        b'## Install [docs](https://x.test) ![logo](logo.png) <a id="install"></a>\n\n'
        b"## Usage [![Missing][nowhere]][gone]\n\ntext\n\n"
        b"[npm-url]: https://npmjs.org/package/multer\n[npm-version-image]: https://badge.test/v.svg\n"
        b"[ci-url]: https://ci.test\n[ci-image]: https://badge.test/ci.svg\n"
    )
    document = parse_bytes(source, kind="markdown", source_uri="mem://multer.md")
    assert document.title == "Multer"
    paths = [s.heading_path for s in document.sections]
    assert paths == [("Multer",), ("Multer", "Install docs"), ("Multer", "Usage")]


def test_markdown_chunks_carry_the_document_title_in_contextual_text() -> None:
    from chunking.chunkers.leveling import ParentChildChunker
    from chunking.chunkers.section import SectionChunker

    source = b"<h1>Multer</h1>\n\nMiddleware for multipart forms.\n\n## Usage\n\nCall upload.single().\n"
    plain = b"## Usage\n\nCall upload.single().\n"
    leveler = ParentChildChunker(parent=SectionChunker(chunk_size=20), child=SectionChunker(chunk_size=8))
    chunks = leveler.chunk(parse_bytes(source, kind="markdown", source_uri="mem://multer.md"))
    usage = [c for c in chunks if c.heading_path == ["Multer", "Usage"]]
    assert usage and all(c.contextual_text.startswith("Multer > Usage\n\n") for c in usage)
    for chunk in leveler.chunk(parse_bytes(plain, kind="markdown", source_uri="file:///x/multer.md")):
        assert chunk.metadata["document_title"] == "multer"
        assert chunk.contextual_text.startswith("multer > Usage\n\n")


NAVIGATION = b"""# Guide

- [Install](#install)
- [Usage](#usage)
  - [Options](#options)

<a name="install"></a>

## Install

Run the installer. See [Usage](#usage) for what comes next.

**[\xe2\xac\x86 Back to Index](#guide)**
<br >
<br >

<div align="center">

<a href="https://example.org/sponsor"><img src="https://example.org/logo.svg"></a>
<!-- sponsors -->

## Usage

Call it.

</div>
"""


def test_markdown_navigation_is_toc_and_markup_alone_is_no_unit() -> None:
    """A README's contents list and its "Back to Index" lines were text units, and chunks of
    them alone were indexed (49 of public-apis' 384 children were the same Back to Index line);
    anchors, logos, comments and closing tags alone (rxjs' 89 `<a name="6.3.2"></a>`) were
    units of no text. Links to the page's own anchors alone are a `toc` unit (the section
    chunker packs them with nothing else; search leaves them out); tags alone are no unit."""
    document = parse_bytes(NAVIGATION, kind="markdown", source_uri="mem://nav.md")
    assert_exact_offsets(document)
    units = [(u.content_kind, u.text) for s in document.sections for u in s.units]
    assert units == [
        ("heading", "# Guide"),
        ("toc", "- [Install](#install)\n- [Usage](#usage)\n  - [Options](#options)"),
        ("heading", "## Install"),
        ("text", "Run the installer. See [Usage](#usage) for what comes next."),
        ("toc", "**[\u2b06 Back to Index](#guide)**\n<br >\n<br >"),
        ("heading", "## Usage"),
        ("text", "Call it."),
    ]


def test_markdown_link_reference_definitions_are_no_unit() -> None:
    """A changelog's link definitions (`[2.16.1]: https://github.com/.../compare/...`) were
    text units, and 15 of date-fns' children were nothing but them: they matched a query for
    a version number and said nothing. A renderer shows nothing of them; they are no unit, and
    the links that use them still resolve in headings."""
    source = (
        b"# Change Log [![CI][ci-badge]][ci]\n\n## [2.16.1] - 2020-09-09\n\nFixed a parse bug.\n\n"
        b"[unreleased]: https://example.org/compare/v2.16.1...HEAD\n"
        b"[2.16.1]: https://example.org/compare/v2.16.0...v2.16.1\n"
        b'  "a title on its own line"\n\n'
        b"## [2.16.0]\n\nAdded a locale.\n\n[2.16.0]: https://example.org/tree/v2.16.0\n"
        b"[ci]: https://ci.test\n[ci-badge]: https://ci.test/b.svg\n"
    )
    document = parse_bytes(source, kind="markdown", source_uri="mem://CHANGELOG.md")
    assert_exact_offsets(document)
    assert_blank_line_layout(document)
    units = [(s.heading_path, u.text) for s in document.sections for u in s.units]
    assert units == [
        (("Change Log",), "# Change Log [![CI][ci-badge]][ci]"),
        (("Change Log", "2.16.1 - 2020-09-09"), "## [2.16.1] - 2020-09-09"),
        (("Change Log", "2.16.1 - 2020-09-09"), "Fixed a parse bug."),
        (("Change Log", "2.16.0"), "## [2.16.0]"),
        (("Change Log", "2.16.0"), "Added a locale."),
    ]
    assert "example.org" not in document.text


MKDOCS = b"""# Models

!!! note "Validation"
    Pydantic validates *data*.

    - one
    - two

??? tip
    Collapsed.
Outside again.

=== "Python 3.10 and above"

    ```python
    x: int | None
    ```

    !!! warning
        Nested.

```markdown
!!! note
    Shown as written: inside a fence.
```
"""


def test_mkdocs_admonitions_and_tabs_are_read_as_mkdocs_renders_them() -> None:
    """pydantic's and uv's docs (MkDocs) indent an admonition's or tab's body under its opening
    line; as CommonMark, the body was an indented code block, so prose was `code`, embedded
    with its indent and cut at lines (39 of the corpus's Markdown code children held no fence
    line; the 31 left are the middle parts of long fenced blocks), and a tab's label was a
    chunk of its own. The body is read one level out, the opening line is a
    unit of its own (the section chunker lets it lead the body), and nothing in a fence moves."""
    document = parse_bytes(MKDOCS, kind="markdown", source_uri="mem://models.md")
    assert_exact_offsets(document)
    units = [(u.content_kind, u.text) for s in document.sections for u in s.units]
    assert units == [
        ("heading", "# Models"),
        ("text", '!!! note "Validation"'),
        ("text", "Pydantic validates *data*."),
        ("list", "- one\n- two"),
        ("text", "??? tip"),
        ("text", "Collapsed.\nOutside again."),
        ("text", '=== "Python 3.10 and above"'),
        ("code", "```python\nx: int | None\n```"),
        ("text", "!!! warning"),
        ("text", "Nested."),
        ("code", "```markdown\n!!! note\n    Shown as written: inside a fence.\n```"),
    ]
