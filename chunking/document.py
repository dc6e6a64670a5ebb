"""The document model: what parsers produce and chunkers read.

A document's ``text`` is the text every offset points into. Units are paragraphs, lists, code
blocks, headings and tables in reading order, grouped into sections under a heading path. Units
of a text document carry ``start``/``end`` offsets (Python string indices, end exclusive) with
``text[start:end] == unit.text``; units of a paged document (PDF) carry a ``page`` instead.
"""

from __future__ import annotations

import re
from typing import Any
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, model_validator

from chunking.ids import DOCUMENT_NAMESPACE, VERSION_NAMESPACE, content_hash, stable_uuid

__all__ = ["Document", "Section", "Span", "Turn", "Unit"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
# A paragraph break: a line break, optional blank-ish lines, another line break.
_PARAGRAPH_BREAK = re.compile(r"\r?\n(?:[ \t\f\v]*\r?\n)+")


class Span(BaseModel):
    """A half-open character range ``[start, end)``."""

    model_config = _FROZEN

    start: int = Field(ge=0)
    end: int = Field(ge=0)


class Unit(BaseModel):
    """One block of a document: a paragraph, list, code block, heading or table.

    Attributes:
        text: The block's text.
        content_kind: ``text``, ``heading``, ``code``, ``list``, ``table`` (or another
            parser-specific kind; chunkers treat unknown kinds as text).
        start: Offset of the block in ``Document.text``; None for page units.
        end: End offset (exclusive); None for page units.
        page: 1-based page number for units of a paged document (the first, for a unit that
            runs on over a page break).
        last_page: For a page unit that runs on over page breaks, its last page; None when it
            is on ``page`` only.
        rows: For a table, each row's span relative to ``text`` (header rows first).
        header_rows: How many leading ``rows`` are header rows, repeated in each row group.
        clipped_from: For a table cut down to a parent chunk's span (see
            ``chunking.chunkers.restrict_to_parent``), the whole table it was cut from, so a
            child chunker still knows the header and each row's cells. Never serialized: set
            only on the in-memory documents children are chunked from.
    """

    model_config = _FROZEN

    text: str
    content_kind: str = "text"
    start: int | None = Field(default=None, ge=0)
    end: int | None = Field(default=None, ge=0)
    page: int | None = Field(default=None, ge=1)
    last_page: int | None = Field(default=None, ge=1)
    rows: tuple[Span, ...] = ()
    header_rows: int = Field(default=0, ge=0)
    clipped_from: Unit | None = Field(default=None, exclude=True, repr=False)

    @model_validator(mode="after")
    def _check_last_page(self) -> Unit:
        if self.last_page is not None and (self.page is None or self.last_page < self.page):
            raise ValueError(f"a unit's last_page ({self.last_page}) needs a page at or before it")
        return self

    @property
    def has_offsets(self) -> bool:
        """True when the unit points into ``Document.text``."""
        return self.start is not None and self.end is not None

    @property
    def pages(self) -> tuple[int, ...]:
        """The pages the unit is on (``page`` through ``last_page``); empty for a text unit."""
        if self.page is None:
            return ()
        return tuple(range(self.page, (self.last_page or self.page) + 1))


class Section(BaseModel):
    """Units under one heading path, in reading order."""

    model_config = _FROZEN

    heading_path: tuple[str, ...] = ()
    units: tuple[Unit, ...] = ()


class Turn(BaseModel):
    """One chat turn: who spoke and where the turn's text sits in ``Document.text``."""

    model_config = _FROZEN

    speaker: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)


