"""The recursive span chunker: chonkie's RecursiveChunker, held to exact slices.

chonkie splits at paragraph, sentence, clause and word boundaries and merges small splits up to
the budget. Its merged counts are sums of the parts' counts and its last resort (token windows)
decodes tokens back to text, so neither is trusted: every piece is checked to be the exact slice
of the input at its offsets and counted (once, after trimming where pieces are trimmed), and any
piece that fails is cut again by the character-exact splitter below. The pieces of
:meth:`RecursiveChunker.split` always join back into the input text.

:meth:`RecursiveChunker.split_packed` (the section chunker's split of a unit over its budget)
takes only chonkie's levels and splitting from it and packs the splits itself: each is counted
once and joins are counted at their seams, so no piece is counted twice (chonkie's merge and the
check above count everything twice).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any, ClassVar

from chonkie import RecursiveChunker as ChonkieRecursiveChunker
from pydantic import Field, PrivateAttr

from chunking.chunk import Chunk, PageProvenance, TextProvenance
from chunking.chunkers.base import BaseChunker
from chunking.chunkers.levels import PROSE_LEVELS, Level
from chunking.chunkers.turn_pieces import turn_chunks
from chunking.document import Document
from chunking.errors import ChunkingError
from chunking.tokenizers import Tokenizer

__all__ = ["RecursiveChunker", "TextPiece"]


@dataclass(frozen=True, slots=True)
class TextPiece:
    """A slice ``text[start:end]`` of a split text, with its token count."""

    start: int
    end: int
    text: str
    token_count: int


class RecursiveChunker(BaseChunker):
    """Split text at paragraph, sentence, clause and word boundaries into pieces of at most
    ``chunk_size`` tokens; every piece is an exact slice of the input.

    Attributes:
        chunk_size: The most tokens in a piece.
        tokenizer: The tokenizer that counts tokens.
    """

    strategy: ClassVar[str] = "recursive"
    version_sources: ClassVar[dict[str, str]] = {"splitter": "SPLITTER_VERSION", "chonkie": "package:chonkie"}

    # Four tokens hold any single character in every tokenizer offered here.
    chunk_size: int = Field(default=512, ge=4)

    _splitter: Any = PrivateAttr(default=None)

    def _chonkie_splitter(self) -> Any:
        """chonkie's splitter, built on first use (it needs the loaded tokenizer)."""
        if self._splitter is None:
            # min_characters_per_chunk=1: chonkie's default of 24 glues short splits to
            # neighbours, which is merging, and merging is ours to do under the budget.
            self._splitter = ChonkieRecursiveChunker(
                tokenizer=self._tokenizer.chonkie, chunk_size=self.chunk_size, min_characters_per_chunk=1
            )
        return self._splitter

    def split(self, text: str, tokens: int | None = None) -> list[TextPiece]:
        """Split ``text`` into pieces of at most ``chunk_size`` tokens that join back into it.

        Args:
            text: The text to split.
            tokens: Its token count, when the caller already knows it (saves one count), or any
                number over ``chunk_size`` when it knows only that the text is over.

        Raises:
            ChunkingError: chonkie's pieces do not cover the text (a splitter bug).
        """
        return self._split(text, tokens, trim=False)

    def split_trimmed(self, text: str, tokens: int | None = None) -> list[TextPiece]:
        """Split ``text`` into pieces without surrounding whitespace, each within the budget.

        Offsets are relative to ``text`` and ``text[start:end] == piece.text``; whitespace-only
        pieces are dropped. Each piece is counted once, trimmed (trimming can change a BPE count
        either way), and cut again if it does not fit.
        """
        return self._split(text, tokens, trim=True)

    def split_packed(
        self,
        text: str,
        tokens: int | None = None,
        *,
        levels: tuple[Level, ...] = PROSE_LEVELS,
        size: int | None = None,
    ) -> list[TextPiece]:
        """Split ``text`` into pieces without surrounding whitespace, each within the budget,
        packed in order as full as they go, every size exact and every split counted once.

        Where to cut comes from ``levels`` (:mod:`chunking.chunkers.levels`: for prose,
        paragraphs, then sentences, line ends, clauses, words). At a level, each split is
        trimmed and counted once, and a run of splits is sized by adding what each join costs,
        counted at its seam (:meth:`Tokenizer.seam`), so a piece is never counted whole; a split
        over the budget is split at the next level, and a word over it is cut by the longest
        prefixes that fit. Offsets are relative to ``text``; whitespace-only text gives no pieces.

        Args:
            text: The text to split.
            tokens: Its token count when the caller knows it, or any number over the budget
                when it knows only that the text is over.
            levels: The cut points, most preferred first.
            size: The budget, when not ``chunk_size`` (a piece that must leave room for a
                heading before it).
        """
        size = self.chunk_size if size is None else size
        span = _trim(text, 0, len(text))
        if span is None:
            return []
        start, end = span
        tokenizer = self._tokenizer  # read once: a private attribute is read via __getattr__
        if tokens is None or (start, end) != (0, len(text)):
            tokens = tokenizer.count_capped([text[start:end]], size)[0]
        if tokens <= size:
            return [TextPiece(start, end, text[start:end], tokens)]
        return self._packed(text, start, end, levels, size, tokenizer)

    def _packed(
        self, text: str, start: int, end: int, levels: tuple[Level, ...], size: int, tokenizer: Tokenizer
    ) -> list[TextPiece]:
        """:meth:`split_packed` of ``text[start:end]``, trimmed and over ``size``, cut at the
        first of ``levels`` that cuts it, or finer (``tokenizer`` is this chunker's)."""
        if not levels:
            return self._cut_exactly(text, start, end, trim=True, size=size)
        spans: list[tuple[int, int]] = []
        position = start
        for match in levels[0].pattern.finditer(text, start, end):
            cut = match.end()
            if cut <= position or cut >= end:
                continue
            span = _trim(text, position, cut)
            if span is not None:
                spans.append(span)
            position = cut
        span = _trim(text, position, end)
        if span is not None:
            spans.append(span)
        if len(spans) <= 1:  # nothing to cut at this level
            return self._packed(text, *(spans[0] if spans else (start, end)), levels[1:], size, tokenizer)
        if tokenizer.name == "character":
            return self._packed_characters(text, spans, levels, size, tokenizer)
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
                pieces.extend(self._packed(text, a, b, levels[1:], size, tokenizer))
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
        self,
        text: str,
        spans: list[tuple[int, int]],
        levels: tuple[Level, ...],
        size: int,
        tokenizer: Tokenizer,
    ) -> list[TextPiece]:
        """:meth:`_packed` for the ``character`` tokenizer, where a text's count is its length:
        a run of splits fits while it spans at most ``size`` characters."""
        pieces: list[TextPiece] = []
        first = last_end = -1
        for a, b in spans:
            if b - a > size:
                if first >= 0:
                    pieces.append(TextPiece(first, last_end, text[first:last_end], last_end - first))
                first = -1
                pieces.extend(self._packed(text, a, b, levels[1:], size, tokenizer))
            elif first >= 0 and b - first <= size:
                last_end = b
            else:
                if first >= 0:
                    pieces.append(TextPiece(first, last_end, text[first:last_end], last_end - first))
                first, last_end = a, b
        if first >= 0:
            pieces.append(TextPiece(first, last_end, text[first:last_end], last_end - first))
        return pieces

    def _split(self, text: str, tokens: int | None, *, trim: bool) -> list[TextPiece]:
        if not text:
            return []
        if tokens is None:
            tokens = self._tokenizer.count(text)
        if tokens <= self.chunk_size and (not trim or not (text[0].isspace() or text[-1].isspace())):
            return [TextPiece(0, len(text), text, tokens)]
        spans = [(0, len(text))] if tokens <= self.chunk_size else self._chonkie_spans(text)
        pieces: list[TextPiece] = []
        for start, end in spans:
            pieces.extend(self._fitted(text, start, end, trim=trim))
        return pieces

    def _chonkie_spans(self, text: str) -> list[tuple[int, int]]:
        """chonkie's pieces as spans that cover ``text`` in order; where its offsets drift (a
        decoded token window), the rest is one span for :meth:`_cut_exactly`."""
        spans: list[tuple[int, int]] = []
        for chonkie_chunk in self._chonkie_splitter().chunk(text):
            start, end = chonkie_chunk.start_index, chonkie_chunk.end_index
            if text[start:end] != chonkie_chunk.text:
                spans.append((spans[-1][1] if spans else 0, len(text)))
                break
            spans.append((start, end))
        position = 0
        for start, end in spans:
            if start != position or end <= start:
                raise ChunkingError("the recursive splitter lost or changed text; report this as a bug")
            position = end
        if position != len(text):
            raise ChunkingError("the recursive splitter lost or changed text; report this as a bug")
        return spans

    def _fitted(self, text: str, start: int, end: int, *, trim: bool) -> list[TextPiece]:
        """``text[start:end]`` (trimmed with ``trim``) as one counted piece, or cut to fit."""
        if trim:
            span = _trim(text, start, end)
            if span is None:
                return []
            start, end = span
        piece = text[start:end]
        tokens = self._tokenizer.count(piece)
        if tokens <= self.chunk_size:
            return [TextPiece(start, end, piece, tokens)]
        return self._cut_exactly(text, start, end, trim=trim)

    def _cut_exactly(
        self, text: str, start: int, end: int, *, trim: bool = False, size: int | None = None
    ) -> list[TextPiece]:
        """Cut ``text[start:end]`` into the longest prefixes that fit, by binary search.

        Prefers to end a piece after whitespace when one lies in the fitting prefix. With
        ``trim``, pieces are measured and returned without surrounding whitespace (blank pieces
        dropped). Any single character fits, since budgets are at least four tokens.
        """
        count = self._tokenizer.count
        size = self.chunk_size if size is None else size

        def measure(a: int, b: int) -> tuple[int, int, int] | None:
            if trim:
                span = _trim(text, a, b)
                if span is None:
                    return None
                a, b = span
            return a, b, count(text[a:b])

        pieces: list[TextPiece] = []
        while start < end:
            low, high = start + 1, end
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

    def _within_budget(self, chunk: Chunk) -> bool:
        return chunk.metadata.get("token_count", 0) <= self.chunk_size

    def _chunk(self, document: Document) -> list[Chunk]:
        """Split the text the units cover (or the whole text) into trimmed pieces, packed full
        and cut at the prose levels; a chat is cut at its turns
        (:func:`chunking.chunkers.turn_pieces.turn_chunks`)."""
        if document.has_page_units:
            return self._chunk_pages(document)
        units = [u for s in document.sections for u in s.units]
        if units:
            start = min(u.start for u in units if u.start is not None)
            end = max(u.end for u in units if u.end is not None)
        else:
            start, end = 0, len(document.text)
        if document.turns:
            chunks = turn_chunks(self, document, start, end)
            if chunks:
                return chunks
        headings = _HeadingIndex(document)
        chunks = []
        for piece in self.split_packed(document.text[start:end], self.chunk_size + 1):
            s, e, text, tokens = start + piece.start, start + piece.end, piece.text, piece.token_count
            chunks.append(
                Chunk(
                    document_id=document.id,
                    text=text,
                    provenance=TextProvenance(start=s, end=e),
                    heading_path=list(headings.path_at(s)),
                    metadata={"token_count": tokens},
                )
            )
        return chunks

    def _chunk_pages(self, document: Document) -> list[Chunk]:
        if any(u.has_offsets for s in document.sections for u in s.units):
            raise ChunkingError(
                f"{document.source_uri}: the document mixes units with text offsets and units with "
                "pages only; a parser must give one kind of position for all units"
            )
        chunks: list[Chunk] = []
        for section in document.sections:
            for unit in section.units:
                for piece in self.split_packed(unit.text):
                    chunks.append(
                        Chunk(
                            document_id=document.id,
                            text=piece.text,
                            provenance=PageProvenance(pages=unit.pages or (1,)),
                            heading_path=list(section.heading_path),
                            metadata={"token_count": piece.token_count},
                        )
                    )
        return chunks


class _HeadingIndex:
    """Find the heading path of the section that holds an offset."""

    def __init__(self, document: Document) -> None:
        self._starts: list[int] = []
        self._paths: list[tuple[str, ...]] = []
        for section in document.sections:
            starts = [u.start for u in section.units if u.start is not None]
            if starts:
                self._starts.append(min(starts))
                self._paths.append(section.heading_path)

    def path_at(self, offset: int) -> tuple[str, ...]:
        position = bisect.bisect_right(self._starts, offset) - 1
        return self._paths[position] if position >= 0 else (self._paths[0] if self._paths else ())


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Return ``(start, end)`` without surrounding whitespace, or None for a blank span.

    ``str.strip`` drops the characters ``str.isspace`` names, in C: one copy of the span
    instead of a Python step per whitespace character (the splitter trims every split)."""
    piece = text[start:end]
    right = piece.rstrip()
    if not right:
        return None
    return start + len(right) - len(right.lstrip()), start + len(right)
