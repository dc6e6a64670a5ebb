"""Plain text: paragraphs of the original text, with page furniture kept out of the units.

``Document.text`` is the decoded source with line endings normalized to LF; units are its
paragraphs (blank-line separated, see ``chunking.document.paragraph_spans``) with offsets into
it. Unlike the other text formats, the gaps between units are the author's whitespace, not
always exactly one blank line.

Pages: the text is split at form feeds first, so no unit ever contains ``\\f``. Running page
headers and footers (RFC style: ``Author   Standards Track   [Page 3]`` and
``RFC 4511   LDAPv3   June 2006``) are dropped from the units (they stay in the text): a
one-line paragraph with a wide internal gap that ends in ``[Page N]`` or recurs at least three
times once digits are ignored. A paragraph over 8,000 characters spanning several lines (a file
without blank lines) is split into one unit per line.

Project Gutenberg's wrapping (its header, licence and "small print" around the book, which a
search would otherwise return for questions about the book) is kept out of the units too: what
comes before the book's start marker (``*** START OF THE PROJECT GUTENBERG EBOOK ...``, or the
end of the old header's ``*END*THE SMALL PRINT!`` line) and from its end marker on (``*** END OF
THE PROJECT GUTENBERG EBOOK ...``, ``End of the Project Gutenberg Etext of ...``).

Contents: a paragraph whose lines are mostly contents or index entries (``4.2. Bind Operation
......16``; :func:`chunking.parsers.contents.is_contents`) is a ``toc`` unit, and so is a
"Table of Contents" line right above one: kept, but out of search, as a PDF's contents pages.

Headings: a paragraph that is a heading in an unambiguous plain-text form (a WikiText line, an
underlined line, a numbered line of an outline; :func:`chunking.parsers.plain_headings.
plain_heading_levels`) is a ``heading`` unit that opens a section, so what follows it carries
its heading path; what comes before the first heading has none. A level-1 heading (underlined
or WikiText, not numbered) at the document's start is its title.
"""

from __future__ import annotations

import re
from collections import Counter

from chunking.document import Document, Section, Unit, paragraph_spans
from chunking.parsers.base import build_document, no_text, title_from_uri
from chunking.parsers.contents import CONTENTS_TITLE, is_contents
from chunking.parsers.encoding import decode, normalize_newlines
from chunking.parsers.limits import ParseLimits
from chunking.parsers.plain_headings import (
    COLLECTION_LEVEL_ONES,
    PlainHeading,
    is_title_position,
    plain_heading_levels,
)

__all__ = ["PARSER_VERSION", "parse"]

# 3: short cp1252 text with curly quotes is read as cp1252 (encoding.py); 4: plain-text headings;
# 5: appendices continue a numbered outline (plain_headings.py); 6: divisions ("Chapter 3",
# "BOOK IV", "Act 2: The Heath") numbered in order are headings; 7: Project Gutenberg's header,
# licence and small print are no units, its header names the title; a division is no title; 8:
# contents paragraphs (an RFC's "Table of Contents") are toc units, and a document with an
# indented body has headings at the margin ("Status of This Memo")
PARSER_VERSION = "8"
LIBRARY = "chunking.document.paragraph_spans"

_WIDE_GAP = re.compile(r"\S {3,}\S")
_PAGE_MARK = re.compile(r"\[Page \d+\]$")
_DIGITS = re.compile(r"\d+")
_RECURRING = 3
# A "paragraph" this long with several lines is a file without blank lines (verse, one sentence
# per line): its lines become the units, so no unit is a whole book.
_LONG_PARAGRAPH = 8000
_LINE = re.compile(r"[^\n]+")


# Project Gutenberg's wrapping: the name near the top, the book's start (the line after) and end
# (the line itself on) in the releases' two styles.
_GUTENBERG = re.compile(r"project gutenberg", re.IGNORECASE)
_GUTENBERG_HEAD = 3000
_BOOK_START = re.compile(
    r"^\s*\*{3}\s*START OF (?:THE|THIS) PROJECT GUTENBERG E(?:BOOK|TEXT).*$|^\*END\*THE SMALL PRINT!.*$",
    re.IGNORECASE | re.MULTILINE,
)
_BOOK_END = re.compile(
    r"^\s*\*{3}\s*END OF (?:THE|THIS) PROJECT GUTENBERG E(?:BOOK|TEXT)"
    r"|^\s*End of (?:the |this )?Project Gutenberg",
    re.IGNORECASE | re.MULTILINE,
)


# The book's title: "Title: Persuasion" in a newer release's header, else "The Project
# Gutenberg Etext of Persuasion by Jane Austen" (older releases repeat it after their small print).
_TITLE_LINE = re.compile(r"^Title:[ \t]*(\S[^\n]*)$", re.IGNORECASE | re.MULTILINE)
_ETEXT_OF = re.compile(r"Project Gutenberg'?s? E(?:text|book) of ([^*\n]*[^*\s])", re.IGNORECASE)


def _gutenberg_title(text: str, book_start: int) -> str | None:
    """The title a Project Gutenberg file gives its book, else None: its header's ``Title:``
    line, else the book's first lines' "Etext of ...", else the header's."""
    found = (
        _TITLE_LINE.search(text, 0, book_start)
        or _ETEXT_OF.search(text, book_start, book_start + _GUTENBERG_HEAD)
        or _ETEXT_OF.search(text, 0, book_start)
    )
    return None if found is None else found.group(1).strip()


