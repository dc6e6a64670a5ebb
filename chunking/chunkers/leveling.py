"""Parent/child leveling: parents are the unit of extraction, children the unit of search.

A parent chunker makes level-1 chunks; a child chunker splits each parent into level-0 chunks
with ``parent_id`` set. Children never cross a parent boundary, their provenance lies inside the
parent's, and together they cover the parent. The two steps are separate methods, so a caller
that stored the parents can redo only the children after a change of child settings.
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict

from chunking.chunk import Chunk, ChunkMetadata, PageProvenance, TextProvenance
from chunking.chunkers.base import BaseChunker, fingerprint_of
from chunking.document import Document, Section, Span, Turn, Unit
from chunking.errors import ChunkingError

__all__ = ["ParentChildChunker", "restrict_to_parent"]


class ParentChildChunker(BaseModel):
    """Make parents with one chunker and split each parent into children with another.

    Attributes:
        parent: The chunker for level-1 chunks.
        child: The chunker that splits each parent into level-0 chunks.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    strategy: Literal["parent-child"] = "parent-child"

    parent: BaseChunker
    child: BaseChunker

    def settings(self) -> dict[str, Any]:
        """Return the strategy name and both chunkers' settings."""
        return {"strategy": self.strategy, "parent": self.parent.settings(), "child": self.child.settings()}

    def fingerprint(self) -> str:
        """Return 16 hex characters of a hash of :meth:`settings` (:func:`fingerprint_of`)."""
        return fingerprint_of(self.settings())

    def count_tokens(self, text: str) -> int:
        """Count tokens with the child chunker's tokenizer (children are the unit of search)."""
        return self.child.count_tokens(text)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """Copy, validating any changed setting (see ``BaseChunker.model_copy``)."""
        if not update:
            return super().model_copy(deep=deep)
        return type(self).model_validate({"parent": self.parent, "child": self.child, **update})

    def chunk(self, document: Document) -> list[Chunk]:
        """Return the level-1 parents, then the level-0 children (indexes 0..n-1 per level)."""
        parents = self.chunk_parents(document)
        return [*parents, *self.chunk_children(document, parents)]

    def chunk_parents(self, document: Document) -> list[Chunk]:
        """Return the parent chunks of ``document`` at level 1, with level-1 ids."""
        parents = []
        seen: Counter[str] = Counter()  # text -> parents named so far
        for chunk in self.parent.chunk(document):
            occurrence = seen[chunk.text]
            seen[chunk.text] += 1
            parents.append(
                chunk.model_copy(
                    update={
                        "level": 1,
                        "id": Chunk.id_for(
                            document_id=document.id,
                            version_id=document.version_id,
                            provenance=chunk.provenance,
                            index=chunk.index,
                            chunker_hash=chunk.chunker_hash,
                            level=1,
                            text=chunk.text,
                            occurrence=occurrence,
                        ),
                    }
                )
            )
        return parents

    def chunk_children(self, document: Document, parents: Sequence[Chunk]) -> list[Chunk]:
        """Split each parent into level-0 children with ``parent_id`` set.

        ``parents`` may be chunks re-loaded from a store; only their id, text and provenance are
        read. Children of a text parent are chunked from the document restricted to the parent's
        span; children of a page parent from the parent's text, on the parent's pages.

        Raises:
            ChunkingError: A child falls outside its parent, or the child chunker broke its
                contract.
        """
        fingerprint = self.child.fingerprint()
        children: list[Chunk] = []
        # text -> children named so far: children over the same span (overlapping turn windows)
        # are told apart by their occurrence, so every child id is unique.
        texts: Counter[str] = Counter()
        unit_index = _UnitIndex(document)
        for parent in sorted(parents, key=lambda p: p.index):
            if parent.id is None:
                raise ChunkingError(f"{document.source_uri}: parent chunk {parent.index} has no id")
            part, laid_out = _restrict(document, parent, unit_index)
            first_turn = unit_index.first_turn_in(parent)
            for raw in self.child._chunk(part):
                if first_turn and "turn_start" in raw.metadata:
                    # The part's turns are numbered from its first: number them in the document.
                    raw.metadata["turn_start"] += first_turn
                    raw.metadata["turn_end"] += first_turn
                provenance = raw.provenance
                if isinstance(parent.provenance, PageProvenance) and not laid_out:
                    # The parent's text could not be laid back onto its units: its pages are all
                    # that is known of where a child's text is.
                    provenance = parent.provenance
                index = len(children)
                chunk_id = Chunk.id_for(
                    document_id=document.id,
                    version_id=document.version_id,
                    provenance=provenance,
                    index=index,
                    chunker_hash=fingerprint,
                    text=raw.text,
                    occurrence=texts[raw.text],
                )
                texts[raw.text] += 1
                children.append(
                    raw.model_copy(
                        update={
                            "id": chunk_id,
                            "index": index,
                            "level": 0,
                            "parent_id": parent.id,
                            "provenance": provenance,
                            "chunker": raw.chunker or self.child.strategy,
                            "chunker_hash": fingerprint,
                            "heading_path": raw.heading_path or list(parent.heading_path),
                            "metadata": _with_title(raw.metadata, document),
                        }
                    )
                )
                _check_inside(document, parent, children[-1])
        self.child.validate_chunks(document, children)
        return children


