"""PDF page layout from lines: chrome, footnotes, paragraphs, contents pages and sections.

Pure functions over the lines PDFium gives for each page (text, font size, top edge), so the
rules can be tested without a PDF:

- **Running headers and footers**: a line among the first or last two of a page whose text, with
  digits and roman numerals masked, is found there on 3 or more pages (``Debian Reference 12 /
  261``, ``xcolor v2.14 (2022/06/12) 4``); a first line whose first two masked words open the
  first line of a quarter of the pages or more (``CHAPTER 1. DEFINITIONS ...``); a bare page
  number. A line set larger than the body text (a chapter heading) is never one.
- **Footnotes**: the trailing lines of a page set smaller than the body text, the first opening
  with a marker (``1The Linux Standard Base ...``), one unit per note.
- **Paragraphs**: a paragraph ends at a blank line, or after a line under 75% of the page's usual
  width that ends a sentence (``.``, ``。``, ``！`` ...) or is followed by a capital. A paragraph
  cut by a page break (no sentence end, the next page going on in lower case, or a CJK letter on
  either side of the break) is joined with its continuation and keeps both pages.
- **Contents and index pages**: units of a page whose lines are a third or more dot leaders
  (``1.2 Export . . . . 4``) or half or more index entries (``apt, 37``) get the kind ``toc``.
- **Sections** come from the outline (bookmarks): a unit belongs to the last entry at or above
  its first line; without an outline each page is a section with an empty heading path. An
  entry's place on its page also ends a paragraph, so a heading that follows a line with no
  sentence end (``# chvt 3``, a stray note mark) opens its own section instead of closing the
  one before it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from chunking.parsers.contents import contents_lines

__all__ = [
    "Block",
    "Line",
    "OutlineEntry",
    "join_across_pages",
    "mark_contents",
    "page_blocks",
    "running_lines",
    "section_paths",
]

_SENTENCE_END = re.compile(r"[.!?:;)\]\"'”’。！？；：」』）]$")
# A CJK letter or clause mark ending a page's last paragraph, and a CJK letter (or clause mark)
# opening the next page's first: a sentence cut by the page break (CJK has no lower case to say so).
_CJK_GOES_ON = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff、，]")
_SHORT = 0.75
# An admonition's label on a line of its own ("Note", "Tip"): it opens the note below it, so it
# starts a paragraph even after a full line (which goes on a paragraph when it ends a sentence).
_LABEL_LINE = re.compile(r"(?:Notes?|Tips?|Warnings?|Cautions?|Important|Hints?)\s*:?")
_DIGITS = re.compile(r"\d+")
_ROMAN = re.compile(r"(?<![A-Za-z])[ivxlcdmIVXLCDM]+(?![A-Za-z])")
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?[\divxlcdm]{1,6}(?:\s*(?:/|of)\s*\d{1,5})?$", re.IGNORECASE)
# A note's number, not a decimal's first digit ("2.68ex" on a note's second line is no note 2).
_FOOTNOTE_MARK = re.compile(r"^(\d{1,3}(?!\d|[.,]\d)|[*†‡§¶])")
_LETTER = re.compile(r"[^\W\d_]")
# How many pages a masked edge line must be on to be a running header or footer.
_RUNNING_MIN_PAGES = 3
_SMALL_FONT = 0.9
_LARGE_FONT = 1.2
# How far (PDF units) a line's top may sit above an outline entry's and still be at it.
_ANCHOR_SLACK = 2.0


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a page: its text, font size (points) and top edge (PDF units, y up)."""

    text: str
    size: float | None = None
    top: float | None = None


@dataclass(slots=True)
class Block:
    """A unit being built: text, kind, first and last page, and the top of its first line."""

    text: str
    page: int
    kind: str = "text"
    last_page: int | None = None
    top: float | None = None


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """An outline (bookmark) entry: its heading path, 1-based page and top (None: page top)."""

    path: tuple[str, ...]
    page: int
    top: float | None = None


@dataclass(slots=True)
class PageParts:
    """A page's blocks: the body in reading order, then its footnotes."""

    body: list[Block] = field(default_factory=list)
    footnotes: list[Block] = field(default_factory=list)


def _mask(text: str) -> str:
    return _ROMAN.sub("#", _DIGITS.sub("#", " ".join(text.split())))


def _edges(lines: Sequence[Line]) -> list[int]:
    """Indexes of the first two and last two non-empty lines."""
    filled = [i for i, line in enumerate(lines) if line.text.strip()]
    return sorted({*filled[:2], *filled[-2:]})


