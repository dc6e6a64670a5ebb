"""Span chunks of a chat that keep to its turns: whole turns packed, a long turn split inside.

The recursive chunker cuts a chat (a turn window, for its children) here: consecutive whole
turns are packed into a chunk while its text fits the budget, so every chunk starts where a turn
starts; a turn over the budget is split inside at the prose levels
(:mod:`chunking.chunkers.levels`), and its pieces record that turn and its speaker. Each chunk
is the exact slice of the document at its offsets and carries ``speakers``, ``turn_start`` and
``turn_end`` like a turn window; a chunk that starts inside a turn (a piece after the first, or
the rest of a turn its parent cut into) carries ``continues_turn``: the speaker, put back in
front of it for embedding by :attr:`chunking.chunk.Chunk.contextual_text`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chunking.chunk import Chunk, TextProvenance
from chunking.document import Document

if TYPE_CHECKING:
    from chunking.chunkers.recursive import RecursiveChunker

__all__ = ["turn_chunks"]


def turn_extents(document: Document, start: int, end: int) -> list[tuple[int, int, int]]:
    """``(turn number, start, end)`` of each turn in ``[start, end)``, widened to own the text up
    to the next turn (the first also what comes before it), trimmed; empty turns left out."""
    text = document.text
    turns = [(n, t) for n, t in enumerate(document.turns or ()) if t.end > start and t.start < end]
    extents = []
    for index, (number, turn) in enumerate(turns):
        a = start if index == 0 else max(turn.start, start)
        b = turns[index + 1][1].start if index + 1 < len(turns) else end
        b = min(max(b, turn.end), end)
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            extents.append((number, a, b))
    return extents


def turn_chunks(chunker: RecursiveChunker, document: Document, start: int, end: int) -> list[Chunk]:
    """The chunks of ``document.text[start:end]`` cut at its turns (see the module docstring)."""
    extents = turn_extents(document, start, end)
    if not extents:
        return []
    text, size = document.text, chunker.chunk_size
    tokenizer = chunker._tokenizer
    counts = tokenizer.count_capped([text[a:b] for _, a, b in extents], size)
    seam = tokenizer.seam_function()
    speakers = [t.speaker for t in document.turns or ()]
    chunks: list[Chunk] = []
    group: list[tuple[int, int, int]] = []
    tokens = 0

    turns = document.turns or ()

    def close() -> None:
        if group:
            (first, a, _), b = group[0], group[-1][2]
            names = list(dict.fromkeys(speakers[n] for n, _, _ in group))
            chunks.append(_chunk(document, a, b, tokens, first, group[-1][0], names))
            if text[turns[first].start : a].strip():  # the rest of a turn a parent cut into
                chunks[-1].metadata["continues_turn"] = speakers[first]

    for (number, a, b), count in zip(extents, counts, strict=True):
        if count > size:
            close()
            group, tokens = [], 0
            chunks.extend(_split_turn(chunker, document, number, a, b, speakers[number]))
            continue
        if group:
            last_a, last_b = group[-1][1], group[-1][2]
            gap = text[last_b:a]
            delta = seam(text[last_a:last_b], gap, text[a:b], len(group) == 1)
            if delta is None:  # no word end in the last turn: look back over the whole chunk
                delta = seam(text[group[0][1] : last_b], gap, text[a:b], True)
            joined = tokens + count + delta if delta is not None else tokenizer.count(text[group[0][1] : b])
            if joined <= size:
                group.append((number, a, b))
                tokens = joined
                continue
            close()
        group, tokens = [(number, a, b)], count
    close()
    return chunks


def _split_turn(
    chunker: RecursiveChunker, document: Document, number: int, start: int, end: int, speaker: str
) -> list[Chunk]:
    pieces = chunker.split_packed(document.text[start:end], chunker.chunk_size + 1)
    chunks = []
    began = document.turns[number].start if document.turns else start
    for piece in pieces:
        chunk = _chunk(
            document, start + piece.start, start + piece.end, piece.token_count, number, number, [speaker]
        )
        if document.text[began : start + piece.start].strip():
            chunk.metadata["continues_turn"] = speaker
        chunks.append(chunk)
    return chunks


def _chunk(
    document: Document, start: int, end: int, tokens: int, first: int, last: int, speakers: list[str]
) -> Chunk:
    return Chunk(
        document_id=document.id,
        text=document.text[start:end],
        provenance=TextProvenance(start=start, end=end),
        metadata={"token_count": tokens, "speakers": speakers, "turn_start": first, "turn_end": last},
    )
