"""Guessing a source's kind from its name and its first bytes."""

from __future__ import annotations

from pathlib import PurePath

__all__ = ["EXTENSIONS", "KINDS", "guess_kind"]

KINDS: tuple[str, ...] = ("markdown", "html", "text", "pdf", "csv", "chat")

EXTENSIONS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdown": "markdown",
    ".mkd": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".txt": "text",
    ".text": "text",
    ".rst": "text",
    ".log": "text",
    ".pdf": "pdf",
    ".csv": "csv",
    ".tsv": "csv",
    ".json": "chat",
    ".jsonl": "chat",
    ".ndjson": "chat",
}


def guess_kind(path: str | PurePath, head_bytes: bytes) -> str:
    """Return the kind of a source from its file name and its first bytes.

    Content wins where it is unambiguous (a ``%PDF-`` header is a PDF whatever the name); then the
    extension decides; then the content again (HTML and JSON openings); anything else is ``text``.

    Args:
        path: The file name or path (only the suffix is read).
        head_bytes: The first bytes of the file (a few KiB is plenty; may be empty).

    Returns:
        One of :data:`KINDS`.
    """
    head = head_bytes[:4096]
    if head.lstrip(b"\xef\xbb\xbf \t\r\n")[:5] == b"%PDF-":
        return "pdf"
    by_name = EXTENSIONS.get(PurePath(str(path)).suffix.lower())
    if by_name is not None:
        return by_name
    lowered = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:512].lower()
    if lowered.startswith((b"<!doctype html", b"<html")) or b"<body" in lowered:
        return "html"
    if lowered.startswith((b"{", b"[")) and (b'"turns"' in head or b'"speaker"' in head):
        return "chat"
    return "text"
