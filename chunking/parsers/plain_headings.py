"""Headings written in plain text, and what a heading may be, shared by the text parsers.

A heading is one short line: :data:`MAX_HEADING_CHARS` at most (a 700-character paragraph
above a lone ``=`` line is no heading). WikiText headings (``== Gameplay ==``, and the
tokenized form ``= = Gameplay = =`` of WikiText-103) are recognized on a line of their own,
with as many ``=`` on either side. A document's title is a level-1 heading at its start: before
it, at most :data:`TITLE_AFTER_UNITS` blocks and :data:`TITLE_AFTER_CHARS` characters (badges,
a banner line), so a heading deep in a document never labels all that came before it; and a
document with :data:`COLLECTION_LEVEL_ONES` level-1 headings or more is a collection of
articles, whose first heading is no title of the others.

Plain text (:func:`plain_heading_levels`) has headings only where their form is unambiguous,
each a paragraph of its own: a WikiText line; a short line underlined by a run of one of
``= - ~ * # ^ +`` (levels in the order the underline characters first appear, as
reStructuredText does); and numbered lines (``2.1.  Conventions``) when every numbered line of
the document continues one outline (1, 1.1, 1.2, 2, ...), so a play's numbered speakers or a
list of numbered items opens no section. In such an outlined document, appendices continue it:
``Appendix A.  LDAP Result Codes`` (also ``Appendix A:`` and ``Appendix A -``) is a level-1
heading, and ``A.2.  Result Codes`` a heading one level deeper per number, under that appendix
only, the letters in order (A, B, C...). A book's divisions are headings too: a line of its
own naming one (``Chapter``, ``Book``, ``Part``, ``Volume``, ``Act``, ``Scene``, ``Canto``,
capitalized) and its number, arabic or roman, with a title after a stop or a dash if any
(``Chapter 3``, ``BOOK IV``, ``Act 2: The Heath``), when a document has two or more of that
division numbered from one, each the next or one again (scenes start again in each act). The
division met first is level 1, the next one met level 2, and so on. In a document laid out as
RFCs are, every paragraph of several lines indented, a short line of its own at the margin is a
level-1 heading (``Status of This Memo``, ``Abstract``, ``Full Copyright Statement``), when such
lines are few (:func:`_margin_headings`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from itertools import pairwise
from typing import NamedTuple

__all__ = [
    "COLLECTION_LEVEL_ONES",
    "MAX_HEADING_CHARS",
    "TITLE_AFTER_CHARS",
    "TITLE_AFTER_UNITS",
    "PlainHeading",
    "is_title_position",
    "line_per_paragraph",
    "plain_heading_levels",
    "wiki_heading",
]

MAX_HEADING_CHARS = 120
COLLECTION_LEVEL_ONES = 3
TITLE_AFTER_UNITS = 3
TITLE_AFTER_CHARS = 400
# A paragraph whose lines average this many characters is one paragraph a line (no one wraps
# prose this wide); shorter lines are hard-wrapped prose.
_LONG_LINE = 200

# `= Title =`, `== Section ==`, `= = Section = =`: the same run of `=` on both sides.
_WIKI = re.compile(r"[ \t]*(=(?:[ \t]?=)*)[ \t]+([^=\n]*?[^=\s])[ \t]+(=(?:[ \t]?=)*)[ \t]*")


def wiki_heading(line: str) -> tuple[int, str] | None:
    """The level and text of a WikiText heading line, or None."""
    match = _WIKI.fullmatch(line)
    if match is None:
        return None
    opening, text, closing = match.groups()
    level = opening.count("=")
    if level != closing.count("=") or level > 6 or len(text) > MAX_HEADING_CHARS:
        return None
    return level, " ".join(text.split())


def is_title_position(units_before: int, chars_before: int) -> bool:
    """True when a level-1 heading after this much is at the document's start (a title)."""
    return units_before <= TITLE_AFTER_UNITS and chars_before <= TITLE_AFTER_CHARS


def line_per_paragraph(lines: list[str]) -> bool:
    """True for two or more lines that average :data:`_LONG_LINE` characters or more: each
    line is a paragraph (WikiText dumps, exported notes), not hard-wrapped prose."""
    filled = [line for line in lines if line.strip()]
    return len(filled) > 1 and sum(len(line) for line in filled) >= _LONG_LINE * len(filled)


