"""HTML parser: visible text only, heading paths, lists, code and tables."""

from __future__ import annotations

from pathlib import Path

from chunking.parsers import parse_bytes, parse_file
from tests.parsers.conftest import assert_blank_line_layout, assert_exact_offsets


def test_html_sample_drops_chrome_and_keeps_blocks(sample_dir: Path) -> None:
    document = parse_file(sample_dir / "field-notes.html")
    assert document.title == "Field notes: a week of river sampling"
    for dropped in ("analytics", "Home", "Lab blog", "Lake survey", "All rights reserved", "font-family"):
        assert dropped not in document.text
    units = [(s.heading_path, u.content_kind, u.text) for s in document.sections for u in s.units]
    assert units[0] == (("A week of river sampling",), "heading", "A week of river sampling")
    assert units[2][1:] == (
        "heading",
        "Stations",
    )
    assert units[3][1:] == (
        "list",
        "- Upstream weir, above the town\n- Old mill bridge\n- Sewage works outfall\n- Estuary jetty",
    )
    code = next(u for u in units if u[1] == "code")
    assert code == (
        ("A week of river sampling", "Results", "Method"),
        "code",
        "probe calibrate --ph 4.0 7.0 10.0\nprobe read --station weir --repeat 3",
    )
    assert_exact_offsets(document)
    assert_blank_line_layout(document)


def test_html_table_rows_join_cells_and_count_header_rows(sample_dir: Path) -> None:
    document = parse_file(sample_dir / "field-notes.html")
    table = next(u for s in document.sections for u in s.units if u.content_kind == "table")
    rows = [table.text[r.start : r.end] for r in table.rows]
    assert rows[0] == "Station | Temperature (°C) | pH | Turbidity (NTU)"
    assert rows[1] == "Upstream weir | 11.2 | 7.4 | 3.1"
    assert len(rows) == 5
    assert table.header_rows == 1
    assert document.metadata["table_count"] == 1


def test_html_nested_lists_indent_and_number() -> None:
    html = b"<ol><li>first<ul><li>inner a</li><li>inner b</li></ul></li><li>second</li></ol>"
    document = parse_bytes(html, kind="html", source_uri="mem://l.html")
    assert document.sections[0].units[0].text == "1. first\n  - inner a\n  - inner b\n2. second"


def test_html_loose_text_in_divs_becomes_units() -> None:
    html = b"<div>alpha <b>beta</b><div>gamma</div> delta</div><p>para</p>"
    document = parse_bytes(html, kind="html", source_uri="mem://d.html")
    assert [u.text for u in document.sections[0].units] == ["alpha beta", "gamma", "delta", "para"]
    assert_blank_line_layout(document)


def test_html_hidden_and_navigation_roles_are_dropped() -> None:
    html = (
        b'<div role="navigation">menu</div><p hidden>secret</p><h2>T<a class="headerlink">\xc2\xb6</a></h2>'
    )
    document = parse_bytes(html, kind="html", source_uri="mem://h.html")
    assert document.text == "T"
    assert document.sections[0].heading_path == ("T",)


def test_html_declared_legacy_charset_is_used() -> None:
    html = '<meta charset="iso-8859-1"><p>café déjà vu</p>'.encode("latin-1")
    document = parse_bytes(html, kind="html", source_uri="mem://e.html")
    assert document.text == "café déjà vu"
    assert document.metadata["encoding"] == "iso-8859-1"
