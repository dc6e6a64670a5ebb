"""Kind guessing from names and first bytes."""

from __future__ import annotations

import pytest

from chunking.parsers import KINDS, guess_kind


@pytest.mark.parametrize(
    ("name", "head", "kind"),
    [
        ("a.md", b"# x", "markdown"),
        ("a.HTML", b"", "html"),
        ("a.txt", b"plain", "text"),
        ("a.pdf", b"%PDF-1.7", "pdf"),
        ("a.txt", b"%PDF-1.4\n", "pdf"),
        ("a.csv", b"a,b", "csv"),
        ("a.tsv", b"a\tb", "csv"),
        ("a.json", b"{}", "chat"),
        ("a.jsonl", b'{"speaker":', "chat"),
        ("noext", b"<!DOCTYPE html><html>", "html"),
        ("noext", b'{"title": "t", "turns": []}', "chat"),
        ("noext", b"just words", "text"),
    ],
)
def test_guess_kind_uses_content_then_name(name: str, head: bytes, kind: str) -> None:
    assert guess_kind(name, head) == kind
    assert kind in KINDS
