"""The public API: ids, versions, metadata, limits and errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from chunking.document import Document
from chunking.errors import ParseError
from chunking.parsers import KINDS, PARSERS, ParseLimits, parse_bytes, parse_file
from chunking.parsers import markdown as markdown_parser


def test_parse_file_id_comes_from_resolved_uri(tmp_path: Path) -> None:
    path = tmp_path / "doc.md"
    path.write_text("# A\n\nbody\n")
    document = parse_file(path)
    assert document.source_uri == path.resolve().as_uri()
    assert document.id == Document.node_id_for(path.resolve().as_uri())
    path.write_text("# A\n\nbody changed\n")
    changed = parse_file(path)
    assert changed.id == document.id
    assert changed.version_id != document.version_id
    assert parse_file(path).version_id == changed.version_id


def test_parse_bytes_version_changes_with_parser_version(monkeypatch: pytest.MonkeyPatch) -> None:
    before = parse_bytes(b"# A\n", kind="markdown", source_uri="mem://a.md")
    monkeypatch.setattr(markdown_parser, "PARSER_VERSION", "999")
    after = parse_bytes(b"# A\n", kind="markdown", source_uri="mem://a.md")
    assert before.id == after.id and before.version_id != after.version_id
    assert after.metadata["parser_version"] == "999"


def test_parse_bytes_metadata_names_encoding_and_parser() -> None:
    document = parse_bytes(b"x", kind="text", source_uri="mem://x.txt")
    assert document.metadata["encoding"] == "utf-8"
    assert document.metadata["parser"]


def test_kinds_all_have_parsers() -> None:
    assert set(KINDS) == set(PARSERS)


def test_parse_bytes_unknown_kind_lists_kinds() -> None:
    with pytest.raises(ParseError, match="use one of markdown"):
        parse_bytes(b"x", kind="docx", source_uri="mem://x.docx")


def test_parse_limits_are_frozen_and_positive() -> None:
    limits = ParseLimits()
    assert limits.max_bytes == 64 * 1024 * 1024 and limits.max_pages == 2000
    with pytest.raises(ValidationError):
        ParseLimits(max_bytes=0)
    with pytest.raises(ValidationError):
        limits.max_bytes = 1  # type: ignore[misc]


def test_parse_file_over_max_bytes_names_the_limit_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"a" * 2000)
    with pytest.raises(ParseError, match=r"max_bytes=1000.*ParseLimits\(max_bytes=2000\)"):
        parse_file(path, limits=ParseLimits(max_bytes=1000))


def test_parse_file_missing_path_is_a_parse_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="cannot read"):
        parse_file(tmp_path / "nope.md")


def test_parse_file_every_sample_file_parses(sample_dir: Path) -> None:
    files = sorted(p for p in sample_dir.iterdir() if p.name != "README.md")
    kinds = {parse_file(p).kind for p in files}
    assert kinds == set(KINDS)
    assert sum(p.stat().st_size for p in sample_dir.iterdir()) < 1024 * 1024
