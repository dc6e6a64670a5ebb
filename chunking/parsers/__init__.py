"""Parsers: files and bytes into :class:`~chunking.document.Document`.

Public API: :func:`parse_file`, :func:`parse_bytes`, :class:`ParseLimits`, :data:`KINDS` and
:func:`guess_kind`. One module per format (``markdown``, ``html``, ``text``, ``pdf``, ``csv``,
``chat``), each with a ``parse(data, source_uri, limits)`` function and a ``PARSER_VERSION``
that is mixed into every document's version id. Every failure is a
:class:`~chunking.errors.ParseError` naming the source, the reason and what to do.
"""

from __future__ import annotations

from pathlib import Path

from chunking.document import Document
from chunking.errors import ParseError
from chunking.parsers import chat, csv, html, markdown, pdf, text
from chunking.parsers.base import FormatParser
from chunking.parsers.detect import KINDS, guess_kind
from chunking.parsers.limits import ParseLimits, check_limit

__all__ = ["KINDS", "PARSERS", "ParseLimits", "guess_kind", "parse_bytes", "parse_file"]

PARSERS: dict[str, FormatParser] = {
    "markdown": markdown.parse,
    "html": html.parse,
    "text": text.parse,
    "pdf": pdf.parse,
    "csv": csv.parse,
    "chat": chat.parse,
}

_HEAD = 4096


def parse_bytes(data: bytes, *, kind: str, source_uri: str, limits: ParseLimits | None = None) -> Document:
    """Parse ``data`` as a ``kind`` document from ``source_uri``.

    The document id comes from ``source_uri``; the version id from ``data`` and the version of
    the kind's parser. ``metadata`` holds ``encoding``, ``parser``, ``parser_version`` and
    per-format figures (``page_count``, ``row_count``, ``turn_count``, ...).

    Args:
        data: The raw source bytes.
        kind: One of :data:`KINDS`.
        source_uri: Where the bytes came from (any URI; it names the document).
        limits: Size limits; defaults to ``ParseLimits()``.

    Raises:
        ParseError: Unknown kind, a limit exceeded, or a source that cannot be parsed.
    """
    if kind not in PARSERS:
        raise ParseError(source_uri, f"unknown kind {kind!r}", f"use one of {', '.join(KINDS)}")
    limits = limits or ParseLimits()
    check_limit(source_uri, "max_bytes", len(data), limits, "bytes")
    try:
        return PARSERS[kind](data, source_uri, limits)
    except ParseError:
        raise
    except (RecursionError, MemoryError) as exc:
        # A library ran out of stack or memory on this input: a failure of this source, not of
        # the process. Other exceptions are bugs and propagate.
        raise ParseError(source_uri, f"cannot parse as {kind}: {exc!r}"[:500], "check the file") from exc


def parse_file(path: str | Path, *, kind: str | None = None, limits: ParseLimits | None = None) -> Document:
    """Read and parse the file at ``path``; the kind is guessed when not given.

    The source URI is the resolved absolute path as a ``file://`` URI. The size limit is
    checked before the file is read.

    Raises:
        ParseError: The file is missing or unreadable, over a limit, or cannot be parsed.
    """
    resolved = Path(path).resolve()
    source_uri = resolved.as_uri()
    limits = limits or ParseLimits()
    try:
        size = resolved.stat().st_size
        check_limit(source_uri, "max_bytes", size, limits, "bytes")
        data = resolved.read_bytes()
    except OSError as exc:
        raise ParseError(source_uri, f"cannot read the file ({exc.strerror})", "check the path") from exc
    if kind is None:
        kind = guess_kind(resolved, data[:_HEAD])
    return parse_bytes(data, kind=kind, source_uri=source_uri, limits=limits)
