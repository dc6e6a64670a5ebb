"""The recursive span chunker: chonkie's RecursiveChunker, held to exact slices.

chonkie splits at paragraph, sentence, clause and word boundaries and merges small splits up to
the budget. Its merged counts are sums of the parts' counts and its last resort (token windows)
decodes tokens back to text, so neither is trusted: every piece is re-counted and checked to be
the exact slice of the input at its offsets, and any piece that fails is cut again by the
character-exact splitter below. The pieces of :meth:`RecursiveChunker.split` always join back
into the input text.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any, ClassVar

from chonkie import RecursiveChunker as ChonkieRecursiveChunker
from pydantic import Field, PrivateAttr

from chunking.chunk import Chunk, PageProvenance, TextProvenance
from chunking.chunkers.base import BaseChunker
from chunking.document import Document
from chunking.errors import ChunkingError
from chunking.versions import SPLITTER_VERSION, package_version

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
    code_versions: ClassVar[dict[str, str]] = {
        "splitter": SPLITTER_VERSION,
        "chonkie": package_version("chonkie"),
    }

    # Four tokens hold any single character in every tokenizer offered here.
    chunk_size: int = Field(default=512, ge=4)

    _splitter: Any = PrivateAttr()

    def model_post_init(self, context: Any) -> None:
        """Load the tokenizer and build chonkie's splitter once."""
        super().model_post_init(context)
        # min_characters_per_chunk=1: chonkie's default of 24 glues short splits to neighbours,
        # which is merging, and merging is ours to do under the budget.
        self._splitter = ChonkieRecursiveChunker(
            tokenizer=self._tokenizer.chonkie, chunk_size=self.chunk_size, min_characters_per_chunk=1
        )

    def split(self, text: str) -> list[TextPiece]:
        """Split ``text`` into pieces of at most ``chunk_size`` tokens that join back into it.

        Raises:
            ChunkingError: The pieces do not join back into the text (a splitter bug).
        """
        if not text:
            return []
        count = self._tokenizer.count
        tokens = count(text)
        if tokens <= self.chunk_size:
            return [TextPiece(0, len(text), text, tokens)]
        pieces: list[TextPiece] = []
        for chonkie_chunk in self._splitter.chunk(text):
            start, end = chonkie_chunk.start_index, chonkie_chunk.end_index
            if text[start:end] != chonkie_chunk.text:
                # chonkie's offsets drifted (a decoded token window): cut the rest ourselves.
                start = pieces[-1].end if pieces else 0
                pieces.extend(self._cut_exactly(text, start, len(text)))
                break
            pieces.extend(self._checked(text, start, end))
        if "".join(p.text for p in pieces) != text:
            raise ChunkingError("the recursive splitter lost or changed text; report this as a bug")
        return pieces

    def _checked(self, text: str, start: int, end: int) -> list[TextPiece]:
        piece = text[start:end]
        tokens = self._tokenizer.count(piece)
        if tokens <= self.chunk_size:
            return [TextPiece(start, end, piece, tokens)]
        return self._cut_exactly(text, start, end)

    def _cut_exactly(self, text: str, start: int, end: int) -> list[TextPiece]:
        """Cut ``text[start:end]`` into the longest prefixes that fit, by binary search.

        Prefers to end a piece at whitespace when one lies in the fitting prefix; never splits a
        surrogate pair (Python strings hold code points, so any index is safe).
        """
        count = self._tokenizer.count
        pieces: list[TextPiece] = []
        while start < end:
            low, high = start + 1, end
            while low < high:  # largest cut with count(text[start:cut]) <= chunk_size
                middle = (low + high + 1) // 2
                if count(text[start:middle]) <= self.chunk_size:
                    low = middle
                else:
                    high = middle - 1
            cut = low
            if cut < end:
                space = max(text.rfind(" ", start + 1, cut), text.rfind("\n", start + 1, cut))
                if space > start:
                    cut = space + 1
            piece = text[start:cut]
            pieces.append(TextPiece(start, cut, piece, count(piece)))
            start = cut
        return pieces

    def _within_budget(self, chunk: Chunk) -> bool:
        return chunk.metadata.get("token_count", 0) <= self.chunk_size

    def _chunk(self, document: Document) -> list[Chunk]:
        """Split the text each section's units cover (or the whole text) into trimmed pieces."""
        if document.has_page_units:
            return self._chunk_pages(document)
        units = [u for s in document.sections for u in s.units]
        if units:
            start = min(u.start for u in units if u.start is not None)
            end = max(u.end for u in units if u.end is not None)
        else:
            start, end = 0, len(document.text)
        headings = _HeadingIndex(document)
        chunks: list[Chunk] = []
        for piece in self.split(document.text[start:end]):
            trimmed = _trim(document.text, start + piece.start, start + piece.end)
            if trimmed is None:
                continue
            s, e = trimmed
            text = document.text[s:e]
            tokens = piece.token_count if e - s == piece.end - piece.start else self.count_tokens(text)
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
                for piece in self.split(unit.text):
                    text = piece.text.strip()
                    if not text:
                        continue
                    tokens = piece.token_count if text == piece.text else self.count_tokens(text)
                    chunks.append(
                        Chunk(
                            document_id=document.id,
                            text=text,
                            provenance=PageProvenance(pages=(unit.page or 1,)),
                            heading_path=list(section.heading_path),
                            metadata={"token_count": tokens},
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
    """Return ``(start, end)`` without surrounding whitespace, or None for a blank span."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None
