"""The chunk model: one retrieval-sized piece of a document, with its provenance."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from chunking.chunk_metadata import ChunkMetadata
from chunking.ids import CHUNK_NAMESPACE, SEPARATOR, uuid5_with_prefix

__all__ = [
    "Chunk",
    "ChunkMetadata",
    "ContentKind",
    "NodeRecord",
    "PageProvenance",
    "Provenance",
    "TextProvenance",
    "contextual_text",
    "section_label",
]

# ``toc``: a table of contents or an index page (dot leaders, page lists), kept out of search.
ContentKind = Literal["text", "table_row", "code", "heading", "toc"]

_WHITESPACE_RUN = re.compile(r"\s+")
_DASH_RUN = re.compile(r"-{3,}")


# Models made without validation (a chunker's own well-typed values, one per chunk) are made
# through pydantic's pickle protocol: ``__setstate__`` with the state ``__getstate__`` gives
# (taken once from a ``model_construct`` template, so pydantic names its own keys), the
# ``__dict__`` being the object's fields. That is what ``model_construct`` makes (the test
# tests/chunking/test_chunk_construction.py holds them equal), without its loop over every
# field's aliases and defaults, which at character budgets would slow the section chunker.
_new = object.__new__
_setstate = BaseModel.__setstate__  # read once: these run once per chunk
# What TextProvenance(start=..., end=...) and PageProvenance(pages=...) set: each made without
# validation shares one set (a frozen model never changes its fields_set, and a set less per
# object is a tracked object less for the garbage collector).
_SPAN_FIELDS_SET = {"start", "end"}
_PAGES_FIELDS_SET = {"pages"}


class TextProvenance(BaseModel):
    """A character span ``[start, end)`` in ``Document.text`` (Python string indices)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["text"] = "text"
    start: int = Field(ge=0)
    end: int = Field(ge=0)

    @classmethod
    def at(cls, start: int, end: int) -> TextProvenance:
        """A span from a chunker's own offsets (non-negative ints), without validation: what
        ``model_construct(start=start, end=end)`` gives (placed once per chunk)."""
        span = _new(cls)
        _setstate(span, {**_SPAN_STATE, "__dict__": {"kind": "text", "start": start, "end": end}})
        return span


class PageProvenance(BaseModel):
    """The 1-based pages a chunk came from, with optional boxes ``(x0, y0, x1, y1)`` per page."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["page"] = "page"
    pages: tuple[int, ...] = Field(min_length=1)
    boxes: tuple[tuple[float, float, float, float], ...] = ()

    @classmethod
    def of(cls, pages: tuple[int, ...]) -> PageProvenance:
        """Pages from a chunker's own units (a non-empty tuple of page numbers from 1), without
        validation: what ``model_construct(pages=pages)`` gives."""
        return cls.model_construct(_PAGES_FIELDS_SET, kind="page", pages=pages, boxes=())


Provenance = Annotated[TextProvenance | PageProvenance, Field(discriminator="kind")]


class NodeRecord(BaseModel):
    """A JSON-safe write record for a graph store: an id, a label and flat properties."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    label: str
    properties: dict[str, Any]


