"""Bad input: each case is a ParseError with a clear message or a valid document, quickly."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from chunking.errors import ParseError
from chunking.parsers import KINDS, ParseLimits, parse_bytes, parse_file
from tests.parsers.conftest import SAMPLE, assert_exact_offsets


@pytest.mark.parametrize("kind", KINDS)
def test_parse_bytes_empty_input_is_a_parse_error(kind: str) -> None:
    with pytest.raises(ParseError, match="empty"):
        parse_bytes(b"", kind=kind, source_uri=f"mem://empty.{kind}")


@pytest.mark.parametrize("kind", ["markdown", "text", "html"])
def test_parse_bytes_blank_input_is_a_parse_error(kind: str) -> None:
    with pytest.raises(ParseError, match="no text found"):
        parse_bytes(b"  \n\n\t\n", kind=kind, source_uri=f"mem://blank.{kind}")


@pytest.mark.parametrize("name", ["image.txt", "image.md", "image.csv", "image.json", "image.html"])
def test_parse_file_binary_with_text_extension_is_a_parse_error(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 16)
    with pytest.raises(ParseError, match="not a text file") as info:
        parse_file(path)
    assert info.value.source == path.resolve().as_uri()


def test_parse_file_truncated_pdf_is_a_parse_error(tmp_path: Path) -> None:
    data = (SAMPLE / "orchard-report.pdf").read_bytes()
    path = tmp_path / "cut.pdf"
    path.write_bytes(data[: len(data) // 3])
    try:
        document = parse_file(path)
    except ParseError as error:
        assert "PDF" in str(error)
    else:  # PDFium can repair some truncations; then the pages it recovered must be sound.
        assert all(u.page for s in document.sections for u in s.units)


def test_parse_file_garbage_pdf_is_a_parse_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.pdf"
    path.write_bytes(b"%PDF-1.7\n" + b"garbage " * 100)
    with pytest.raises(ParseError, match="corrupt or truncated"):
        parse_file(path)


def test_parse_file_encrypted_pdf_says_decrypt(tmp_path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.cell(text="secret")
    pdf.set_encryption(owner_password="owner", user_password="user")
    path = tmp_path / "locked.pdf"
    path.write_bytes(bytes(pdf.output()))
    with pytest.raises(ParseError, match="encrypted") as info:
        parse_file(path)
    assert "decrypt" in info.value.hint


def test_parse_bytes_pdf_over_max_pages_names_the_limit() -> None:
    data = (SAMPLE / "orchard-report.pdf").read_bytes()
    with pytest.raises(ParseError, match="max_pages=2"):
        parse_bytes(data, kind="pdf", source_uri="mem://r.pdf", limits=ParseLimits(max_pages=2))


@pytest.mark.parametrize(
    "raw",
    [
        b'{"title": "t", "turns": [',
        b"{not json}",
        b'{"a": 1}\n{"b": ',
        b'{"turns": "no"}',
        b'[{"text": "x"}]',
    ],
    ids=["truncated", "invalid", "bad-jsonl", "turns-not-list", "no-speaker"],
)
def test_parse_bytes_malformed_chat_json_is_a_parse_error(raw: bytes) -> None:
    with pytest.raises(ParseError) as info:
        parse_bytes(raw, kind="chat", source_uri="mem://c.json")
    assert "turns" in info.value.hint


def test_parse_bytes_deeply_nested_json_is_a_parse_error() -> None:
    raw = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(ParseError, match="nested too deeply"):
        parse_bytes(raw, kind="chat", source_uri="mem://deep.json")


def test_parse_bytes_deeply_nested_html_is_bounded() -> None:
    raw = b"<div>" * 10_000 + b"<p>deep text</p>" + b"</div>" * 10_000
    started = time.perf_counter()
    document = parse_bytes(raw, kind="html", source_uri="mem://deep.html")
    assert document.text == "deep text"
    assert time.perf_counter() - started < 5


def test_parse_bytes_deeply_nested_markdown_is_bounded() -> None:
    raw = b"> " * 5_000 + b"quote\n\n" + b"- " * 5_000 + b"item\n"
    document = parse_bytes(raw, kind="markdown", source_uri="mem://deep.md")
    assert_exact_offsets(document)


@pytest.mark.parametrize("kind", ["text", "markdown", "html", "csv"])
def test_parse_bytes_50mb_single_line_is_bounded(kind: str) -> None:
    raw = b"word " * (10 * 1024 * 1024)  # 50 MiB, no newline
    started = time.perf_counter()
    try:
        document = parse_bytes(raw, kind=kind, source_uri=f"mem://long.{kind}")
    except ParseError as error:
        assert "field" in str(error) or "CSV" in str(error)
    else:
        assert len(document.sections[0].units) >= 1
    assert time.perf_counter() - started < 30


def test_parse_bytes_csv_with_100k_rows_is_one_table_quickly() -> None:
    raw = b"id,name,value\n" + b"".join(b"%d,name %d,%d.5\n" % (i, i, i) for i in range(100_000))
    started = time.perf_counter()
    document = parse_bytes(raw, kind="csv", source_uri="mem://big.csv")
    assert document.metadata["row_count"] == 100_000
    assert len(document.sections[0].units[0].rows) == 100_001
    assert time.perf_counter() - started < 20


def test_parse_bytes_csv_over_max_rows_names_the_limit() -> None:
    raw = b"a\n" + b"1\n" * 50
    with pytest.raises(ParseError, match=r"max_rows=10"):
        parse_bytes(raw, kind="csv", source_uri="mem://r.csv", limits=ParseLimits(max_rows=10))
