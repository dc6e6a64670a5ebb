"""Headings written in plain text, and what a heading may be, shared by the text parsers.

A heading is one short line: :data:`MAX_HEADING_CHARS` at most (a 700-character paragraph
above a lone ``=`` line is no heading). WikiText headings (``== Gameplay ==``, and the
tokenized form ``= = Gameplay = =`` of WikiText-103) are recognized on a line of their own,
with as many ``=`` on either side. A document's title is a level-1 heading at its start: before
it, at most :data:`TITLE_AFTER_UNITS` blocks and :data:`TITLE_AFTER_CHARS` characters (badges,
a banner line), so a heading deep in a document never labels all that came before it; and a
document with :data:`COLLECTION_LEVEL_ONES` level-1 headings or more is a collection of
articles, whose first heading is no title of the others.
"""

from __future__ import annotations

import re

__all__ = [
    "COLLECTION_LEVEL_ONES",
    "MAX_HEADING_CHARS",
    "TITLE_AFTER_CHARS",
    "TITLE_AFTER_UNITS",
    "is_title_position",
    "line_per_paragraph",
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