class Chunk(BaseModel):
    """One retrieval-sized piece of a document.

    Attributes:
        id: Deterministic id (see :meth:`id_for`); None only for a chunk not yet placed.
        document_id: The id of the document (stable across its versions).
        index: Position within the document at this level, from 0.
        text: The chunk text as stored.
        provenance: Where the chunk sits in its source: a text span or pages.
        heading_path: Headings above the chunk, outermost first.
        content_kind: ``text``, ``table_row``, ``code``, ``heading`` or ``toc``.
        chunker: Strategy name of the chunker that made the chunk.
        chunker_hash: Fingerprint of that chunker's settings.
        level: 1 for a parent (unit of extraction), 0 for a child or flat chunk.
        parent_id: The parent chunk's id, for a child.
        metadata: Facts beside the fields (token count, turn range, speakers, fences, ...):
            a plain dict whose keys and types :class:`~chunking.chunk_metadata.ChunkMetadata`
            declares.
        embedding: Optional vector.
        created_at: When the chunk object was made.
    """

    model_config = ConfigDict(extra="forbid")

    id: UUID | None = None
    document_id: UUID
    index: int = Field(default=0, ge=0)
    text: str
    provenance: Provenance
    heading_path: list[str] = Field(default_factory=list)
    content_kind: ContentKind = "text"
    chunker: str | None = None
    chunker_hash: str | None = None
    level: int = Field(default=0, ge=0, le=1)
    parent_id: UUID | None = None
    metadata: ChunkMetadata = Field(default_factory=lambda: ChunkMetadata())
    embedding: list[float] | None = None
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @classmethod
    def made(
        cls,
        *,
        document_id: UUID,
        text: str,
        provenance: TextProvenance | PageProvenance,
        heading_path: list[str],
        content_kind: ContentKind,
        metadata: ChunkMetadata,
        created_at: datetime,
    ) -> Chunk:
        """A chunk from a chunker's own well-typed values, without validation: what
        ``model_construct`` gives with every field set (id, index and names left for
        ``BaseChunker.chunk`` to place). The values must already be of the fields' types.

        The chunks share one fields_set holding every field name: pydantic only ever adds a
        field name to it (on assignment; copies get their own set), which leaves it as it is,
        and one set instead of one per chunk spares the garbage collector a tracked object per
        chunk."""
        chunk = _new(cls)
        _setstate(
            chunk,
            {
                **_CHUNK_STATE,
                "__dict__": {
                    "id": None,
                    "document_id": document_id,
                    "index": 0,
                    "text": text,
                    "provenance": provenance,
                    "heading_path": heading_path,
                    "content_kind": content_kind,
                    "chunker": None,
                    "chunker_hash": None,
                    "level": 0,
                    "parent_id": None,
                    "metadata": metadata,
                    "embedding": None,
                    "created_at": created_at,
                },
            },
        )
        return chunk

    @staticmethod
    def id_for(
        *,
        document_id: UUID,
        version_id: UUID | None = None,
        provenance: TextProvenance | PageProvenance,
        index: int,
        chunker_hash: str | None = None,
        level: int = 0,
        text: str | None = None,
        occurrence: int = 0,
    ) -> UUID:
        """Compute the chunk id.

        A text chunk's id comes from the document id, its level, its text and which occurrence
        of that text at that level it is (0 for the first, in document order); never from the
        version or the span. So an edit of a document re-ids only the chunks whose text it
        changed: a chunk an insertion above it moved keeps its id (its row, offsets included,
        is what changed), and ``chunk_changes``, incremental exports and a graph store
        downstream see a delta proportional to the edit. One id always means one text: a
        consumer keyed by chunk id (a vector index, a graph store, a cache of extractions)
        never has to ask whether the text under an id it holds has moved, and an id it has is
        an id it never needs to embed or extract again. A change of chunk size, which changes
        texts, changes ids. Without ``text`` the span names the chunk instead.

        A page chunk's id comes from the document id, the version id when given, the chunker
        hash and the index (its pages say too little of where it is to name it): a re-chunk
        with other settings never takes over chunk N of the earlier settings.

        A parent (level 1) adds a level part, so a parent and a child of the same text differ;
        level 0 adds none.
        """
        make = Chunk.ids_for(document_id, version_id, chunker_hash)
        return make(provenance, index, level, text, occurrence)

    @staticmethod
    def ids_for(
        document_id: UUID, version_id: UUID | None = None, chunker_hash: str | None = None
    ) -> Callable[..., UUID]:
        """Return ``make(provenance, index, level=0, text=None, occurrence=0)``, :meth:`id_for`
        of one document's chunks.

        The document's part of the name is joined and hashed once, so placing a document's
        chunks costs a copy of that hash and the hash of each chunk's own part: the same ids as
        :meth:`id_for`, which calls it.
        The name hashed is the one :func:`chunking.ids.stable_uuid` makes of the same parts:
        ``document[, "level", level][, "occurrence", occurrence], "text", text`` for a text
        chunk (the text last, so no text can forge another name; ``document, start, end[,
        "level", level]`` without a text), ``document[, "version", version], "page",
        chunker_hash, index[, "level", level]`` for a page chunk.
        """
        # A text chunk's name leaves the version and span out (see id_for); a page chunk's
        # keeps the version.
        named = uuid5_with_prefix(CHUNK_NAMESPACE.bytes, f"{document_id}{SEPARATOR}")
        paged = named
        if version_id is not None:
            paged = uuid5_with_prefix(
                CHUNK_NAMESPACE.bytes,
                SEPARATOR.join((str(document_id), "version", str(version_id))) + SEPARATOR,
            )
        page_head = f"page{SEPARATOR}{chunker_hash}{SEPARATOR}"
        level_suffix = f"{SEPARATOR}level{SEPARATOR}"

        def make(
            provenance: TextProvenance | PageProvenance,
            index: int,
            level: int = 0,
            text: str | None = None,
            occurrence: int = 0,
        ) -> UUID:
            if isinstance(provenance, TextProvenance):
                if text is None:
                    tail = f"{provenance.start}{SEPARATOR}{provenance.end}"
                    return named(f"{tail}{level_suffix}{level}" if level else tail)
                head = f"level{SEPARATOR}{level}{SEPARATOR}" if level else ""
                if occurrence:
                    head = f"{head}occurrence{SEPARATOR}{occurrence}{SEPARATOR}"
                return named(f"{head}text{SEPARATOR}{text}")
            tail = f"{page_head}{index}"
            return paged(f"{tail}{level_suffix}{level}" if level else tail)

        return make

    def section_label(self) -> str | None:
        """Return the heading path as one line, or None when the path is empty (see
        :func:`section_label`)."""
        return section_label(self.heading_path)

    @property
    def contextual_text(self) -> str:
        """The text with its heading path above it, for embedding; the stored text is unchanged
        (see :func:`contextual_text`)."""
        return contextual_text(self.text, self.heading_path, self.metadata)

    def to_node_record(self) -> NodeRecord:
        """Return this chunk as a graph-store write record.

        Raises:
            ValueError: ``id`` is None (the chunk was never placed by a chunker).
        """
        if self.id is None:
            raise ValueError(
                f"chunk {self.index} of document {self.document_id} has no id; "
                "compute one with Chunk.id_for before writing it to a graph store"
            )
        data = self.model_dump(mode="json", exclude={"id", "embedding"})
        properties = {
            "document_id": data["document_id"],
            "index": data["index"],
            "text": data["text"],
            "provenance": data["provenance"],
            "heading_path": data["heading_path"],
            "section_label": self.section_label(),
            "content_kind": data["content_kind"],
            "chunker": data["chunker"],
            "chunker_hash": data["chunker_hash"],
            "level": data["level"],
            "parent_id": data["parent_id"],
            "metadata": data["metadata"],
            "created_at": data["created_at"],
        }
        return NodeRecord(
            id=str(self.id), label="ParentChunk" if self.level else "Chunk", properties=properties
        )