def _with_title(metadata: ChunkMetadata, document: Document) -> ChunkMetadata:
    # Children are made by the child's _chunk, not chunk(): they get the title here.
    return {**metadata, "document_title": document.title} if document.title else metadata


def _check_inside(document: Document, parent: Chunk, child: Chunk) -> None:
    outer, inner = parent.provenance, child.provenance
    inside = (
        isinstance(outer, TextProvenance)
        and isinstance(inner, TextProvenance)
        and outer.start <= inner.start
        and inner.end <= outer.end
    ) or (
        isinstance(outer, PageProvenance)
        and isinstance(inner, PageProvenance)
        and set(inner.pages) <= set(outer.pages)
    )
    if not inside:
        raise ChunkingError(
            f"{document.source_uri}: child chunk {child.index} lies outside its parent {parent.index}"
        )


class _UnitIndex:
    """The text units and turns of a document sorted by offset, to find those inside a span
    by bisection instead of scanning the whole document once per parent."""

    def __init__(self, document: Document) -> None:
        entries = sorted(
            ((unit.start, unit.end, position, order), (section.heading_path, unit))
            for position, section in enumerate(document.sections)
            for order, unit in enumerate(section.units)
            if unit.start is not None and unit.end is not None
        )
        self.starts = [key[0] for key, _ in entries]
        self.units = entries
        # Largest end so far: units may nest or overlap, so bisect on a running maximum.
        self.max_ends = list(itertools.accumulate((key[1] for key, _ in entries), max))
        # Page units in reading order (pages never go back), to lay a page parent's text back
        # onto the units it was packed from.
        self.page_units = [
            (section.heading_path, unit)
            for section in document.sections
            for unit in section.units
            if unit.page is not None and not unit.has_offsets
        ]
        self.page_firsts = list(itertools.accumulate((u.page or 1 for _, u in self.page_units), max))
        self.turns = sorted(document.turns or (), key=lambda t: (t.start, t.end))
        self.turn_starts = [t.start for t in self.turns]
        self.turn_max_ends = list(itertools.accumulate((t.end for t in self.turns), max))

    def units_in(self, start: int, end: int) -> list[tuple[int, tuple[str, ...], Unit]]:
        """Units overlapping ``[start, end)``, with their section position and heading path."""
        first = bisect.bisect_right(self.max_ends, start)
        last = bisect.bisect_left(self.starts, end)
        return [
            (key[2], path, unit)
            for key, (path, unit) in self.units[first:last]
            if key[0] < end and key[1] > start
        ]

    def page_sections(self, text: str, pages: Sequence[int]) -> list[Section] | None:
        """Lay a page parent's ``text`` back onto the page units it was packed from.

        The section chunker joins a paged chunk's pieces (whole units or slices of one) with a
        blank line, so each blank-line block of ``text`` is found, in order, inside the units on
        ``pages``. Each block becomes a unit with the pages, kind and heading path of the unit
        it is in. Returns None when a block is found in no unit (a table row group that repeats
        its header, a parent from other settings).
        """
        first = bisect.bisect_left(self.page_firsts, min(pages))
        last = bisect.bisect_right(self.page_firsts, max(pages))
        candidates = self.page_units[first:last]
        cursor, offset = 0, 0
        grouped: list[tuple[tuple[str, ...], list[Unit]]] = []
        for block in text.split("\n\n"):
            if not block.strip():
                continue
            while cursor < len(candidates):
                found = candidates[cursor][1].text.find(block, offset)
                if found >= 0:
                    offset = found + len(block)
                    break
                cursor, offset = cursor + 1, 0
            else:
                return None
            path, unit = candidates[cursor]
            piece = Unit.model_construct(
                text=block,
                content_kind=unit.content_kind,
                start=None,
                end=None,
                page=unit.page,
                last_page=unit.last_page,
                rows=(),
                header_rows=0,
            )
            if grouped and grouped[-1][0] == path:
                grouped[-1][1].append(piece)
            else:
                grouped.append((path, [piece]))
        if not grouped:
            return None
        return [Section.model_construct(heading_path=path, units=tuple(units)) for path, units in grouped]

    def first_turn_in(self, parent: Chunk) -> int:
        """The number of the first turn a text parent overlaps (0 without turns)."""
        if not self.turns or not isinstance(parent.provenance, TextProvenance):
            return 0
        return bisect.bisect_right(self.turn_max_ends, parent.provenance.start)

    def turns_in(self, start: int, end: int) -> list[Turn]:
        """Turns overlapping ``[start, end)``."""
        first = bisect.bisect_right(self.turn_max_ends, start)
        last = bisect.bisect_left(self.turn_starts, end)
        return [t for t in self.turns[first:last] if t.end > start]


