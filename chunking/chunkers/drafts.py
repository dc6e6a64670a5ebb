"""The section chunker's working parts: pieces, drafts of chunks, how pieces join, and how a
draft becomes a chunk."""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass
from datetime import datetime

from chunking.chunk import Chunk, ChunkMetadata, ContentKind, PageProvenance, TextProvenance
from chunking.document import Document
from chunking.errors import ChunkingError

__all__ = [
    "BLANK_LINE",
    "Draft",
    "Piece",
    "check_positions",
    "common_prefix",
    "make_chunk",
    "mark_fences",
    "render",
    "separator",
]

BLANK_LINE = "\n\n"
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")


@dataclass(slots=True)
class Piece:
    """A packable piece: a whole unit or a part of one, with its place and size."""

    text: str
    start: int | None  # offset in Document.text; None for page pieces
    end: int | None
    pages: tuple[int, ...]  # the unit's pages; empty for text pieces
    kind: ContentKind
    path: tuple[str, ...]
    tokens: int
    # A part of a fenced code block: the fence lines it lacks, for its chunk's contextual text.
    fence_open: str = ""
    fence_close: str = ""
    # Its content words (chunking.chunkers.cohesion), read only where packing asks for them.
    words: frozenset[str] | None = None
    # A short text that announces what follows it ("Table 4.1. ..." before a table, "Note",
    # "The options are:"): like a heading, it goes with that rather than end the chunk before it.
    lead_in: bool = False
    # A section's short intro before its own subsections: it travels with them as the heading
    # does, but it is prose of its own (it counts towards its chunk's kind).
    intro: bool = False

    @property
    def leads(self) -> bool:
        """Whether this piece travels with what follows it (a heading, a lead-in or an intro)."""
        return self.lead_in or self.intro or self.kind == "heading"


@dataclass(slots=True)
class Draft:
    """A chunk being built: its pieces, size and the prefix of a repeated header.

    ``tokens`` is the exact count of the rendered text when ``exact``, else an estimate that
    the section chunker's ``_finish`` replaces with a count. ``own_joins`` is True when the
    packer joined every piece by the document's own whitespace (the text is then the slice from
    the first piece to the last), False when some join is a stand-in blank line, None when not
    known (drafts made outside the packing loop: their joins are looked at when rendered).
    ``rendered`` is the finished text of a draft that is not a join of its pieces (a table row
    rendered as ``column: value`` lines); its ``tokens`` are then exact.
    """

    pieces: list[Piece]
    tokens: int
    header: str = ""
    exact: bool = True
    own_joins: bool | None = None
    rendered: str | None = None

    def trailing_headings(self) -> int:
        """How many of the last pieces are headings or a table's lead-in (they must travel with
        what follows)."""
        count = 0
        for piece in reversed(self.pieces):
            if not piece.leads:
                break
            count += 1
        return count


def mark_fences(parts: list[Piece], text: str, base: int) -> None:
    """Note on each part of a split unit the fence lines it lacks: the opening line (with its
    language) when it starts inside a fenced code block, the closing fence when it ends inside
    one. ``text`` is the whole unit (the unclipped one, for a unit clipped to a parent) and
    ``base`` its offset in the document; parts without offsets are left alone."""
    lines = _fence_lines(text)
    if lines is None:
        return
    ends, states = lines
    for part in parts:
        if part.start is None or part.end is None:
            continue
        start, end = part.start - base, part.end - base
        before = bisect.bisect_right(ends, start) - 1  # the last line ended before the part
        opened = states[before] if before >= 0 else None
        after = states[min(bisect.bisect_left(ends, end), len(states) - 1)]  # the line it ends on
        part.fence_open = opened[0] if opened else ""
        part.fence_close = after[1] if after else ""


# A unit clipped to each of its parents in turn is scanned once, not once per parent (a long
# unit without fences too: looking for one is a scan of the whole unit); the last few are kept.
@functools.lru_cache(maxsize=4)
def _fence_lines(text: str) -> tuple[tuple[int, ...], tuple[tuple[str, str] | None, ...]] | None:
    """The offset after each line of ``text`` and the fenced block open after it; None when
    ``text`` has no fence at all."""
    if "```" not in text and "~~~" not in text:
        return None
    ends: list[int] = []  # the offset after each line (relative to ``text``)
    states: list[tuple[str, str] | None] = []  # the open block after each line
    inside: tuple[str, str] | None = None
    position = 0
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if match:
            stripped = line.strip()
            if inside is None:
                inside = (stripped, match.group(1))
            elif stripped.startswith(inside[1]) and set(stripped) == {inside[1][0]}:
                inside = None
        position += len(line) + 1
        ends.append(position)
        states.append(inside)
    return tuple(ends), tuple(states)


