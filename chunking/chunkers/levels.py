"""Where a text over its budget may be cut, in order of preference, as data.

Each level is a pattern whose matches end at a cut point (the delimiter stays with the text
before it). A text is cut at the first level that cuts it at all; a part still over the budget
is cut at the next level. Prose prefers paragraphs, then sentences, then line ends, then clauses,
then words: a hard-wrapped paragraph ends its pieces at sentence ends, not at the line ends the
wrapping put anywhere. A list prefers its items to sentences: a release note's item
("Fix the parser. PR #12 by @ann.") is not cut after its first sentence while an item boundary
is in reach. CJK stops (``。！？``, and ``；：、，`` as clause marks) are cut points
that need no space after them, so Chinese and Japanese text is cut at its own punctuation before
it is cut between single characters. Code keeps to its own lines: blank lines, lines, words.
A part no level cuts is cut between characters (:func:`chunking.chunkers.packing.cut_exactly`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "ABBREVIATIONS",
    "CODE_LEVELS",
    "LIST_LEVELS",
    "PROSE_LEVELS",
    "SENTENCE",
    "TOC_LEVELS",
    "Level",
    "levels_for",
]


@dataclass(frozen=True, slots=True)
class Level:
    """One kind of cut point: a name (for reading) and a pattern whose match ends mark cuts."""

    name: str
    pattern: re.Pattern[str]


# Each pattern starts with a set of characters (or a choice of literal ones) that a match needs,
# so the regex engine scans for those in C and tries the rest only there; a pattern that opens
# with a lookbehind or an optional character is tried at every position (the sentence level
# cost 7x as much written that way). The matches are those of these readable forms:
#   paragraph: a line end followed by one or more blank lines ("\r?\n(?:[ \t\f\v]*\r?\n)+");
#   sentence:  a stop after a word character or a closing quote or bracket (so not a dot
#              leader ". . ."), with its closing quotes and brackets, before whitespace, where
#              a first "." does not end an abbreviation (letters between dots: "U.S.", "e.g.";
#              or one of ABBREVIATIONS: "Mr.", "Dr.", "vs."); or a stop written apart after a
#              word (" . ", tokenized text such as WikiText-103) that no other stop follows;
#              or a run of CJK stops anywhere, with its closers;
#   top item:  a line end before a list item's marker ("-", "*", "+", "•", "1." or "1)" and a
#              space or tab) at the line's start, so a nested list stays with its item
#              ("\n(?=(?:[-*+•]|[0-9]{1,9}[.)])[ \t])"); then
#   item:      the same at any indentation ("\n(?=[ \t]*(?:[-*+•]|[0-9]{1,9}[.)])[ \t])");
#   clause:    a comma, semicolon or colon before whitespace; a dash between whitespace; or a
#              run of CJK clause marks ("[,;:](?=\s)", "\s[-–—]+(?=\s)", "[；：、，]+").
# tests/chunking/test_levels.py holds these readable forms and proves the matches are the same.
_PARAGRAPH = Level("paragraph", re.compile(r"(?:\r\n|\n)(?:[ \t\f\v]*\r?\n)+"))
# Words that a "." after them does not end a sentence with (case-insensitive, whole words).
ABBREVIATIONS: tuple[str, ...] = (
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "fig", "figs", "approx", "dept",
    "cf", "al", "gen", "col", "lt", "sgt", "capt", "gov", "sen", "rep", "rev", "mt", "ft", "vol",
    "pp", "jan", "feb", "aug", "sept", "oct", "nov", "dec",
)  # fmt: skip
# After the first "." of a stop: not the last of letters between dots ("U.S.", "e.g.") nor an
# abbreviation's. (A single initial, "J. Smith", is cut: "Plan B." ends sentences as often.)
# One lookbehind per word length (a lookbehind's choices must be of one width): a few checks at
# each stop instead of one per word.
_NOT_ABBREVIATION = r"(?<!\.[^\W\d_]\.)" + "".join(
    rf"(?<!\b(?i:{'|'.join(w for w in ABBREVIATIONS if len(w) == n)})\.)"
    for n in sorted({len(w) for w in ABBREVIATIONS})
)
_CLOSERS = "[\"'”’»)\\]]*"
# A "." after a word: whitespace after the stop is checked before the abbreviations (most stops
# fail there, and the abbreviation lookbehinds are the costly part).
_STOP_AFTER_WORD = (
    r"(?<=(?:[^\W_]|[)\]\"'”’])\.)(?=[.!?…]*" + _CLOSERS + r"\s)" + _NOT_ABBREVIATION + r"[.!?…]*" + _CLOSERS
)
_SENTENCE = Level(
    "sentence",
    re.compile(
        r"[.!?…。！？]"
        r"(?:(?<=(?:[^\W_]|[)\]\"'”’])[!?…])[.!?…]*" + _CLOSERS + r"(?=\s)"
        r"|" + _STOP_AFTER_WORD + r"|(?<=[^\W_] [.!?…])[.!?…]*" + _CLOSERS + r"(?=\s)(?!\s+[.…])"
        r"|(?<=[。！？])[。！？]*[」』”’）】]*)"
    ),
)
_LINE = Level("line", re.compile(r"\n"))
_TOP_ITEM = Level("top item", re.compile(r"\n(?=(?:[-*+•]|[0-9]{1,9}[.)])[ \t])"))
_ITEM = Level("item", re.compile(r"\n(?=[ \t]*(?:[-*+•]|[0-9]{1,9}[.)])[ \t])"))
_CLAUSE = Level(
    "clause",
    re.compile(r"[,;:；：、，\s](?:(?<=[,;:])(?=\s)|(?<=\s)[-–—]+(?=\s)|(?<=[；：、，])[；：、，]*)"),
)
_WORD = Level("word", re.compile(r"\s+"))

PROSE_LEVELS: tuple[Level, ...] = (_PARAGRAPH, _SENTENCE, _LINE, _CLAUSE, _WORD)
# The level whose cuts may follow the topic (PackedSplitter.topic_cuts).
SENTENCE = _SENTENCE
LIST_LEVELS: tuple[Level, ...] = (_PARAGRAPH, _TOP_ITEM, _ITEM, *PROSE_LEVELS[1:])
CODE_LEVELS: tuple[Level, ...] = (_PARAGRAPH, _LINE, _WORD)
# A table of contents or index keeps each entry whole: a line end is a cut unless the next line
# is the entry's own dot leader or page number (a PDF's text puts them on lines of their own),
# and an entry's title is never cut at its sentence stop ("2.7.11 Who uploaded the package?").
_ENTRY = Level("entry", re.compile(r"\n(?![ \t]*(?:\.[ \t]*){2,}|[ \t]*(?:[0-9]+|[ivxlcdm]+)[ \t]*(?:\n|$))"))
TOC_LEVELS: tuple[Level, ...] = (_PARAGRAPH, _ENTRY, _WORD)


def levels_for(content_kind: str) -> tuple[Level, ...]:
    """The levels for a unit's content kind (a parser's unit kind, ``list`` included): code
    keeps to lines, a table of contents to its entries, a list to its items, everything else
    is prose."""
    if content_kind == "code":
        return CODE_LEVELS
    if content_kind == "toc":
        return TOC_LEVELS
    return LIST_LEVELS if content_kind == "list" else PROSE_LEVELS
