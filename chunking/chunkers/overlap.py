"""Overlap as context: the end of the chunk before, for a chunk's contextual text only.

Peers overlap chunks by repeating text in the stored chunks, so a chunk is no longer a slice
of its document and the same words are indexed twice. Here the stored text stays the exact
slice; the end of the previous chunk of the same section (at most ``overlap`` tokens, starting
at a sentence start where one fits, else at a word) goes into ``metadata["context_before"]``,
and :attr:`chunking.chunk.Chunk.contextual_text` puts it, marked with ``…``, before the text.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from chunking.chunk import Chunk
from chunking.chunkers.levels import PROSE_LEVELS

__all__ = ["add_context_before", "tail_within"]

_SENTENCE = next(level.pattern for level in PROSE_LEVELS if level.name == "sentence")
_WORD = next(level.pattern for level in PROSE_LEVELS if level.name == "word")


def tail_within(text: str, budget: int, count: Callable[[str], int]) -> str:
    """The longest end of ``text`` within ``budget`` tokens that starts a sentence, or else a
    word; "" when not even the last word fits."""
    if budget <= 0 or not text.strip():
        return ""
    for pattern in (_SENTENCE, _WORD):
        starts = [match.end() for match in pattern.finditer(text)]
        best = ""
        # Earliest start first: the first that fits is the longest tail.
        for start in starts:
            tail = text[start:].strip()
            if tail and count(tail) <= budget:
                best = tail
                break
        if best:
            return best
    return ""


def add_context_before(chunks: Sequence[Chunk], overlap: int, count: Callable[[str], int]) -> None:
    """Set ``metadata["context_before"]`` on each chunk after the first of its section (same
    heading path) to the end of the chunk before it, within ``overlap`` tokens."""
    for previous, chunk in itertools.pairwise(chunks):
        if previous.heading_path != chunk.heading_path or previous.content_kind != "text":
            continue
        tail = tail_within(previous.text, overlap, count)
        if tail:
            chunk.metadata["context_before"] = tail
