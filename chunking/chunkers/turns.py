"""The turn-window chunker: windows of whole chat turns under a token budget."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, SerializeAsAny, model_validator

from chunking.chunk import Chunk, TextProvenance
from chunking.chunkers.base import BaseChunker
from chunking.chunkers.recursive import RecursiveChunker
from chunking.document import Document, Section, Unit
from chunking.tokenizers import DEFAULT_TOKENIZER

__all__ = ["TurnWindowChunker"]


class TurnWindowChunker(BaseChunker):
    """Pack whole chat turns into windows of at most ``chunk_size`` tokens.

    A window holds one or more whole turns; a boundary never falls inside a turn. Tokens are
    counted for each turn alone (its text plus any text that follows it before the next turn),
    so separators between turns are not part of the count. Text before the first turn joins the
    first window; text after a turn joins that turn's window. ``turn_overlap`` turns are repeated
    from the window before, and a window always moves on by at least one turn. A turn over the
    budget, or a document without turns, goes to ``fallback``, and those chunks are named
    ``turn-window:<fallback strategy>``. Each window records its turn range and speakers.

    Attributes:
        chunk_size: The most tokens in a window.
        turn_overlap: How many turns a window repeats from the window before it.
        fallback: The span chunker for turns over the budget and documents without turns.
    """

    strategy: Literal["turn-window"] = "turn-window"
    version_sources: ClassVar[dict[str, str]] = {"turn_window": "TURN_WINDOW_VERSION"}

    chunk_size: int = Field(default=256, ge=4)
    turn_overlap: int = Field(default=0, ge=0)
    fallback: SerializeAsAny[RecursiveChunker] = None  # type: ignore[assignment]

    @model_validator(mode="before")
    @classmethod
    def _default_fallback(cls, data: Any) -> Any:
        """Without a fallback, split with the window's own tokenizer and budget."""
        if isinstance(data, dict) and data.get("fallback") is None:
            data = dict(data)
            data["fallback"] = RecursiveChunker(
                chunk_size=data.get("chunk_size", 256), tokenizer=data.get("tokenizer", DEFAULT_TOKENIZER)
            )
        return data

    @property
    def fallback_name(self) -> str:
        """The chunker name given to chunks the fallback makes."""
        return f"{self.strategy}:{self.fallback.strategy}"

    def _within_budget(self, chunk: Chunk) -> bool:
        if chunk.chunker == self.fallback_name:
            return chunk.metadata.get("token_count", 0) <= self.fallback.chunk_size
        return chunk.metadata.get("turn_tokens", 0) <= self.chunk_size

    def _chunk(self, document: Document) -> list[Chunk]:
        if not document.turns:
            return self._fallback_chunks(document, document)
        numbered = [(i, span) for i, span in enumerate(_turn_extents(document)) if span[0] < span[1]]
        if not numbered:
            return self._fallback_chunks(document, document)
        numbers = [i for i, _ in numbered]
        extents = [span for _, span in numbered]
        counts = self.count_many([document.text[s:e] for s, e in extents])
        chunks: list[Chunk] = []
        first = 0
        while first < len(extents):
            if counts[first] > self.chunk_size:
                chunks.extend(self._oversized_turn(document, numbers[first], extents[first]))
                first += 1
                continue
            last, tokens = first, counts[first]
            while last + 1 < len(extents) and counts[last + 1] <= self.chunk_size - tokens:
                last += 1
                tokens += counts[last]
            chunks.append(self._window(document, extents, numbers, first, last, tokens))
            if last + 1 >= len(extents):
                break
            # Repeat up to turn_overlap turns, but always move on, and never start a window on a
            # turn that will go to the fallback.
            following = max(first + 1, last + 1 - self.turn_overlap)
            while following <= last and counts[following] > self.chunk_size:
                following += 1
            first = following
        return chunks

    def _window(
        self,
        document: Document,
        extents: list[tuple[int, int]],
        numbers: list[int],
        first: int,
        last: int,
        tokens: int,
    ) -> Chunk:
        start, end = extents[first][0], extents[last][1]
        turns = document.turns or ()
        speakers = list(dict.fromkeys(turns[n].speaker for n in numbers[first : last + 1]))
        text = document.text[start:end]
        return Chunk(
            document_id=document.id,
            text=text,
            provenance=TextProvenance(start=start, end=end),
            metadata={
                "token_count": self.count_tokens(text) if first != last else tokens,
                "turn_tokens": tokens,
                "turn_start": numbers[first],
                "turn_end": numbers[last],
                "speakers": speakers,
            },
        )

    def _oversized_turn(self, document: Document, index: int, extent: tuple[int, int]) -> list[Chunk]:
        start, end = extent
        part = Document.model_construct(
            **{
                **dict(document),
                "sections": (Section(units=(Unit(text=document.text[start:end], start=start, end=end),)),),
            }
        )
        speaker = (document.turns or ())[index].speaker
        chunks = self._fallback_chunks(document, part)
        for chunk in chunks:
            chunk.metadata.update({"turn_start": index, "turn_end": index, "speakers": [speaker]})
        return chunks

    def _fallback_chunks(self, document: Document, part: Document) -> list[Chunk]:
        # The fallback's own placement is skipped: ids, indexes and names are set by chunk().
        chunks = self.fallback._chunk(part)
        return [c.model_copy(update={"chunker": self.fallback_name}) for c in chunks]


def _turn_extents(document: Document) -> list[tuple[int, int]]:
    """Return each turn's span widened to own the text up to the next turn, trimmed.

    The first turn also owns any text before it; the last owns the rest of the document.
    """
    text = document.text
    turns = document.turns or ()
    extents = []
    for index, turn in enumerate(turns):
        start = 0 if index == 0 else turn.start
        end = turns[index + 1].start if index + 1 < len(turns) else len(text)
        end = max(end, turn.end)
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        extents.append((start, max(end, start)))
    return extents
