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
# "BOOK IV", "Act 2: The Heath") numbered in order are headings
PARSER_VERSION = "6"
LIBRARY = "chunking.document.paragraph_spans"

_WIDE_GAP = re.compile(r"\S {3,}\S")
_PAGE_MARK = re.compile(r"\[Page \d+\]$")
_DIGITS = re.compile(r"\d+")
_RECURRING = 3
# A "paragraph" this long with several lines is a file without blank lines (verse, one sentence
# per line): its lines become the units, so no unit is a whole book.
_LONG_PARAGRAPH = 8000
_LINE = re.compile(r"[^\n]+")


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

    levels = plain_heading_levels([unit.text for unit in units])
    sections = _sections(units, levels)
    metadata: dict[str, object] = {
        "encoding": encoding,
        "encoding_confidence": confidence,
        "parser": LIBRARY,
        "page_lines_dropped": dropped,
    }
    if len(pages) > 1:
        metadata["page_count"] = len(pages)
    return build_document(
        raw=data,
        kind="text",
        parser_version=PARSER_VERSION,
        source_uri=source_uri,
        text=text,
        sections=sections,
        title=_title(units, levels) or title_from_uri(source_uri),
        metadata=metadata,
    )
