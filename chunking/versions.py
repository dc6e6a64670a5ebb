"""Versions of everything that shapes a chunk, folded into every chunker fingerprint.

Bump a constant here when a change in this library would change the chunks it makes for the
same input and settings (their ids included): the fingerprints move, and the pipeline re-chunks
what they cover. A change every strategy shares (the id rule) bumps each strategy's own constant
(section: packer, recursive: splitter, turn-window: turn_window).
Library versions of the backends (chonkie, tiktoken, bpe-openai) are read at run time.
"""

from __future__ import annotations

from functools import cache
from importlib import metadata

__all__ = [
    "CONTEXTUAL_TEXT_VERSION",
    "SECTION_PACKER_VERSION",
    "SPLITTER_VERSION",
    "TABLE_RENDERING_VERSION",
    "TURN_WINDOW_VERSION",
    "package_version",
    "resolve",
]

# The recursive splitter (chonkie's RecursiveChunker plus our exact-slice repair).
# 2: pieces counted once, after trimming; 3: our cut levels (sentence before line, CJK stops);
# 4: the recursive chunker packs whole chat turns and splits only a turn over the budget;
# 5: no sentence end after an abbreviation or initial ("U.S.", "Mr."), stops written apart (" . ");
# 6: text chunk ids leave out the version and cover the text (Chunk.id_for); 7: and leave out
# the span, naming the text's occurrence instead (an insertion keeps the ids of what it moved);
# 8: a table of contents is cut between its entries, not at an entry's stop or before its page;
# 9: a text without boundaries is cut by a galloping search (linear; where a tokenizer's counts
# are not monotone in the length, a piece may end elsewhere than the plain binary search ended it)
SPLITTER_VERSION = "9"
# How the section chunker packs units, joins pieces and carries small chunks over.
# 2: packs on exact seam counts; 3: and units over the budget too; 4: headings travel with
# what follows them (never a chunk of headings while more follows); 5: the last part of a unit
# cut to the budget ends its chunk; 6: text chunk ids leave out the version and cover the text
# (Chunk.id_for); 7: a unit over the budget is cut at the sentence end in reach where the topic
# moves (packing.py, PackedSplitter.topic_cuts), not where the budget runs out; 8: a caption or
# a line ending in a colon right before a table leads the table's first chunk; 9: a caption is
# the word "Table" (or its like) and a number, not any line opening with the word; 10: a list
# unit over the budget is cut between its items before it is cut at a sentence end inside one;
# 11: text chunk ids leave out the span, naming the text's occurrence instead (Chunk.id_for);
# 12: a section's short intro before its own subsections leads them as its heading does
# (section.py, _short_intro), so a chunk no longer ends on a heading and its intro; 13: a short
# paragraph with words that point at what follows ("The following ... are required in /.")
# leads the table after it, as a line ending in a colon does; 14: a short line that only
# announces the next unit (an admonition's "Note" or "Tip", a line ending in a colon) leads it;
# 15: so does a MkDocs admonition's or content tab's opening line (`!!! note "Title"`); 16: a
# table of contents never shares a chunk with text across a heading between them, and a text
# without boundaries is cut by a galloping search (SPLITTER_VERSION 9)
SECTION_PACKER_VERSION = "16"
# How tables become chunks: row groups, repeated header rows.
# 2: a table cut to a parent still repeats its header; rows too wide for it go as column: value;
# 3: a row as cells leaves out what follows its last value (",,," or " |") but in a unit's last row;
# 4: empty rows (delimiters only) are part of the next row's piece, so a row group said to be an
# exact slice holds them (before, the first row group left them out of its text, not its span);
# 5: the last two row groups of a run are evened out when the last holds under a quarter of the
# budget
TABLE_RENDERING_VERSION = "5"
# What Chunk.contextual_text puts above a chunk's text (not part of any chunker's fingerprint:
# it names the vectors of the "contextual" text mode, so a change re-embeds, never re-chunks).
# 2: no title that is the first heading and a site's suffix
CONTEXTUAL_TEXT_VERSION = "2"
# How the turn-window chunker packs turns.
# 2: text chunk ids leave out the version and cover the text (Chunk.id_for); 3: and leave out
# the span, naming the text's occurrence instead
TURN_WINDOW_VERSION = "3"


@cache
def package_version(name: str) -> str:
    """Return the installed version of a distribution, or ``"absent"``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


def resolve(source: str) -> str:
    """Return a version by source: ``"package:<dist>"`` or the name of a constant here.

    Read at call time, so a bumped constant (or an upgraded package) moves every fingerprint
    computed after it.
    """
    if source.startswith("package:"):
        return package_version(source.removeprefix("package:"))
    return str(globals()[source])
