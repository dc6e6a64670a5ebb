"""The section chunker's working parts: pieces, drafts of chunks, and how pieces join."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from chunking.chunk import ContentKind
from chunking.document import Document
from chunking.errors import ChunkingError

__all__ = [
    "BLANK_LINE",
    "Draft",
    "Piece",
    "check_positions",
    "common_prefix",
    "mark_fences",
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
        """How many of the last pieces are headings (they must travel with what follows)."""
        count = 0
        for piece in reversed(self.pieces):
            if piece.kind != "heading":
                break
            count += 1
        return count


def mark_fences(parts: list[Piece], text: str, base: int) -> None:
    """Note on each part of a split unit the fence lines it lacks: the opening line (with its
    language) when it starts inside a fenced code block, the closing fence when it ends inside
    one. ``text`` is the whole unit (the unclipped one, for a unit clipped to a parent) and
    ``base`` its offset in the document; parts without offsets are left alone."""
    if "```" not in text and "~~~" not in text:
        return
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
    for part in parts:
        if part.start is None or part.end is None:
            continue
        start, end = part.start - base, part.end - base
        before = bisect.bisect_right(ends, start) - 1  # the last line ended before the part
        opened = states[before] if before >= 0 else None
        after = states[min(bisect.bisect_left(ends, end), len(states) - 1)]  # the line it ends on
        part.fence_open = opened[0] if opened else ""
        part.fence_close = after[1] if after else ""


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
