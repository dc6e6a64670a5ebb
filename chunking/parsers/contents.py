"""Contents and index lines: which lines of a page or a text are entries of a table of
contents or an index (``2.3 Data . . . . 11``, ``apt, 37``), whatever the format."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["CONTENTS_TITLE", "contents_lines", "is_contents"]

_PAGES = r"[\dIVXLCDMivxlcdm]{1,6}(?:\s*[–-]\s*\d{1,4})?(?:\s*,\s*\d{1,4}(?:\s*[–-]\s*\d{1,4})?)*,?"
# Contents and index lines: a dot leader before page numbers ("2.3 Data . . . . 11"), an index
# entry ("apt, 37", "\\caption 157, 159"), a run-on list of pages ("218, 224,"), a letter heading.
# Three dots or more, or two written apart after a space (a title ending in "?" or "." leaves
# room for only two: "... on top of it? . . 59").
_DOT_LEADER = re.compile(rf"(?:(?:\.\s?){{3,}}|\s\.\s\.)\s*{_PAGES}\s*$")
_INDEX_ENTRY = re.compile(
    rf"^\S.{{0,60}}?,\s*{_PAGES}\s*$"  # apt, 37
    rf"|^,\s*{_PAGES}\s*$"  # , 37 (a subentry)
    r"|^\S.{0,60}?\s\d{1,4}(?:\s*[–-]\s*\d{1,4})?(?:\s*,\s*\d{1,4}(?:\s*[–-]\s*\d{1,4})?)+,?\s*$"  # x 17, 216
    r"|^\d{1,4}(?:\s*,\s*\d{1,4})+,?\s*$"  # 218, 224, 225,
    r"|^[A-Z]$"  # a letter heading
)
# A numbered heading with its page ("11 Implementation 12"): a contents line next to others.
_NUMBERED_ENTRY = re.compile(r"^(?:\d+(?:\.\d+)*|[A-Z])\.?\s*\S.{0,120}\s\d{1,4}$")
# The parts of a numbered contents entry without leaders: its title and its page number.
_ENTRY_PARTS = re.compile(r"^(?:\d+(?:\.\d+)*|[A-Z])\.?\s*(\S.{0,120}?)\s+(\d{1,4})$")
# The title of a contents page, and how many entries without leaders make a contents list below
# one (fewer than without one: a numbered list whose items end in figures must be longer).
CONTENTS_TITLE = re.compile(
    r"^(?:(?:table\s+of\s+)?contents|inhalt(?:sverzeichnis)?|table\s+des\s+mati[eè]res|sommaire"
    r"|[ií]ndice|содержание|оглавление|目录|目錄|目次)$",
    re.IGNORECASE,
)
_TITLED_RUN = 3
_UNTITLED_RUN = 5
# What a contents or index line can end in: a page number, arabic or roman, or a comma.
_ENTRY_ENDS = frozenset("0123456789,IVXLCDMivxlcdm")


def contents_lines(lines: Sequence[str]) -> list[bool]:
    """Which lines are contents or index lines: a dot leader or index entry, a numbered
    heading with a page number next to one of those, or a run of numbered headings with page
    numbers that never go back (:func:`_numbered_runs`), and the title above such a run."""
    strong = [bool(_DOT_LEADER.search(t) or _INDEX_ENTRY.match(t.strip())) for t in lines]
    weak = [bool(_NUMBERED_ENTRY.match(t.strip())) for t in lines]
    flags = list(strong)
    for i in range(len(lines)):
        if weak[i] and not flags[i]:
            flags[i] = (i > 0 and flags[i - 1]) or (i + 1 < len(lines) and strong[i + 1])
    for first, last in _numbered_runs(lines, weak):
        above = first - 1
        while above >= 0 and not lines[above].strip():  # the title's line, blank lines between
            above -= 1
        titled = above >= 0 and bool(CONTENTS_TITLE.match(lines[above].strip()))
        if last - first >= (_TITLED_RUN if titled else _UNTITLED_RUN) - 1:
            flags[first : last + 1] = [True] * (last + 1 - first)
            if titled:
                flags[above] = True
    return flags


def _numbered_runs(lines: Sequence[str], weak: Sequence[bool]) -> list[tuple[int, int]]:
    """Runs (first and last index) of consecutive contents entries without leaders: a numbered
    heading whose title is mostly letters, then a page number, the page numbers never going
    back (``1 Introduction 1``, ``1.1 A note on terminology 3``, ``2 The layout of tables 3``).
    A table's numbered rows (``1.1 P 23646 1 45190 1``) have titles of figures, not words."""
    runs: list[tuple[int, int]] = []
    start = previous = -1
    for i, text in enumerate(lines):
        match = _ENTRY_PARTS.match(text.strip()) if weak[i] else None
        page = -1
        if match:
            title = match.group(1)
            letters = sum(ch.isalpha() for ch in title)
            if letters * 2 >= len(title.replace(" ", "")) and re.search(r"[^\W\d_]{2}", title):
                page = int(match.group(2))
        if page >= 0 and start >= 0 and page >= previous:
            previous = page
            continue
        if start >= 0:
            runs.append((start, i - 1))
        start, previous = (i, page) if page >= 0 else (-1, -1)
    if start >= 0:
        runs.append((start, len(lines) - 1))
    return runs


def is_contents(text: str) -> bool:
    """Whether a paragraph is contents or index entries: half or more of its lines, and at
    least two, are (the rule a PDF page's units follow off a contents page)."""
    if text.count("\n") < 1:
        return False  # one line: never two entries
    lines = [line for line in text.split("\n") if line.strip()]
    # A contents line ends in a page number (or a comma before more), or is a letter alone or a
    # contents title: a paragraph with too few such lines is out before any pattern runs.
    could = sum(
        1
        for line in lines
        if line.rstrip()[-1] in _ENTRY_ENDS or line.strip().isupper() or CONTENTS_TITLE.match(line.strip())
    )
    if could < 2 or could * 2 < len(lines):
        return False
    hits = sum(contents_lines(lines))
    return hits >= 2 and hits * 2 >= len(lines)