# A short line, then an underline of one repeated character.
_UNDERLINED = re.compile(r"[ \t]*(\S[^\n]*?)[ \t]*\n[ \t]*([=\-~*#^+])\2{2,}[ \t]*")
# `2.1.  Conventions`: dotted numbers, then a word that starts with a capital letter.
_NUMBERED = re.compile(r"[ \t]*(\d{1,3}(?:\.\d{1,3})*)\.?[ \t]+(\S[^\n]*?)[ \t]*")
# An outline needs this many numbered lines before its numbers say anything.
_OUTLINE_LINES = 3
# `Appendix A.  LDAP Result Codes`, `Appendix B: Changes`, `Appendix C - Examples`.
_APPENDIX = re.compile(r"[ \t]*Appendix[ \t]+([A-Z])(?:[.:]|[ \t]+[-\u2013\u2014])?[ \t]+(\S[^\n]*?)[ \t]*")
# `A.2.  Result Codes`, `C.1.10.  Section 4.1.11 (Referral)`: a section of an appendix.
_LETTERED = re.compile(r"[ \t]*([A-Z])((?:\.\d{1,3})+)\.?[ \t]+(\S[^\n]*?)[ \t]*")


def _underlined(paragraph: str) -> tuple[str, str] | None:
    match = _UNDERLINED.fullmatch(paragraph)
    if match is None:
        return None
    text, mark = match.group(1), match.group(2)
    underline = len(paragraph.rsplit("\n", 1)[1].strip())
    # The underline spans the line (about): a short rule under a long line is a separator.
    if len(text) > MAX_HEADING_CHARS or underline < len(text) // 2 or not any(c.isalnum() for c in text):
        return None
    return text, mark


def _numbered(paragraph: str) -> tuple[tuple[int, ...], str] | None:
    match = _NUMBERED.fullmatch(paragraph)
    if match is None:
        return None
    number, text = match.groups()
    if len(paragraph.strip()) > MAX_HEADING_CHARS or not text[0].isupper():
        return None
    return tuple(int(n) for n in number.split(".")), " ".join(paragraph.split())


def _continues(previous: tuple[int, ...] | None, number: tuple[int, ...]) -> bool:
    """True when ``number`` is the next step of an outline after ``previous``: its first
    child, or the next sibling of it or of one of its ancestors."""
    if previous is None:
        return number == (1,)
    if number == (*previous, 1):
        return True
    depth = len(number)
    return depth <= len(previous) and number == (*previous[: depth - 1], previous[depth - 1] + 1)


class PlainHeading(NamedTuple):
    """A heading found in plain text: its level (1-6), its text, and whether it is numbered."""

    level: int
    text: str
    numbered: bool = False


def plain_heading_levels(
    paragraphs: list[str], indents: list[int] | None = None
) -> list[PlainHeading | None]:
    """For each paragraph of a plain-text document, its heading, or None.

    A heading paragraph is a WikiText line, an underlined short line, a book's division
    (``Chapter 3``) or, where the document's numbered lines are an outline, a numbered line;
    see the module docstring. Numbered lines
    are an outline when there are a few of them, each continues the one before (from ``1``),
    and none directly follows another except as its first child (numbered paragraphs one after
    another are a list). ``indents`` (each paragraph's first column) lets a document with an
    indented body have margin headings.
    """
    found: list[PlainHeading | None] = []
    marks: list[str] = []
    # Each numbered paragraph: its index, number and text.
    numbered: list[tuple[int, tuple[int, ...], str]] = []
    for index, paragraph in enumerate(paragraphs):
        heading = None
        if "\n" not in paragraph.strip() and (wiki := wiki_heading(paragraph)) is not None:
            heading = PlainHeading(*wiki)
        if heading is None and (underlined := _underlined(paragraph)) is not None:
            text, mark = underlined
            if mark not in marks:
                marks.append(mark)
            heading = PlainHeading(marks.index(mark) + 1, text)
        elif heading is None and (number := _numbered(paragraph)) is not None:
            numbered.append((index, *number))
        found.append(heading)
    outline = len(numbered) >= _OUTLINE_LINES and all(
        _continues(numbered[k - 1][1] if k else None, number)
        and (k == 0 or numbered[k - 1][0] + 1 < index or number == (*numbered[k - 1][1], 1))
        for k, (index, number, _) in enumerate(numbered)
    )
    if outline:
        for index, number, text in numbered:
            found[index] = PlainHeading(min(len(number), 6), text, numbered=True)
        _appendices(paragraphs, found)
    _divisions(paragraphs, found)
    if indents is not None:
        _margin_headings(paragraphs, indents, found)
    return found


# A document's body is indented when this share of its paragraphs of several lines is (a play's
# speeches open at the margin), and there are at least this many of them; its margin headings
# are at most this share of its paragraphs.
_INDENTED_SHARE = 0.95
_INDENTED_MIN = 5
_MARGIN_SHARE = 1 / 4
_LETTER = re.compile(r"[^\W\d_]")