_ALL_FIELDS_SET = set(Chunk.model_fields)  # shared by Chunk.made's chunks (see there)
# The pickled state of a model made without validation, but for its fields (see _new above).
_SPAN_STATE = TextProvenance.model_construct(_SPAN_FIELDS_SET, start=0, end=0).__getstate__()
_CHUNK_STATE = Chunk.model_construct(_ALL_FIELDS_SET, text="", provenance=None).__getstate__()


def section_label(heading_path: Sequence[str]) -> str | None:
    """Return a heading path as one line, or None when the path is empty.

    Whitespace runs become one space and runs of three or more dashes one dash, so a heading
    cannot end a text block in a prompt.
    """
    parts = [_DASH_RUN.sub("-", _WHITESPACE_RUN.sub(" ", h)).strip() for h in heading_path]
    parts = [p for p in parts if p]
    return " > ".join(parts) if parts else None


# What separates a page's own title from its site's name in an HTML <title>.
_TITLE_SUFFIX = re.compile(r"\s+[—–|·-]\s+|:\s+")


def _titled_by(first_heading: str, title: str) -> bool:
    """True when ``first_heading`` says what ``title`` says: the same text, or the title is the
    heading and then a suffix after a separator (`` — ``, `` | ``, ``: ``)."""
    if not first_heading:
        return False
    if title == first_heading:
        return True
    return title.startswith(first_heading) and _TITLE_SUFFIX.match(title, len(first_heading)) is not None


def contextual_text(text: str, heading_path: Sequence[str], metadata: Mapping[str, Any] | None) -> str:
    """A chunk's text with its heading path above it, for embedding (``Chunk.contextual_text``
    of a chunk with these fields; a function so that stored rows need no ``Chunk``).

    The document title (``metadata["document_title"]``, set at chunk time) leads the label
    unless the heading path already starts with it, or with all of it but a site's suffix
    (``datetime — Basic date and time types — Python 3.11.2 documentation`` under the heading
    ``datetime — Basic date and time types``). A part of a split fenced code block gets
    back the fence lines it lacks (``metadata["fence_open"]``, with the language, and
    ``metadata["fence_close"]``), so it still reads as a code block; a part of a split chat
    turn after its first gets back its speaker (``metadata["continues_turn"]``). With an
    ``overlap`` setting, the end of the chunk before (``metadata["context_before"]``) comes
    first, after ``…``.
    """
    label = section_label(heading_path)
    if metadata:
        speaker = metadata.get("continues_turn")
        if speaker:
            text = f"{speaker}: {text}"
        opening, closing = metadata.get("fence_open"), metadata.get("fence_close")
        if opening:
            text = f"{opening}\n{text}"
        if closing:
            text = f"{text}\n{closing}"
        context = metadata.get("context_before")
        if context:
            # The end of the chunk before (an overlap setting), for context only.
            text = f"…{context}\n\n{text}"
        title = " ".join(str(metadata.get("document_title") or "").split())
        first = " ".join(heading_path[0].split()) if heading_path else ""
        if title and not _titled_by(first, title):
            label = f"{title} > {label}" if label else title
    return f"{label}\n\n{text}" if label else text