def check_positions(document: Document) -> bool:
    """Return True for a paged document; raise when text and page units are mixed."""
    # Unit.has_offsets, written out: a property call per unit costs more than the test.
    offsets = {
        unit.start is not None and unit.end is not None
        for section in document.sections
        for unit in section.units
    }
    without = False in offsets
    if without and True in offsets:
        raise ChunkingError(
            f"{document.source_uri}: the document mixes units with text offsets and units with "
            "pages only; a parser must give one kind of position for all units"
        )
    return without


def separator(text: str, left: Piece, right: Piece) -> str:
    """The text that joins two pieces: the document's own whitespace between them, else a blank
    line (page pieces, or text a parser left out between them).

    The stand-in is :data:`BLANK_LINE` itself, never a copy: ``separator is BLANK_LINE``
    tells the packer the join is not the document's own (a gap of two newlines sliced from the
    text is another object).
    """
    if left.end is None or right.start is None or right.start < left.end:
        return BLANK_LINE
    gap = text[left.end : right.start]
    return gap if not gap or gap.isspace() else BLANK_LINE


def common_prefix(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The longest heading path every one of ``paths`` starts with."""
    first = paths[0]
    length = len(first)
    for path in paths[1:]:
        if path is first:  # pieces of one section share its path
            continue
        length = min(length, len(path))
        for i in range(length):
            if path[i] != first[i]:
                length = i
                break
    return first[:length]


def render(document: Document, draft: Draft, paged: bool) -> tuple[str, bool]:
    """Return the text of ``draft`` as a chunk of ``document`` and whether it is the exact slice
    at its offsets (``paged``: the document's units have pages, not offsets).

    A repeated header goes before the first table piece (after any headings or lead-in leading
    it)."""
    if draft.rendered is not None:
        return draft.rendered, False
    pieces = draft.pieces
    if not draft.header:
        if len(pieces) == 1:  # what the joins below give for one piece
            return pieces[0].text, not paged
        if draft.own_joins and not paged:
            # Pieces joined by the whitespace between them are the slice from first to last.
            return document.text[pieces[0].start : pieces[-1].end], True
    parts: list[str] = []
    header = draft.header
    exact = not header and not paged
    for index, piece in enumerate(pieces):
        if index:
            left = pieces[index - 1]
            gap = separator(document.text, left, piece)
            if paged or document.text[left.end : piece.start] != gap:
                exact = False
            parts.append(gap)
        if header and not piece.leads:
            parts.append(header + "\n")
            header = ""
        parts.append(piece.text)
    return "".join(parts), exact


def make_chunk(
    document: Document,
    draft: Draft,
    paged: bool,
    rendered: tuple[str, bool],
    tokens: int,
    now: datetime,
) -> Chunk:
    """The chunk of ``draft``: ``rendered`` is what :func:`render` gave, ``tokens`` its exact
    count, ``now`` its ``created_at``; its kind and heading path come from its pieces. Made
    without validation (every value is ours and well-typed); ``BaseChunker.chunk`` places it."""
    text, exact = rendered
    pieces = draft.pieces
    first, last = pieces[0], pieces[-1]
    single = len(pieces) == 1  # most chunks: what the set and the prefix below give for one
    if not paged:
        provenance: TextProvenance | PageProvenance = TextProvenance.at(first.start, last.end)
    elif single:  # a unit's pages run from its first to its last: sorted, each once
        provenance = PageProvenance.of(first.pages or (1,))
    else:
        provenance = PageProvenance.of(tuple(sorted({n for p in pieces for n in p.pages or (1,)})))
    if single:
        kind, path = first.kind, first.path
    else:
        # Headings (and a lead-in) leading a table or code do not make it text.
        kinds = {p.kind for p in pieces if not (p.lead_in or p.kind == "heading")} or {p.kind for p in pieces}
        kind = kinds.pop() if len(kinds) == 1 else "text"
        path = common_prefix([p.path for p in pieces])
    metadata: ChunkMetadata = {"token_count": tokens, "exact_slice": exact}
    if draft.header:
        metadata["repeated_header"] = draft.header
    if draft.rendered is not None:
        metadata["rendering"] = "columns"
    opening, closing = first.fence_open, last.fence_close
    if opening or closing:
        if opening:
            metadata["fence_open"] = opening
        if closing:
            metadata["fence_close"] = closing
        # A piece of a split code block, maybe with prose after it: the contextual text
        # re-fences the piece, so the chunk is code to an embedder (prose after the closing
        # fence stays outside the block).
        kind = "code"
    # Every field is ours and well-typed: no validation (a chunk's largest cost at
    # character budgets).
    return Chunk.made(
        document_id=document.id,
        text=text,
        provenance=provenance,
        heading_path=list(path),
        content_kind=kind,
        metadata=metadata,
        created_at=now,
    )