def body_size(pages: Sequence[Sequence[Line]]) -> float | None:
    """The font size most characters of the document are set in."""
    sizes: Counter[float] = Counter()
    for lines in pages:
        for line in lines:
            if line.size:
                sizes[round(line.size, 1)] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else None


def running_lines(pages: Sequence[Sequence[Line]], body: float | None) -> list[set[int]]:
    """Return, per page, the indexes of its lines that are running headers, footers or numbers."""
    seen: Counter[str] = Counter()
    openings: Counter[str] = Counter()
    for lines in pages:
        seen.update({_mask(lines[i].text) for i in _edges(lines)})
        filled = [line for line in lines if line.text.strip()]
        if filled:
            openings[" ".join(_mask(filled[0].text).split()[:2])] += 1
    common_opening = max(_RUNNING_MIN_PAGES, len(pages) // 4)
    result: list[set[int]] = []
    for lines in pages:
        dropped: set[int] = set()
        filled = [i for i, line in enumerate(lines) if line.text.strip()]
        for i in _edges(lines):
            line = lines[i]
            text = " ".join(line.text.split())
            if _PAGE_NUMBER.match(text):
                dropped.add(i)
                continue
            if body and line.size and line.size > body * _LARGE_FONT:
                continue  # a chapter heading, not a header
            masked = _mask(text)
            repeated = seen[masked] >= _RUNNING_MIN_PAGES and len(masked.strip("# /")) > 0
            words = masked.split()
            # The shared opening words of a header whose rest varies (a section title).
            opening = i == filled[0] and len(words) > 2 and openings[" ".join(words[:2])] >= common_opening
            if repeated or opening:
                dropped.add(i)
        result.append(dropped)
    return result


def _paragraphs(lines: Sequence[Line], anchors: Sequence[float] = ()) -> list[tuple[str, float | None]]:
    """Group a page's lines into paragraphs: ``(text, top of its first line)``.

    A paragraph also ends where contents lines start or stop, so an entry list never shares a
    unit with the prose around it, and where an outline entry of the page (its top among
    ``anchors``) lies between two lines, so the unit under the entry starts at it.
    """
    lengths = sorted(len(line.text) for line in lines if line.text.strip())
    if not lengths:
        return []
    usual = max(lengths[int(len(lengths) * 0.9) - (1 if len(lengths) > 1 else 0)], 40)
    paragraphs: list[tuple[str, float | None]] = []
    current: list[Line] = []

    def close() -> None:
        text = "\n".join(line.text for line in current).strip()
        if text:
            paragraphs.append((text, current[0].top))
        current.clear()

    contents = contents_lines([line.text for line in lines])
    for index, line in enumerate(lines):
        if not line.text.strip():
            close()
            continue
        if current and (
            contents[index] != contents[index - 1]
            or _anchored(current[-1], line, anchors)
            or _LABEL_LINE.fullmatch(line.text.strip()) is not None
        ):
            close()
        current.append(line)
        following = lines[index + 1].text.lstrip() if index + 1 < len(lines) else ""
        short = len(line.text.strip()) < usual * _SHORT
        # A short line ends a paragraph when it ends a sentence, or when the next line opens
        # one with a capital (a heading above its first paragraph).
        if short and (_SENTENCE_END.search(line.text) or following[:1].isupper()):
            close()
    close()
    return paragraphs


def _anchored(previous: Line, line: Line, anchors: Sequence[float]) -> bool:
    """Whether an outline entry lies between ``previous`` and ``line`` (y grows upwards): at
    or above ``line``, as :func:`section_paths` places a unit under it, and below ``previous``."""
    if previous.top is None or line.top is None:
        return False
    return any(line.top - _ANCHOR_SLACK <= anchor < previous.top - _ANCHOR_SLACK for anchor in anchors)


def _footnote_start(lines: Sequence[Line], body: float | None) -> int:
    """Index where the page's trailing footnotes start (``len(lines)`` when there are none)."""
    if not body:
        return len(lines)
    start = len(lines)
    while start > 0:
        line = lines[start - 1]
        if not line.text.strip():
            start -= 1
            continue
        if line.size is None or line.size >= body * _SMALL_FONT:
            break
        start -= 1
    while start < len(lines) and not lines[start].text.strip():
        start += 1
    filled = sum(1 for line in lines if line.text.strip())
    notes = lines[start:]
    if not notes or not _FOOTNOTE_MARK.match(notes[0].text.strip()) or len(notes) * 2 > filled:
        return len(lines)
    if not any(_LETTER.search(line.text) for line in notes):
        return len(lines)  # a code listing's numbered lines ("272 %"), set small: no notes
    return start


def _footnotes(lines: Sequence[Line], page: int) -> list[Block]:
    """Split trailing footnote lines into one block per note (a marker opens each)."""
    notes: list[list[str]] = []
    expected: int | None = None
    for line in lines:
        text = line.text.strip()
        if not text:
            continue
        mark = _FOOTNOTE_MARK.match(text)
        number = int(mark.group(1)) if mark and mark.group(1).isdigit() else None
        opens = mark is not None and (not notes or number is None or number == expected)
        if opens:
            expected = number + 1 if number is not None else None
            # "1The note" reads as "1 The note".
            notes.append(
                [
                    text
                    if text[mark.end() : mark.end() + 1].isspace()
                    else f"{mark.group(1)} {text[mark.end() :]}".rstrip()
                ]
            )
        elif notes:
            notes[-1].append(text)
    return [Block(text="\n".join(note), page=page, kind="footnote") for note in notes]


def page_blocks(
    lines: Sequence[Line], dropped: set[int], page: int, body: float | None, anchors: Sequence[float] = ()
) -> PageParts:
    """A page's body paragraphs and footnotes, with its running lines left out; ``anchors``
    are the tops of the page's outline entries (see :func:`_paragraphs`)."""
    kept = [line for i, line in enumerate(lines) if i not in dropped]
    split = _footnote_start(kept, body)
    parts = PageParts()
    parts.body = [Block(text=t, page=page, top=top) for t, top in _paragraphs(kept[:split], anchors)]
    parts.footnotes = _footnotes(kept[split:], page)
    return parts


def mark_contents(parts: PageParts) -> int:
    """Give the kind ``toc`` to contents and index units of a page; return how many.

    A page whose lines are a third or more contents lines is a contents or index page: its units
    are marked but for prose (three lines or more, none an entry) and, above the page's first
    entry, anything longer than a line (a title is a line; the end of a chapter's text or code
    above a "Change History" or "Index" is not). Elsewhere a unit is marked when half or more of
    its lines (and at least two) are.
    """
    lines = [line for block in parts.body for line in block.text.split("\n") if line.strip()]
    flags = contents_lines(lines)
    whole_page = sum(flags) >= 3 and sum(flags) * 3 >= len(lines)
    first_entry = flags.index(True) if whole_page else 0
    marked = 0
    position = 0
    for block in parts.body:
        count = sum(1 for line in block.text.split("\n") if line.strip())
        hits = sum(flags[position : position + count])
        position += count
        loose = count == 1 or (count == 2 and position > first_entry)
        if (whole_page and (hits or loose)) or (hits >= 2 and hits * 2 >= count):
            block.kind = "toc"
            marked += 1
    return marked


def join_across_pages(pages: list[PageParts]) -> int:
    """Join a paragraph cut by a page break with its continuation; return how many were joined.

    The last body paragraph of a page joins the first of the next page when it ends without a
    sentence end and the next goes on in lower case (or it ends in a hyphen or comma), or, in
    Chinese and Japanese, which have no case, when a CJK letter or clause mark is on both sides
    of the break.
    """
    joined = 0
    for index in range(len(pages) - 1):
        here, there = pages[index].body, pages[index + 1].body
        if not here or not there:
            continue
        last, first = here[-1], there[0]
        if last.kind != "text" or first.kind != "text" or first.page != (last.last_page or last.page) + 1:
            continue
        tail = last.text.rstrip()
        opening = first.text.lstrip()[:1]
        goes_on = (
            opening.islower()
            or tail.endswith(("-", ","))
            or bool(_CJK_GOES_ON.match(tail[-1:]) and _CJK_GOES_ON.match(opening))
        )
        if _SENTENCE_END.search(tail) or not goes_on:
            continue
        last.text = f"{tail}\n{first.text.lstrip()}"
        last.last_page = first.page
        there.pop(0)
        joined += 1
    return joined


def section_paths(blocks: Sequence[Block], outline: Sequence[OutlineEntry]) -> list[tuple[str, ...]]:
    """The heading path of each block: the last outline entry at or above its first line."""
    entries = sorted(
        enumerate(outline), key=lambda e: (e[1].page, -(e[1].top if e[1].top is not None else 1e9), e[0])
    )
    ordered = [entry for _, entry in entries]
    paths: list[tuple[str, ...]] = []
    cursor = -1
    for block in blocks:
        top = block.top if block.top is not None else float("-inf")
        while cursor + 1 < len(ordered):
            entry = ordered[cursor + 1]
            entry_top = entry.top if entry.top is not None else float("inf")
            if entry.page < block.page or (entry.page == block.page and entry_top >= top - _ANCHOR_SLACK):
                cursor += 1
            else:
                break
        paths.append(ordered[cursor].path if cursor >= 0 else ())
    return paths