def _gutenberg_book(text: str) -> tuple[int, int] | None:
    """The span of the book inside a Project Gutenberg file, without the header, licence and
    small print around it; None for any other text, or a file whose markers are not found."""
    if not _GUTENBERG.search(text, 0, _GUTENBERG_HEAD):
        return None
    start_marker = _BOOK_START.search(text)
    start = start_marker.end() if start_marker else 0
    end_marker = _BOOK_END.search(text, start)
    end = end_marker.start() if end_marker else len(text)
    if (start, end) == (0, len(text)) or not text[start:end].strip():
        return None
    return start, end


def _furniture_key(line: str) -> str | None:
    """Return a digit-blind key for a line that looks like a page header or footer, else None."""
    if "\n" in line or not _WIDE_GAP.search(line):
        return None
    return " ".join(_DIGITS.sub("#", line).split())


def _line_units(paragraph: str, base: int) -> list[Unit]:
    units: list[Unit] = []
    for match in _LINE.finditer(paragraph):
        line = match.group()
        stripped = line.strip()
        if stripped:
            start = base + match.start() + (len(line) - len(line.lstrip()))
            units.append(Unit(text=stripped, start=start, end=start + len(stripped)))
    return units


def _mark_contents(units: list[Unit]) -> list[Unit]:
    """``units`` with contents paragraphs, and a contents title right above one, as ``toc``."""
    marked = list(units)
    for index, unit in enumerate(units):
        if not is_contents(unit.text):
            continue
        marked[index] = unit.model_copy(update={"content_kind": "toc"})
        above = index - 1
        if above >= 0 and CONTENTS_TITLE.match(units[above].text.strip()):
            marked[above] = units[above].model_copy(update={"content_kind": "toc"})
    return marked


def _title(units: list[Unit], levels: list[PlainHeading | None]) -> str | None:
    """The document's title: a level-1 heading, not a numbered one, at its start (see
    :func:`chunking.parsers.plain_headings.is_title_position`), unless the document has so
    many level-1 headings that it is a collection of articles."""
    if sum(1 for heading in levels if heading is not None and heading.level == 1) >= COLLECTION_LEVEL_ONES:
        return None
    chars = 0
    for index, (unit, heading) in enumerate(zip(units, levels, strict=True)):
        if heading is not None:
            first = heading.level == 1 and not heading.numbered and is_title_position(index, chars)
            return heading.text if first else None
        chars += len(unit.text)
    return None


def _sections(units: list[Unit], levels: list[PlainHeading | None]) -> tuple[Section, ...]:
    """Group units into sections under the plain-text headings among them."""
    if not any(levels):
        return (Section(units=tuple(units)),)
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    current: list[Unit] = []
    for unit, heading in zip(units, levels, strict=True):
        if heading is None:
            current.append(unit)
            continue
        if current:
            sections.append(Section(heading_path=tuple(t for _, t in stack), units=tuple(current)))
        level, text, _ = heading
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
        current = [unit.model_copy(update={"content_kind": "heading"})]
    sections.append(Section(heading_path=tuple(t for _, t in stack), units=tuple(current)))
    return tuple(sections)


def parse(data: bytes, source_uri: str, limits: ParseLimits) -> Document:
    """Parse plain-text bytes into a one-section document of paragraphs.

    Raises:
        ParseError: The bytes are empty, binary, undecodable or blank.
    """
    del limits  # max_bytes is checked by the caller; paragraph splitting is linear.
    decoded, encoding, confidence = decode(data, source_uri)
    text = normalize_newlines(decoded)
    if text.startswith("\ufeff"):
        text = text[1:]  # A second BOM left after decoding is an encoding artefact, not text.

    spans: list[tuple[int, int]] = []
    position = 0
    pages = text.split("\f")
    for page in pages:
        spans.extend(paragraph_spans(page, base=position))
        position += len(page) + 1

    book = _gutenberg_book(text)
    if book is not None:
        inside = [(start, end) for start, end in spans if start >= book[0] and end <= book[1]]
        wrapping, spans = len(spans) - len(inside), inside
    keys = [_furniture_key(text[start:end]) for start, end in spans]
    counts = Counter(key for key in keys if key is not None)
    units: list[Unit] = []
    dropped = 0
    for (start, end), key in zip(spans, keys, strict=True):
        paragraph = text[start:end]
        if key is not None and (_PAGE_MARK.search(paragraph) or counts[key] >= _RECURRING):
            dropped += 1
            continue
        if len(paragraph) > _LONG_PARAGRAPH and "\n" in paragraph:
            units.extend(_line_units(paragraph, start))
        else:
            units.append(Unit(text=paragraph, start=start, end=end))
    if not units and dropped:
        hint = f"every paragraph ({dropped}) is a page header, footer or page mark, which are left out"
        raise no_text(source_uri, "text", hint)

    units = _mark_contents(units)
    levels = plain_heading_levels(
        [unit.text if unit.content_kind == "text" else "" for unit in units],
        [unit.start - text.rfind("\n", 0, unit.start) - 1 for unit in units],
    )
    sections = _sections(units, levels)
    metadata: dict[str, object] = {
        "encoding": encoding,
        "encoding_confidence": confidence,
        "parser": LIBRARY,
        "page_lines_dropped": dropped,
    }
    if book is not None:
        metadata["gutenberg_paragraphs_dropped"] = wrapping
    if len(pages) > 1:
        metadata["page_count"] = len(pages)
    return build_document(
        raw=data,
        kind="text",
        parser_version=PARSER_VERSION,
        source_uri=source_uri,
        text=text,
        sections=sections,
        title=_title(units, levels)
        or (_gutenberg_title(text, book[0]) if book is not None else None)
        or title_from_uri(source_uri),
        metadata=metadata,
    )
