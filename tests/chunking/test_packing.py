"""Packed splitting at character counts: the binary search over a level's cut points gives the
pieces that trimming and adding every split gives (the packer as first written, kept here as the
spec), for any text, budget and levels."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from chunking import load_tokenizer
from chunking.chunkers.levels import CODE_LEVELS, PROSE_LEVELS, Level
from chunking.chunkers.packing import PackedSplitter, cut_exactly, splits, trim
from tests.example_budget import examples


def packed_by_every_split(text: str, size: int, levels: tuple[Level, ...]) -> list[tuple[int, int]]:
    """The spec: every split of a level trimmed, then packed in order while a run spans at most
    ``size`` characters; a split over it is cut at the next level."""
    span = trim(text, 0, len(text))
    if span is None:
        return []
    start, end = span
    if end - start <= size:
        return [(start, end)]
    return _packed(text, start, end, levels, size)


def _packed(text: str, start: int, end: int, levels: tuple[Level, ...], size: int) -> list[tuple[int, int]]:
    if not levels:
        return [(p.start, p.end) for p in cut_exactly(text, start, end, len, size, trim_pieces=True)]
    spans = splits(text, start, end, levels[0])  # a level's trimmed splits (shared)
    if len(spans) <= 1:
        return _packed(text, *(spans[0] if spans else (start, end)), levels[1:], size)
    pieces: list[tuple[int, int]] = []
    first = last_end = -1
    for a, b in spans:
        if b - a > size:
            if first >= 0:
                pieces.append((first, last_end))
            first = -1
            pieces.extend(_packed(text, a, b, levels[1:], size))
        elif first >= 0 and b - first <= size:
            last_end = b
        else:
            if first >= 0:
                pieces.append((first, last_end))
            first, last_end = a, b
    if first >= 0:
        pieces.append((first, last_end))
    return pieces


# Words, stops, clause marks, CJK, and whitespace of every kind the levels cut at (blank lines,
# lines of spaces only, runs of spaces), so splits come blank, short, long and over the budget.
_WORDS = ["word", "a", "longerword", "x" * 30, ".", "!", "?", ",", ";", ":", " - ", "—", "。", "、", "」"]
_SPACES = [" ", "  ", "\n", "\n\n", " \n", "\n  \n", "\t", "\r\n", "\n\n\n", "  \n\n  "]
_TOKENS = st.sampled_from([*_WORDS, *_SPACES])


@settings(max_examples=examples(400), deadline=None)
@given(
    parts=st.lists(_TOKENS, min_size=0, max_size=120),
    size=st.integers(min_value=4, max_value=80),
    code=st.booleans(),
)
# A piece that ends exactly at the budget on a split whose trailing whitespace runs past it.
@example(parts=["word", " ", "a", "x" * 30, "  ", "word"], size=39, code=False)
@example(parts=["word", "\n", "word", "\n  \n", "a"], size=9, code=True)
def test_binary_search_packing_gives_the_pieces_of_every_split(
    parts: list[str], size: int, code: bool
) -> None:
    text = "".join(parts)
    levels = CODE_LEVELS if code else PROSE_LEVELS
    pieces = PackedSplitter(load_tokenizer("character"), size).split(text, levels=levels)
    assert [(p.start, p.end) for p in pieces] == packed_by_every_split(text, size, levels)
    for piece in pieces:
        assert piece.text == text[piece.start : piece.end]
        assert piece.token_count == len(piece.text) <= size


def test_cutting_a_text_without_boundaries_counts_about_its_length() -> None:
    """A 6 MB line without a space (a minified file, a base64 blob) took 92 s to chunk: each
    piece's binary search counted half of the rest of the text on its first probe, so the work
    grew with the square of the length (1 MB: 26 s). The search gallops from the piece's start,
    and the characters counted stay within a small multiple of the text's length (log of the
    piece's). The pieces are the same: the longest prefixes that fit, in order."""
    text = "".join("abcdefghijklmnopqrstuvwxyz0123456789"[(i * 7919) % 36] for i in range(200_000))
    counted: list[int] = []

    def count(piece: str) -> int:
        counted.append(len(piece))
        return -(-len(piece) // 4)  # four characters a token

    pieces = cut_exactly(text, 0, len(text), count, 256)
    assert [p.text for p in pieces] == [text[i : i + 1024] for i in range(0, len(text), 1024)]
    assert sum(counted) <= 40 * len(text), sum(counted) / len(text)
