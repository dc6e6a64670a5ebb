"""The recursive span chunker: chonkie's RecursiveChunker, held to exact slices.

chonkie splits at paragraph, sentence, clause and word boundaries and merges small splits up to
the budget. Its merged counts are sums of the parts' counts and its last resort (token windows)
decodes tokens back to text, so neither is trusted: every piece is checked to be the exact slice
of the input at its offsets and counted (once, after trimming where pieces are trimmed), and any
piece that fails is cut again by the character-exact splitter
(:func:`chunking.chunkers.packing.cut_exactly`). The pieces of
:meth:`RecursiveChunker.split` always join back into the input text.

:meth:`RecursiveChunker.split_packed` (the section chunker's split of a unit over its budget)
cuts at our own levels and packs the splits itself (:mod:`chunking.chunkers.packing`): each is
counted once and joins are counted at their seams, so no piece is counted twice (chonkie's merge
and the check above count everything twice).
"""

from __future__ import annotations

import bisect
from typing import Any, ClassVar, Literal

from pydantic import Field, PrivateAttr

from chunking.chunk import Chunk, PageProvenance, TextProvenance
from chunking.chunkers.base import BaseChunker
from chunking.chunkers.levels import PROSE_LEVELS, Level
from chunking.chunkers.packing import PackedSplitter, TextPiece, cut_exactly
from chunking.chunkers.packing import trim as _trim
from chunking.chunkers.turn_pieces import turn_chunks
from chunking.document import Document
from chunking.errors import ChunkingError

__all__ = ["RecursiveChunker", "TextPiece"]


class RecursiveChunker(BaseChunker):
    """Split text at paragraph, sentence, clause and word boundaries into pieces of at most
    ``chunk_size`` tokens; every piece is an exact slice of the input.

    Attributes:
        chunk_size: The most tokens in a piece.
        tokenizer: The tokenizer that counts tokens.
    """

    strategy: Literal["recursive"] = "recursive"
    version_sources: ClassVar[dict[str, str]] = {"splitter": "SPLITTER_VERSION", "chonkie": "package:chonkie"}

    # Four tokens hold any single character in every tokenizer offered here.
    chunk_size: int = Field(default=512, ge=4)

    _splitter: Any = PrivateAttr(default=None)
    _packer: PackedSplitter = PrivateAttr()

    def model_post_init(self, context: Any) -> None:
        """Load the tokenizer and build the packed splitter on it."""
        super().model_post_init(context)
        self._packer = PackedSplitter(self._tokenizer, self.chunk_size)

    def _chonkie_splitter(self) -> Any:
        """chonkie's splitter, built on first use (it needs the loaded tokenizer)."""
        if self._splitter is None:
            # Imported here, with the first split: see chunking.tokenizers._from_chonkie.
            from chonkie import RecursiveChunker as ChonkieRecursiveChunker

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
        return self._packer.split(text, tokens, levels=levels, size=size)

    @property
    def packer(self) -> PackedSplitter:
        """What :meth:`split_packed` runs, for a caller that splits many texts (one read of a
        private attribute instead of one per split)."""
        return self._packer

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
        return cut_exactly(text, start, end, self._tokenizer.count, self.chunk_size, trim_pieces=trim)

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