def _margin_headings(paragraphs: list[str], indents: list[int], found: list[PlainHeading | None]) -> None:
    """Mark as level-1 headings, in ``found``, the short lines at the margin of a document whose
    body is indented (an RFC's ``Status of This Memo``, ``Abstract``, ``Acknowledgement``): a
    line of its own, at column 0, of at most :data:`MAX_HEADING_CHARS`, with a letter, not
    ending as a sentence or clause does."""
    pairs = list(zip(paragraphs, indents, strict=True))
    blocks = [indent for paragraph, indent in pairs if "\n" in paragraph.strip()]
    if len(blocks) < _INDENTED_MIN or sum(indent >= 2 for indent in blocks) < _INDENTED_SHARE * len(blocks):
        return
    margin = [
        index
        for index, (paragraph, indent) in enumerate(pairs)
        if found[index] is None
        and indent == 0
        and "\n" not in (line := paragraph.strip())
        and 0 < len(line) <= MAX_HEADING_CHARS
        and _LETTER.search(line)
        and not line.endswith((".", ",", ";", ":"))
    ]
    if len(margin) > _MARGIN_SHARE * len(paragraphs):
        return
    for index in margin:
        found[index] = PlainHeading(1, " ".join(paragraphs[index].split()))


_DIVISION = re.compile(
    r"[ \t]*((?:[A-Z][a-z]+|[A-Z]+))[ \t]+([0-9]{1,3}|[IVXLC]{1,8}|[ivxlc]{1,8})\.?"
    r"(?:[ \t]*[.:\u2013\u2014-][ \t]*(\S[^\n]*?))?[ \t]*"
)
_DIVISIONS = frozenset({"chapter", "book", "part", "volume", "act", "scene", "canto"})
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}


def _number(written: str) -> int:
    """An arabic or roman numeral's value (roman: subtractive, ``iv`` 4)."""
    if written.isdigit():
        return int(written)
    values = [_ROMAN[c] for c in written.lower()]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


def _divisions(paragraphs: list[str], found: list[PlainHeading | None]) -> None:
    """Mark the division headings (see the module docstring) in ``found``."""
    by_kind: dict[str, list[tuple[int, int, str]]] = {}
    for index, paragraph in enumerate(paragraphs):
        line = paragraph.strip()
        if found[index] is not None or "\n" in line or len(line) > MAX_HEADING_CHARS:
            continue
        match = _DIVISION.fullmatch(line)
        if match is None or match.group(1).lower() not in _DIVISIONS:
            continue
        by_kind.setdefault(match.group(1).lower(), []).append(
            (index, _number(match.group(2)), " ".join(line.split()))
        )
    others = {
        kind: sorted(i for k, lines in by_kind.items() if k != kind for i, _, _ in lines) for kind in by_kind
    }

    def in_order(kind: str) -> bool:
        # From one, each the next, or one again after another division (a new act's scenes).
        lines = by_kind[kind]
        return lines[0][1] == 1 and all(
            number == previous + 1
            or (number == 1 and bisect_left(others[kind], after) < bisect_left(others[kind], at))
            for (after, previous, _), (at, number, _) in pairwise(lines)
        )

    kept = [kind for kind, lines in by_kind.items() if len(lines) >= 2 and in_order(kind)]
    kept.sort(key=lambda kind: by_kind[kind][0][0])  # the division met first is the outermost
    for level, kind in enumerate(kept, start=1):
        for index, _, text in by_kind[kind]:  # numbered: "Chapter 1" is never the book's title
            found[index] = PlainHeading(min(level, 6), text, numbered=True)


def _appendices(paragraphs: list[str], found: list[PlainHeading | None]) -> None:
    """Mark the appendix headings after an outline (see the module docstring) in ``found``."""
    letter = ""  # the current appendix's letter
    for index, paragraph in enumerate(paragraphs):
        line = paragraph.strip()
        if found[index] is not None or "\n" in line or len(line) > MAX_HEADING_CHARS:
            continue
        if (appendix := _APPENDIX.fullmatch(line)) is not None:
            # The first appendix is A; each next one the letter after the last.
            if (
                appendix.group(1) == (chr(ord(letter) + 1) if letter else "A")
                and appendix.group(2)[0].isupper()
            ):
                letter = appendix.group(1)
                found[index] = PlainHeading(1, " ".join(line.split()), numbered=True)
            continue
        lettered = _LETTERED.fullmatch(line)
        if lettered is not None and letter and lettered.group(1) == letter and lettered.group(3)[0].isupper():
            depth = lettered.group(2).count(".")
            found[index] = PlainHeading(min(depth + 1, 6), " ".join(line.split()), numbered=True)
