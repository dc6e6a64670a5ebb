"""The section chunker: pack a document's units, section by section, under a token budget.

Reading order is kept. Units of a section are packed into a chunk until the next unit would pass
``size`` tokens; a unit over ``size`` on its own is split at paragraph, sentence, clause or word
boundaries (chonkie's levels) into pieces packed the same way, with exact sizes
(:meth:`chunking.chunkers.recursive.RecursiveChunker.split_packed`). A section that ends with an
open chunk under ``min_size`` tokens carries that chunk on into the next section. Tables never
mix with text: a table is one chunk, or row groups that each repeat the header rows.

Pieces in a chunk are joined by the document's own whitespace between them, which the parsers
make a blank line, so a packed chunk is the exact slice of ``Document.text`` at its offsets; where
the text between two pieces is not whitespace (a parser dropped something there), they are joined
by a blank line instead and ``metadata["exact_slice"]`` is False, as it is for row groups that
repeat a header. Size always counts the joined text.

Each unit is counted once (in one batch per document); a growing chunk is never counted again:
its exact size is its pieces' counts plus what each join costs, counted in a few characters on
either side of the join (:meth:`chunking.tokenizers.Tokenizer.seam`). Where a seam cannot be
counted locally (the ``word`` tokenizer, text with no word boundary near the join) and for table
row groups, the size is estimated from the parts and the finished chunk is counted once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import Field, PrivateAttr, model_validator

from chunking.chunk import Chunk, ContentKind, PageProvenance, TextProvenance
from chunking.chunkers.base import BaseChunker
from chunking.chunkers.levels import levels_for
from chunking.chunkers.recursive import RecursiveChunker, TextPiece
from chunking.document import Document, Unit
from chunking.errors import ChunkingError

__all__ = ["SectionChunker"]

_BLANK_LINE = "\n\n"
_KIND_OF_UNIT: dict[str, ContentKind] = {"code": "code", "heading": "heading", "table": "table_row"}


@dataclass(slots=True)
class _Piece:
    """A packable piece: a whole unit or a part of one, with its place and size."""

    text: str
    start: int | None  # offset in Document.text; None for page pieces
    end: int | None
    page: int | None
    kind: ContentKind
    path: tuple[str, ...]
    tokens: int


@dataclass(slots=True)
class _Draft:
    """A chunk being built: its pieces, size and the prefix of a repeated header.

    ``tokens`` is the exact count of the rendered text when ``exact``, else an estimate that
    :meth:`SectionChunker._finish` replaces with a count. ``own_joins`` is True when the packer
    joined every piece by the document's own whitespace (the text is then the slice from the
    first piece to the last), False when some join is a stand-in blank line, None when not
    known (drafts made outside the packing loop: their joins are looked at when rendered).
    """

    pieces: list[_Piece]
    tokens: int
    header: str = ""
    exact: bool = True
    own_joins: bool | None = None


class SectionChunker(BaseChunker):
    """Pack the sections of a document into chunks of at most ``size`` tokens.

    Attributes:
        size: The most tokens in a chunk.
        min_size: A chunk with fewer tokens than this at the end of a section goes on into the
            next section. None, the default, means a quarter of ``size``.
        tokenizer: The tokenizer that counts tokens.
    """

    strategy: ClassVar[str] = "section"
    version_sources: ClassVar[dict[str, str]] = {
        "packer": "SECTION_PACKER_VERSION",
        "splitter": "SPLITTER_VERSION",
        "table_rendering": "TABLE_RENDERING_VERSION",
        "chonkie": "package:chonkie",
    }

    size: int = Field(default=1024, ge=4)
    min_size: int | None = Field(default=None, ge=0)

    _splitter: RecursiveChunker = PrivateAttr()

    @model_validator(mode="after")
    def _min_size_fits(self) -> SectionChunker:
        if self.min_size is not None and self.min_size > self.size:
            raise ValueError(f"min_size ({self.min_size}) must not exceed size ({self.size})")
        return self

    def model_post_init(self, context: Any) -> None:
        """Load the tokenizer and build the splitter for oversized units once."""
        super().model_post_init(context)
        self._splitter = RecursiveChunker(chunk_size=self.size, tokenizer=self.tokenizer)

    @property
    def effective_min_size(self) -> int:
        """The carry-over threshold: ``min_size``, or a quarter of ``size``."""
        return self.min_size if self.min_size is not None else self.size // 4

    def split(self, text: str) -> list[TextPiece]:
        """Split a text into pieces of at most ``size`` tokens, each an exact slice of it.

        Raises:
            ChunkingError: The pieces do not join back into the text.
        """
        return self._splitter.split(text)

    def _within_budget(self, chunk: Chunk) -> bool:
        return chunk.metadata.get("token_count", 0) <= self.size

    # ----------------------------------------------------------------------------- packing

    def _chunk(self, document: Document) -> list[Chunk]:
        paged = _check_positions(document)
        # Units over the budget are split anyway: their counts stop at size + 1.
        counts = self._tokenizer.count_capped(
            [unit.text for section in document.sections for unit in section.units], self.size
        )
        drafts: list[_Draft] = []
        open_draft: _Draft | None = None
        position = 0
        # Bound once: this loop runs per unit, and private attributes of a pydantic model are
        # looked up through __getattr__.
        size, min_size = self.size, self.effective_min_size
        seam, count = self._tokenizer.seam_function(), self.count_tokens
        text = document.text
        for section in document.sections:
            path = section.heading_path
            for unit in section.units:
                tokens = counts[position]
                position += 1
                content_kind = unit.content_kind
                if content_kind == "table":
                    if open_draft:
                        drafts.append(open_draft)
                        open_draft = None
                    drafts.extend(self._table_drafts(unit, path, tokens))
                    continue
                kind = _KIND_OF_UNIT.get(content_kind, "text")
                if tokens <= size:
                    piece = _Piece(unit.text, unit.start, unit.end, unit.page, kind, path, tokens)
                else:
                    pieces = self._split_pieces(unit.text, unit.start, unit.page, kind, path, tokens)
                    for part in pieces[:-1]:  # parts of an oversized unit: each fills a chunk
                        if open_draft:
                            drafts.append(open_draft)
                            open_draft = None
                        drafts.append(_Draft([part], part.tokens))
                    if not pieces:
                        continue
                    piece = pieces[-1]
                if open_draft is not None:
                    last = open_draft.pieces[-1]
                    separator = _separator(text, last, piece)
                    delta = seam(last.text, separator, piece.text, len(open_draft.pieces) == 1)
                    exact = delta is not None
                    if not exact:
                        # No local seam (the word tokenizer, text without a word end nearby):
                        # estimate from the parts, never by counting the growing chunk again;
                        # _finish counts the chunk once and repacks it if the estimate was low.
                        delta = count(separator) if separator else 0
                    joined = open_draft.tokens + piece.tokens + delta
                    if joined <= size:
                        open_draft.pieces.append(piece)
                        open_draft.tokens = joined
                        open_draft.exact = open_draft.exact and exact
                        open_draft.own_joins = open_draft.own_joins and separator is not _BLANK_LINE
                        continue
                    drafts.append(open_draft)
                open_draft = _Draft([piece], piece.tokens, own_joins=True)
            if open_draft and open_draft.tokens >= min_size:
                drafts.append(open_draft)
                open_draft = None
        if open_draft:
            drafts.append(open_draft)
        return self._finish(document, drafts, paged)

    def _split_pieces(
        self,
        text: str,
        base: int | None,
        page: int | None,
        kind: ContentKind,
        path: tuple[str, ...],
        tokens: int | None = None,
    ) -> list[_Piece]:
        """Split an oversized text into trimmed pieces; offsets are shifted by ``base``."""
        return [
            _Piece(
                part.text,
                None if base is None else base + part.start,
                None if base is None else base + part.end,
                page,
                kind,
                path,
                part.token_count,
            )
            for part in self._splitter.split_packed(text, tokens, levels=levels_for(kind))
        ]

    # ----------------------------------------------------------------------------- tables

    def _table_drafts(self, unit: Unit, path: tuple[str, ...], tokens: int) -> list[_Draft]:
        """Return one draft for a fitting table, else row groups that repeat the header rows."""
        whole = _Piece(unit.text, unit.start, unit.end, unit.page, "table_row", path, tokens)
        if tokens <= self.size:
            return [_Draft([whole], tokens)]
        rows = unit.rows
        header_count = min(unit.header_rows, len(rows))
        header = unit.text[rows[0].start : rows[header_count - 1].end] if header_count else ""
        body = rows[header_count:]
        row_texts = [unit.text[r.start : r.end] for r in body]
        counts = self.count_many([header, *row_texts]) if body else [0]
        header_tokens, row_tokens = counts[0], counts[1:]
        newline = self.count_tokens("\n")
        if not body or header_tokens + newline > self.size // 2:
            # No rows to group, or a header too big to repeat: split the table like text.
            return [
                _Draft([p], p.tokens)
                for p in self._split_pieces(unit.text, unit.start, unit.page, "table_row", path)
            ]
        drafts: list[_Draft] = []
        group: list[_Piece] = []
        group_tokens = 0
        first_group = True

        def close() -> None:
            nonlocal group, group_tokens, first_group
            if group:
                draft = _Draft(group, group_tokens, header="" if first_group or not header else header)
                if first_group and header:
                    # The first group starts at the header itself: an exact slice of the table.
                    draft.pieces.insert(
                        0,
                        self._row_piece(unit, rows[0].start, rows[header_count - 1].end, path, header_tokens),
                    )
                drafts.append(draft)
                first_group = False
            group, group_tokens = [], 0

        def emit_header_alone() -> None:
            # A header whose first rows are all too big to join it still gets a chunk, and the
            # rows after that repeat it.
            nonlocal first_group
            if first_group and header:
                header_piece = self._row_piece(
                    unit, rows[0].start, rows[header_count - 1].end, path, header_tokens
                )
                drafts.append(_Draft([header_piece], header_tokens))
            first_group = False

        base = (header_tokens + newline) if header else 0
        for row, text, row_count in zip(body, row_texts, row_tokens, strict=True):
            if not text.strip():
                continue
            if base + row_count > self.size:
                close()
                emit_header_alone()
                offset = None if unit.start is None else unit.start + row.start
                drafts.extend(
                    _Draft([p], p.tokens)
                    for p in self._split_pieces(text, offset, unit.page, "table_row", path)
                )
                continue
            cost = row_count + (newline if group else 0)
            if group and base + group_tokens + cost > self.size:
                close()
                cost = row_count
            group.append(self._row_piece(unit, row.start, row.end, path, row_count))
            group_tokens += cost
        close()
        emit_header_alone()
        for draft in drafts:
            if len(draft.pieces) > 1 or draft.header:
                draft.tokens += base
                draft.exact = False  # sums of rows: counted in _finish
        return drafts

    @staticmethod
    def _row_piece(unit: Unit, start: int, end: int, path: tuple[str, ...], tokens: int) -> _Piece:
        offset = unit.start
        return _Piece(
            unit.text[start:end],
            None if offset is None else offset + start,
            None if offset is None else offset + end,
            unit.page,
            "table_row",
            path,
            tokens,
        )

    # ----------------------------------------------------------------------------- output

    def _finish(self, document: Document, drafts: list[_Draft], paged: bool) -> list[Chunk]:
        """Render drafts, count the estimated ones (row groups), and repack any that overflow."""
        rendered = [self._render(document, d, paged) for d in drafts]
        needs_count = [i for i, d in enumerate(drafts) if not d.exact]
        exact = self.count_many([rendered[i][0] for i in needs_count])
        chunks: list[Chunk] = []
        recount = dict(zip(needs_count, exact, strict=True))
        for i, draft in enumerate(drafts):
            tokens = recount.get(i, draft.tokens)
            if tokens > self.size:
                # Tokenization across a join cost more than its parts (rare with BPE): repack
                # these pieces one at a time with exact counts.
                chunks.extend(self._repack(document, draft, paged))
                continue
            chunks.append(self._make_chunk(document, draft, paged, rendered[i], tokens))
        return chunks

    def _repack(self, document: Document, draft: _Draft, paged: bool) -> list[Chunk]:
        """Pack ``draft``'s pieces again with exact counts; split a piece that fits nowhere."""
        chunks: list[Chunk] = []
        current = _Draft([], 0, draft.header)

        def emit(pending: _Draft) -> None:
            if pending.pieces:
                chunks.append(
                    self._make_chunk(
                        document, pending, paged, self._render(document, pending, paged), pending.tokens
                    )
                )

        for piece in draft.pieces:
            for candidate in (
                _Draft([*current.pieces, piece], 0, draft.header),
                _Draft([piece], 0, draft.header),
            ):
                candidate.tokens = self.count_tokens(self._render(document, candidate, paged)[0])
                if candidate.tokens <= self.size:
                    if len(candidate.pieces) == 1:
                        emit(current)
                    current = candidate
                    break
            else:
                # Even alone (with its repeated header) the piece is too big: split it bare.
                emit(current)
                current = _Draft([], 0, draft.header)
                for part in self._split_pieces(piece.text, piece.start, piece.page, piece.kind, piece.path):
                    emit(_Draft([part], part.tokens))
        emit(current)
        return chunks

    def _render(self, document: Document, draft: _Draft, paged: bool) -> tuple[str, bool]:
        """Return the chunk text and whether it is the exact slice at its offsets."""
        pieces = draft.pieces
        if draft.own_joins and not paged and not draft.header:
            # Pieces joined by the whitespace between them are the slice from first to last.
            return document.text[pieces[0].start : pieces[-1].end], True
        parts = [draft.header + "\n"] if draft.header else []
        exact = not draft.header and not paged
        for index, piece in enumerate(pieces):
            if index:
                left = pieces[index - 1]
                separator = _separator(document.text, left, piece)
                if paged or document.text[left.end : piece.start] != separator:
                    exact = False
                parts.append(separator)
            parts.append(piece.text)
        return "".join(parts), exact

    def _make_chunk(
        self, document: Document, draft: _Draft, paged: bool, rendered: tuple[str, bool], tokens: int
    ) -> Chunk:
        text, exact = rendered
        pieces = draft.pieces
        if paged:
            provenance: TextProvenance | PageProvenance = PageProvenance(
                pages=tuple(sorted({p.page or 1 for p in pieces}))
            )
        else:
            provenance = TextProvenance(start=pieces[0].start, end=pieces[-1].end)
        kinds = {p.kind for p in pieces}
        metadata: dict[str, Any] = {"token_count": tokens, "exact_slice": exact}
        if draft.header:
            metadata["repeated_header"] = draft.header
        return Chunk(
            document_id=document.id,
            text=text,
            provenance=provenance,
            heading_path=list(_common_prefix([p.path for p in pieces])),
            content_kind=kinds.pop() if len(kinds) == 1 else "text",
            metadata=metadata,
        )


def _check_positions(document: Document) -> bool:
    """Return True for a paged document; raise when text and page units are mixed."""
    offsets = {unit.has_offsets for section in document.sections for unit in section.units}
    without = False in offsets
    if without and True in offsets:
        raise ChunkingError(
            f"{document.source_uri}: the document mixes units with text offsets and units with "
            "pages only; a parser must give one kind of position for all units"
        )
    return without


def _separator(text: str, left: _Piece, right: _Piece) -> str:
    """The text that joins two pieces: the document's own whitespace between them, else a blank
    line (page pieces, or text a parser left out between them).

    The stand-in is :data:`_BLANK_LINE` itself, never a copy: ``separator is _BLANK_LINE``
    tells the packer the join is not the document's own (a gap of two newlines sliced from the
    text is another object).
    """
    if left.end is None or right.start is None or right.start < left.end:
        return _BLANK_LINE
    gap = text[left.end : right.start]
    return gap if not gap or gap.isspace() else _BLANK_LINE


def _common_prefix(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    first = paths[0]
    length = len(first)
    for path in paths[1:]:
        if path is first:  # pieces of one section share its path
            continue
        length = min(length, len(path))
        for i in range(length):
            if path[i] != first[i]:
                length = i
                break
    return first[:length]
