"""Plain-text parser: paragraphs with offsets into the original, pages and furniture."""

from __future__ import annotations

from pathlib import Path

from chunking.parsers import parse_bytes, parse_file
from tests.parsers.conftest import assert_exact_offsets

RFC_PAGE = (
    "   Body text of page {n} that goes on\n   for two lines.\n\n\n\n"
    "Zeilenga                    Standards Track                     [Page {n}]\n"
    "\f\n"
    "RFC 4510                   LDAP: TS Road Map                   June 2006\n\n\n"
)


def test_text_paragraphs_keep_original_text_and_offsets(sample_dir: Path) -> None:
    raw = (sample_dir / "lighthouse-log.txt").read_text("utf-8")
    document = parse_file(sample_dir / "lighthouse-log.txt")
    assert document.text == raw
    units = document.sections[0].units
    assert units[0].text == "The Keeper's Log, Autumn"
    assert len(units) == 6
    assert_exact_offsets(document)
    assert document.title == "lighthouse-log"


def test_text_crlf_is_normalized_then_offsets_point_into_it() -> None:
    document = parse_bytes(b"one\r\ntwo\r\n\r\nthree\r\n", kind="text", source_uri="mem://c.txt")
    assert document.text == "one\ntwo\n\nthree\n"
    assert [u.text for u in document.sections[0].units] == ["one\ntwo", "three"]
    assert_exact_offsets(document)


def test_text_form_feeds_and_rfc_page_lines_stay_out_of_units() -> None:
    raw = "".join(RFC_PAGE.format(n=n) for n in range(1, 5)).encode()
    document = parse_bytes(raw, kind="text", source_uri="mem://rfc.txt")
    units = document.sections[0].units
    assert all("\f" not in u.text for u in units)
    assert [u.text for u in units] == [
        f"Body text of page {n} that goes on\n   for two lines." for n in range(1, 5)
    ]
    assert document.metadata["page_lines_dropped"] == 8
    assert document.metadata["page_count"] == 5
    assert_exact_offsets(document)


def test_text_file_without_blank_lines_splits_long_runs_into_lines() -> None:
    raw = "\n".join(f"Verse {n} of a long book without blank lines." for n in range(400)).encode()
    document = parse_bytes(raw, kind="text", source_uri="mem://verses.txt")
    units = document.sections[0].units
    assert len(units) == 400
    assert units[3].text == "Verse 3 of a long book without blank lines."
    assert_exact_offsets(document)