class Document(BaseModel):
    """A parsed source, ready for chunking.

    ``id`` is stable across edits of one source (from its URI); ``version_id`` changes with the
    content (from its hash). Build one with :meth:`create`, :meth:`from_text` or
    :meth:`from_turns`, or through ``chunking.parse_file``.
    """

    model_config = _FROZEN

    id: UUID
    version_id: UUID
    source_uri: str
    kind: str = "text"
    title: str = ""
    text: str
    sections: tuple[Section, ...] = ()
    turns: tuple[Turn, ...] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check_offsets(self) -> Document:
        """Reject units and turns whose offsets do not slice ``text`` to their own text."""
        size = len(self.text)
        for section in self.sections:
            for unit in section.units:
                if unit.start is None and unit.end is None:
                    continue
                if unit.start is None or unit.end is None or not 0 <= unit.start <= unit.end <= size:
                    raise ValueError(
                        f"{self.source_uri}: unit offsets {unit.start}..{unit.end} are outside the "
                        f"text of length {size}; the parser must give both offsets inside the text"
                    )
                if self.text[unit.start : unit.end] != unit.text:
                    raise ValueError(
                        f"{self.source_uri}: unit at {unit.start}..{unit.end} does not match its "
                        "slice of the document text; the parser must give exact offsets"
                    )
        for turn in self.turns or ():
            if not 0 <= turn.start <= turn.end <= size:
                raise ValueError(
                    f"{self.source_uri}: turn of {turn.speaker!r} at {turn.start}..{turn.end} is "
                    f"outside the text of length {size}"
                )
        return self

    @staticmethod
    def node_id_for(uri: str) -> UUID:
        """Return the document id for a source URI: the same URI always gives the same id."""
        return stable_uuid(DOCUMENT_NAMESPACE, uri)

    @staticmethod
    def version_id_for(digest: str) -> UUID:
        """Return the version id for a content digest (see ``chunking.ids.content_hash``)."""
        return stable_uuid(VERSION_NAMESPACE, digest)

    @classmethod
    def create(
        cls,
        *,
        source_uri: str,
        text: str,
        sections: tuple[Section, ...] | list[Section],
        kind: str = "text",
        title: str = "",
        turns: tuple[Turn, ...] | list[Turn] | None = None,
        metadata: dict[str, Any] | None = None,
        digest: str | None = None,
    ) -> Document:
        """Build a document, deriving ``id`` from the URI and ``version_id`` from the content.

        Args:
            digest: The content hash that versions the document (a parser passes the hash of
                the source bytes and its own version). Defaults to the hash of ``kind`` + text.
        """
        if digest is None:
            digest = content_hash(f"{kind}\x1f{text}")
        return cls(
            id=cls.node_id_for(source_uri),
            version_id=cls.version_id_for(digest),
            source_uri=source_uri,
            kind=kind,
            title=title,
            text=text,
            sections=tuple(sections),
            turns=tuple(turns) if turns is not None else None,
            metadata=metadata or {},
        )

    @classmethod
    def from_text(cls, text: str, *, source_uri: str, kind: str = "text", title: str = "") -> Document:
        """Build a one-section document whose units are the paragraphs of ``text``.

        Paragraphs are separated by blank lines; each unit is the paragraph without surrounding
        whitespace, with exact offsets into ``text``.
        """
        units = tuple(
            Unit(text=text[start:end], start=start, end=end) for start, end in paragraph_spans(text)
        )
        return cls.create(
            source_uri=source_uri,
            text=text,
            sections=(Section(units=units),) if units else (),
            kind=kind,
            title=title,
        )

    @classmethod
    def from_turns(cls, turns: list[tuple[str, str]], *, source_uri: str, title: str = "") -> Document:
        """Build a chat document from ``(speaker, text)`` pairs.

        The document text holds every turn as ``speaker: text``, turns separated by a blank line.
        Each :class:`Turn` spans its whole line (speaker included) and each turn is also a unit,
        so chunkers that read sections see the same text.
        """
        parts: list[str] = []
        spans: list[Turn] = []
        units: list[Unit] = []
        offset = 0
        for speaker, said in turns:
            if parts:
                parts.append("\n\n")
                offset += 2
            line = f"{speaker}: {said}"
            spans.append(Turn(speaker=speaker, start=offset, end=offset + len(line)))
            units.append(Unit(text=line, start=offset, end=offset + len(line)))
            parts.append(line)
            offset += len(line)
        return cls.create(
            source_uri=source_uri,
            text="".join(parts),
            sections=(Section(units=tuple(units)),) if units else (),
            kind="chat",
            title=title,
            turns=spans,
        )

    @property
    def has_page_units(self) -> bool:
        """True when any unit carries a page instead of offsets."""
        return any(not u.has_offsets for s in self.sections for u in s.units)


def paragraph_spans(text: str, base: int = 0) -> list[tuple[int, int]]:
    """Return the ``(start, end)`` of each paragraph of ``text``, whitespace trimmed.

    Offsets are shifted by ``base``; paragraphs made only of whitespace are skipped.
    """
    spans: list[tuple[int, int]] = []
    position = 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        _add_trimmed(text, position, match.start(), base, spans)
        position = match.end()
    _add_trimmed(text, position, len(text), base, spans)
    return spans


def _add_trimmed(text: str, start: int, end: int, base: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        spans.append((start + base, end + base))