def restrict_to_parent(document: Document, parent: Chunk, index: _UnitIndex | None = None) -> Document:
    """Return ``document`` cut down to what a parent chunk covers, for its child chunker.

    For a text parent the text stays whole (so offsets stay absolute) and sections, units, table
    rows and turn ends are clipped to the parent's span (a turn keeps its start; a clipped unit
    keeps the whole unit in ``clipped_from``). For a page parent the document becomes the
    parent's text, laid back onto the units it was packed from (each keeps its pages, kind and
    heading path); where that cannot be done, the parent's text is one unit on its first page.
    Pass an index built once per document when restricting it to many parents.
    """
    return _restrict(document, parent, index)[0]


def _restrict(document: Document, parent: Chunk, index: _UnitIndex | None) -> tuple[Document, bool]:
    """:func:`restrict_to_parent`, and whether a page parent's text was laid back onto units."""
    provenance = parent.provenance
    index = index or _UnitIndex(document)
    if isinstance(provenance, PageProvenance):
        sections = index.page_sections(parent.text, provenance.pages)
        laid_out = sections is not None
        if sections is None:
            unit = Unit(text=parent.text, page=provenance.pages[0])
            sections = [Section(heading_path=tuple(parent.heading_path), units=(unit,))]
        update = {"text": parent.text, "sections": tuple(sections), "turns": None}
        return document.model_copy(update=update), laid_out
    start, end = provenance.start, provenance.end
    grouped: dict[int, tuple[tuple[str, ...], list[Unit]]] = {}
    for position, path, unit in index.units_in(start, end):
        clipped = _clip_unit(unit, start, end)
        if clipped is not None:
            grouped.setdefault(position, (path, []))[1].append(clipped)
    sections = [
        Section.model_construct(heading_path=path, units=tuple(units))
        for _, (path, units) in sorted(grouped.items())
    ]
    if not sections:
        sections = [
            Section(
                heading_path=tuple(parent.heading_path),
                units=(Unit(text=document.text[start:end], start=start, end=end),),
            )
        ]
    turns = None
    if document.turns is not None:
        turns = tuple(
            # A turn keeps its own start (so a child knows it continues a turn the parent cut
            # into); its end is clipped to the parent.
            Turn.model_construct(speaker=t.speaker, start=t.start, end=min(t.end, end))
            for t in index.turns_in(start, end)
        )
    return document.model_copy(update={"sections": tuple(sections), "turns": turns}), False


class _RowOffsets:
    """Row start and end offsets of a table unit, computed once per unit object."""

    _cache: ClassVar[dict[int, tuple[Unit, list[int], list[int]]]] = {}

    @classmethod
    def of(cls, unit: Unit) -> tuple[list[int], list[int]]:
        cached = cls._cache.get(id(unit))
        if cached is None or cached[0] is not unit:  # the unit is held, so its id stays its own
            if len(cls._cache) > 64:
                cls._cache.clear()
            cached = cls._cache[id(unit)] = (unit, [r.start for r in unit.rows], [r.end for r in unit.rows])
        return cached[1], cached[2]


def _clip_unit(unit: Unit, start: int, end: int) -> Unit | None:
    """Clip a text unit to ``[start, end)``, trimmed, with its table rows clipped alike."""
    assert unit.start is not None and unit.end is not None
    if unit.start >= start and unit.end <= end:
        return unit
    clip_start, clip_end = max(unit.start, start), min(unit.end, end)
    text = unit.text[clip_start - unit.start : clip_end - unit.start]
    lead = len(text) - len(text.lstrip())
    text = text.strip()
    if not text:
        return None
    new_start = clip_start + lead
    shift, length = new_start - unit.start, len(text)
    # Rows cut by the span are kept, cut too: dropping them would drop their text. Only header
    # rows wholly inside are still repeated as a header.
    # Rows are in order: bisect to those the clip overlaps (a table can hold 100k rows and be
    # clipped once per parent).
    starts, ends = _RowOffsets.of(unit)
    first = bisect.bisect_right(ends, shift)
    last = bisect.bisect_left(starts, shift + length)
    rows = tuple(
        Span(start=max(r.start - shift, 0), end=min(r.end - shift, length)) for r in unit.rows[first:last]
    )
    kept_header = 0
    for r in unit.rows[: unit.header_rows]:
        if r.start < shift or r.end - shift > length:
            break
        kept_header += 1
    return unit.model_copy(
        update={
            "text": text,
            "start": new_start,
            "end": new_start + len(text),
            "rows": rows,
            "header_rows": kept_header,
            "clipped_from": unit.clipped_from or unit,
        }
    )
