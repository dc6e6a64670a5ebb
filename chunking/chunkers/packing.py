"""Packed splitting: cut a text over its budget at the levels of :mod:`chunking.chunkers.levels`
and pack the splits in order into trimmed pieces as full as they go, every size exact.

:class:`PackedSplitter` is what :meth:`chunking.chunkers.recursive.RecursiveChunker.split_packed`
runs; it is a plain object holding the tokenizer, so the section chunker, which splits every unit
over its budget, reads it once per document instead of reading a pydantic private attribute on
every split.

Every split is trimmed and counted once, and a run of splits is sized by adding what each join
costs, counted at its seam (:meth:`chunking.tokenizers.Tokenizer.seam`), so a piece is never
counted whole. With the ``character`` tokenizer a text's count is its length, so a run of splits
fits while it spans at most ``size`` characters: the cut points are found once per level and the
end of each piece by a binary search over them, trimming only the splits at a piece's ends, not
every split in between (the same pieces as trimming and adding every split; a hypothesis test in
``tests/chunking/test_packing.py`` compares the two on random texts).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from chunking.chunkers.cohesion import content_words, similarity
from chunking.chunkers.levels import PROSE_LEVELS, SENTENCE, Level
from chunking.tokenizers import Tokenizer

__all__ = ["TOPIC_CONTEXT", "TOPIC_FLOOR", "PackedSplitter", "TextPiece", "cut_exactly", "splits", "trim"]

# With topic cuts, a piece cut at sentence ends may end at any sentence end that leaves it at
# least this share of the budget (the section chunker's default min_size share) ...
TOPIC_FLOOR = 4
# ... where the content words of this many sentences on either side share least.
TOPIC_CONTEXT = 2
# A "sentence" that is only a list marker ("3.", "b)", "iv.") opens the next item: no piece is
# cut after it by choice.
_MARKER = re.compile(r"(?:\d{1,3}|[A-Za-z]|[ivxlc]{1,5})[.)]")


@dataclass(frozen=True, slots=True)
class TextPiece:
    """A slice ``text[start:end]`` of a split text, with its token count."""

    start: int
    end: int
    text: str
    token_count: int


class PackedSplitter:
    """Split texts over a budget into packed, trimmed, exactly counted pieces.

    Attributes:
        tokenizer: The tokenizer that counts (the owning chunker's).
        chunk_size: The budget when a call gives none.
        topic_cuts: Cut a text at sentence ends where the topic moves, not only where the
            budget runs out (:meth:`_packed_at_topics`).
    """

    __slots__ = ("_characters", "chunk_size", "tokenizer", "topic_cuts")

    def __init__(self, tokenizer: Tokenizer, chunk_size: int, *, topic_cuts: bool = False) -> None:
        self.tokenizer = tokenizer
        self.chunk_size = chunk_size
        self.topic_cuts = topic_cuts
        self._characters = tokenizer.name == "character"

    def split(
        self,
        text: str,
        tokens: int | None = None,
        *,
        levels: tuple[Level, ...] = PROSE_LEVELS,
        size: int | None = None,
    ) -> list[TextPiece]:
        """The pieces of ``text``: see :meth:`RecursiveChunker.split_packed
        <chunking.chunkers.recursive.RecursiveChunker.split_packed>`."""
        size = self.chunk_size if size is None else size
        span = trim(text, 0, len(text))
        if span is None:
            return []
        start, end = span
        if tokens is None or (start, end) != (0, len(text)):
            tokens = self.tokenizer.count_capped([text[start:end]], size)[0]
        if tokens <= size:
            return [TextPiece(start, end, text[start:end], tokens)]
        return self._packed(text, start, end, levels, size)

    def _packed(
        self, text: str, start: int, end: int, levels: tuple[Level, ...], size: int
    ) -> list[TextPiece]:
        """:meth:`split` of ``text[start:end]``, trimmed and over ``size``, cut at the first of
        ``levels`` that cuts it, or finer."""
        if not levels:
            return cut_exactly(text, start, end, self.tokenizer.count, size, trim_pieces=True)
        if self.topic_cuts and levels[0] is SENTENCE:
            return self._packed_at_topics(text, start, end, levels, size)
        if self._characters:
            return self._packed_characters(text, start, end, levels, size)
        spans = splits(text, start, end, levels[0])
        if len(spans) <= 1:  # nothing to cut at this level
            return self._packed(text, *(spans[0] if spans else (start, end)), levels[1:], size)
        tokenizer = self.tokenizer
        counts = tokenizer.count_capped([text[a:b] for a, b in spans], size)
        seam = tokenizer.seam_function()
        pieces: list[TextPiece] = []
        # The piece being filled: text[first:last_end], its last split starting at last_start.
        first = last_start = last_end = tokens_so_far = splits_in = 0

        def close() -> None:
            if splits_in:
                pieces.append(TextPiece(first, last_end, text[first:last_end], tokens_so_far))

        for (a, b), tokens in zip(spans, counts, strict=True):
            if tokens > size:
                close()
                splits_in = 0
                pieces.extend(self._packed(text, a, b, levels[1:], size))
                continue
            if splits_in:
                # Splits are trimmed, so the text between two of them is whitespace (or empty,
                # after a CJK stop).
                gap = text[last_end:a]
                delta = seam(text[last_start:last_end], gap, text[a:b], splits_in == 1)
                if delta is None:
                    # No word end in the last split (a lone "." or "*"): look for one in the
                    # whole piece, which starts the counted text (so a seam is always found).
                    delta = seam(text[first:last_end], gap, text[a:b], True)
                joined = tokens_so_far + tokens + (delta if delta is not None else 0)
                if delta is None:  # still none (a tokenizer without seams): count the piece
                    joined = tokenizer.count(text[first:b])
                if joined <= size:
                    last_start, last_end, tokens_so_far = a, b, joined
                    splits_in += 1
                    continue
                close()
            first, last_start, last_end, tokens_so_far, splits_in = a, a, b, tokens, 1
        close()
        return pieces

    def _packed_characters(
        self, text: str, start: int, end: int, levels: tuple[Level, ...], size: int
    ) -> list[TextPiece]:
        """:meth:`_packed` for the ``character`` tokenizer: a run of splits fits while its
        trimmed text spans at most ``size`` characters.

        Split ``i`` is ``text[lowers[i]:uppers[i]]`` (the cut points, with ``start`` and ``end``
        at the two ends). A piece that starts at a split's trimmed start ``a`` holds every split
        whose upper bound is within ``a + size`` (its trimmed end is at most its bound), and the
        next split too when its trimmed end is within it; a split after that starts past the
        limit. A split in between cannot be over the budget (its end would be past the limit),
        so only a split that starts a piece is checked for it and cut at the next level.
        """
        uppers = [match.end() for match in levels[0].pattern.finditer(text, start, end)]
        if uppers and uppers[-1] >= end:
            uppers.pop()  # a cut at the end cuts nothing
        if not uppers:  # nothing to cut at this level (the text is trimmed: one split)
            return self._packed(text, start, end, levels[1:], size)
        # Both end splits hold a character of the trimmed text, so there are two splits or more.
        lowers = [start, *uppers]
        uppers.append(end)
        count = len(uppers)
        pieces: list[TextPiece] = []
        index = 0
        while index < count:
            span = trim(text, lowers[index], uppers[index])
            if span is None:  # a blank split
                index += 1
                continue
            first, last_end = span
            if last_end - first > size:
                pieces.extend(self._packed(text, first, last_end, levels[1:], size))
                index += 1
                continue
            limit = first + size
            last = bisect_right(uppers, limit, index) - 1  # the last split bounded by the limit
            if last < index:  # the first split's trailing whitespace runs past the limit
                index += 1
            else:
                last_end = first + len(text[first : uppers[last]].rstrip())
                index = last + 1
                if index < count:
                    following = trim(text, lowers[index], uppers[index])
                    if following is not None and following[1] <= limit:
                        last_end = following[1]
                        index += 1
            pieces.append(TextPiece(first, last_end, text[first:last_end], last_end - first))
        return pieces

    def _packed_at_topics(
        self, text: str, start: int, end: int, levels: tuple[Level, ...], size: int
    ) -> list[TextPiece]:
        """:meth:`_packed` at sentence ends, each piece ending where the topic moves.

        Packing sentences as full as they go ends a piece wherever the budget runs out, so the
        end of one topic and the start of the next share it (and a question about either finds
        a piece half about something else). Here a piece ends at one of the sentence ends that
        fit, and leave it at least a :data:`TOPIC_FLOOR`-th of the budget: the one where the
        content words of the :data:`TOPIC_CONTEXT` sentences before and after it share least
        (:func:`chunking.chunkers.cohesion.similarity`; the latest of equals, so a text on one
        topic is packed as full as before). The last piece is what is left; a sentence over the
        budget is cut at the next level, as :meth:`_packed` does.
        """
        spans = splits(text, start, end, levels[0])
        if len(spans) <= 1:  # nothing to cut at this level
            return self._packed(text, *(spans[0] if spans else (start, end)), levels[1:], size)
        characters = self._characters
        tokenizer = self.tokenizer
        if characters:
            counts = [b - a for a, b in spans]
        else:
            counts = tokenizer.count_capped([text[a:b] for a, b in spans], size)
        seam = tokenizer.seam_function()
        words: list[frozenset[str] | None] = [None] * len(spans)

        def words_of(first: int, last: int) -> frozenset[str]:
            for index in range(first, last):
                if words[index] is None:
                    a, b = spans[index]
                    words[index] = content_words(text[a:b])
            return frozenset().union(*words[first:last])  # type: ignore[arg-type]

        floor = size // TOPIC_FLOOR
        pieces: list[TextPiece] = []
        count = len(spans)
        index = 0
        while index < count:
            first = spans[index][0]
            if counts[index] > size:
                pieces.extend(self._packed(text, first, spans[index][1], levels[1:], size))
                index += 1
                continue
            # totals[k]: the size of the piece from split `index` through split `index + k`.
            totals = [counts[index]]
            last = index
            while last + 1 < count and counts[last + 1] <= size:
                a, b = spans[last + 1]
                if characters:
                    joined = b - first
                else:
                    gap = text[spans[last][1] : a]
                    delta = seam(text[spans[last][0] : spans[last][1]], gap, text[a:b], last == index)
                    if delta is None:
                        delta = seam(text[first : spans[last][1]], gap, text[a:b], True)
                    if delta is None:
                        joined = tokenizer.count(text[first:b])
                    else:
                        joined = totals[-1] + counts[last + 1] + delta
                if joined > size:
                    break
                totals.append(joined)
                last += 1
            cut = last
            if last + 1 < count and counts[last + 1] <= size:
                # The budget ends the piece: end it at the weakest tie in reach instead.
                best = None
                for candidate in range(last, index - 1, -1):
                    if totals[candidate - index] < floor:
                        break
                    if _MARKER.fullmatch(text, *spans[candidate]):
                        continue
                    shared = similarity(
                        words_of(max(index, candidate + 1 - TOPIC_CONTEXT), candidate + 1),
                        words_of(candidate + 1, min(count, candidate + 1 + TOPIC_CONTEXT)),
                    )
                    if best is None or shared < best:
                        best, cut = shared, candidate
            end_of_piece = spans[cut][1]
            pieces.append(TextPiece(first, end_of_piece, text[first:end_of_piece], totals[cut - index]))
            index = cut + 1
        return pieces


def splits(text: str, start: int, end: int, level: Level) -> list[tuple[int, int]]:
    """The trimmed, non-blank splits of ``text[start:end]`` at ``level``'s cut points."""
    spans: list[tuple[int, int]] = []
    position = start
    for match in level.pattern.finditer(text, start, end):
        cut = match.end()
        if cut <= position or cut >= end:
            continue
        span = trim(text, position, cut)
        if span is not None:
            spans.append(span)
        position = cut
    span = trim(text, position, end)
    if span is not None:
        spans.append(span)
    return spans


def cut_exactly(
    text: str, start: int, end: int, count: Callable[[str], int], size: int, *, trim_pieces: bool = False
) -> list[TextPiece]:
    """Cut ``text[start:end]`` into the longest prefixes of at most ``size`` tokens (``count``
    counts), by a galloping then a binary search: time about linear in the text.

    Prefers to end a piece after whitespace when one lies in the fitting prefix. With
    ``trim_pieces``, pieces are measured and returned without surrounding whitespace (blank
    pieces dropped). Any single character fits, since budgets are at least four tokens.
    """

    def measure(a: int, b: int) -> tuple[int, int, int] | None:
        if trim_pieces:
            span = trim(text, a, b)
            if span is None:
                return None
            a, b = span
        return a, b, count(text[a:b])

    pieces: list[TextPiece] = []
    while start < end:
        # Gallop first: double the probe while its piece fits, so the search counts about as
        # many characters as the piece holds. Searching the whole rest at once counted half of
        # it on the first probe, which made a long text without boundaries quadratic.
        low, high, reach = start + 1, end, max(size, 1)
        while start + reach < end:
            measured = measure(start, start + reach)
            if measured is not None and measured[2] > size:
                high = start + reach - 1
                break
            low, reach = start + reach, reach * 2
        while low < high:  # largest cut whose (trimmed) piece fits
            middle = (low + high + 1) // 2
            measured = measure(start, middle)
            if measured is None or measured[2] <= size:
                low = middle
            else:
                high = middle - 1
        cut = low
        if cut < end:
            space = max(text.rfind(" ", start + 1, cut), text.rfind("\n", start + 1, cut))
            if space > start:
                cut = space + 1
        measured = measure(start, cut)
        # Counts are not strictly monotone in the cut: step back until the piece fits.
        while measured is not None and measured[2] > size and cut > start + 1:
            cut -= 1
            measured = measure(start, cut)
        if measured is not None:
            a, b, tokens = measured
            pieces.append(TextPiece(a, b, text[a:b], tokens))
        start = cut
    return pieces


def trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Return ``(start, end)`` without surrounding whitespace, or None for a blank span.

    ``str.strip`` drops the characters ``str.isspace`` names, in C: one copy of the span
    instead of a Python step per whitespace character (the splitter trims every split)."""
    piece = text[start:end]
    right = piece.rstrip()
    if not right:
        return None
    return start + len(right) - len(right.lstrip()), start + len(right)
