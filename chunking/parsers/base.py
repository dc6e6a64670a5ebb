"""What every format parser shares: the parser signature, versioned digests, titles, errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol
from urllib.parse import unquote, urlparse

from chunking.document import Document, Section, Turn
from chunking.errors import ParseError
from chunking.ids import content_hash
from chunking.parsers.limits import ParseLimits

__all__ = ["FormatParser", "build_document", "no_text", "title_from_uri", "version_tag"]


class FormatParser(Protocol):
    """The signature of each format module's ``parse`` function."""

    def __call__(self, data: bytes, source_uri: str, limits: ParseLimits) -> Document: ...


def version_tag(kind: str, parser_version: str) -> bytes:
    """Return the tag mixed into a document's digest: the kind and its parser's version.

    Bumping a format module's ``PARSER_VERSION`` changes the version id of every document of
    that kind, so stored chunks of the old parse are superseded.
    """
    return f"{kind}/parser-v{parser_version}".encode("ascii")


def build_document(
    *,
    raw: bytes,
    kind: str,
    parser_version: str,
    source_uri: str,
    text: str,
    sections: Sequence[Section],
    title: str,
    metadata: dict[str, Any],
    turns: Sequence[Turn] | None = None,
) -> Document:
    """Build the document with its id from ``source_uri`` and its version from ``raw`` + parser.

    Raises:
        ParseError: The parse found no text at all (an empty or blank document is never valid).
    """
    if not any(s.units for s in sections):
        raise no_text(source_uri, kind)
    metadata = {"parser_version": parser_version, **metadata}
    return Document.create(
        source_uri=source_uri,
        text=text,
        sections=tuple(sections),
        kind=kind,
        title=title,
        turns=turns,
        metadata=metadata,
        digest=content_hash(raw + b"\x1f" + version_tag(kind, parser_version)),
    )


def no_text(source_uri: str, kind: str, hint: str = "") -> ParseError:
    """The error for a source that parsed but holds no text; ``hint`` overrides the kind's."""
    if not hint:
        hint = (
            "a PDF without a text layer (a scan) needs OCR first"
            if kind == "pdf"
            else "check the file is not blank: it holds only whitespace, markup or a byte-order mark"
        )
    return ParseError(source_uri, f"no text found in this {kind} file", hint)


def title_from_uri(source_uri: str) -> str:
    """Return a title from the last path component of a URI or path, without its extension."""
    path = unquote(urlparse(source_uri).path) or source_uri
    name = path.rstrip("/").rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
    return stem or source_uri
