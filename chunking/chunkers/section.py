"""The section chunker: pack a document's units, section by section, under a token budget.

Reading order is kept. Units of a section are packed into a chunk until the next unit would pass
``chunk_size`` tokens; a unit over it on its own is split at paragraph, sentence, line, clause or
word boundaries (:mod:`chunking.chunkers.levels`; code at blank lines, lines, words) into pieces
packed the same way, with exact sizes
(:meth:`chunking.chunkers.recursive.RecursiveChunker.split_packed`); its last piece ends its chunk
(no later unit is packed after the tail of a cut one). A section that ends with an open chunk under
``min_size`` tokens carries that chunk on into the next section. Tables never mix with text: a table
is one chunk, or row groups that each carry the column names (:mod:`chunking.chunkers.tables`).
A caption or a short line ending in a colon right before a table in its section (``Table 4.1.
...``, ``Supported operations:``) leads the table's first chunk the way a heading does, instead
of ending the chunk before it.

With ``cohesion`` on, a chunk also ends at a change of topic, not only at the budget: before a
unit joins an open chunk that already holds ``min_size`` tokens, its content words are compared
with the chunk's and with the next unit's in the section (:mod:`chunking.chunkers.cohesion`); a
unit that shares little with the chunk and clearly more with what follows starts the next chunk.

A heading travels with what follows it: a chunk never ends with a heading while more of the
document follows (the heading goes on into the next chunk, whatever that holds: text, a table's
first rows, the first part of a unit over the budget, cut to leave room for the heading), and a
section that ends on a heading carries it on whatever its size. So no chunk is only headings,
unless the document is, or the headings end it and do not fit into the chunk before.

Pieces in a chunk are joined by the document's own whitespace between them, which the parsers
make a blank line, so a packed chunk is the exact slice of ``Document.text`` at its offsets; where
the text between two pieces is not whitespace (a parser dropped something there), they are joined
by a blank line instead and ``metadata["exact_slice"]`` is False, as it is for row groups that
repeat a header and rows rendered as cells. Size always counts the joined text.

Each unit is counted once (in one batch per document); a growing chunk is never counted again:
its exact size is its pieces' counts plus what each join costs, counted in a few characters on
either side of the join (:meth:`chunking.tokenizers.Tokenizer.seam`). Where a seam cannot be
counted locally (the ``word`` tokenizer, text with no word boundary near the join) and for table
row groups, the size is estimated from the parts and the finished chunk is counted once.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

from pydantic import Field, PrivateAttr, model_validator

from chunking.chunk import Chunk, ContentKind
from chunking.chunkers.base import BaseChunker
from chunking.chunkers.cohesion import MIN_WORDS, content_words, topic_shifts
from chunking.chunkers.drafts import (
    BLANK_LINE,
    Draft,
    Piece,
    check_positions,
    make_chunk,
    mark_fences,
    render,
    separator,
)
from chunking.chunkers.levels import Level, levels_for
from chunking.chunkers.overlap import add_context_before
from chunking.chunkers.packing import PackedSplitter, TextPiece
from chunking.chunkers.recursive import RecursiveChunker
from chunking.chunkers.tables import TableDrafter
from chunking.document import Document, Section, Unit

__all__ = ["SectionChunker"]

# Drafts are made into chunks once this many are waiting (see SectionChunker._chunk).
_FINISH_EVERY = 64

# Units whose words say what a passage is about (a table or code block after a paragraph never
# joins it, so it has no say in where the paragraph's chunk ends).
_COHESIVE = frozenset({"text", "list"})
# Shorter than this, a unit cannot hold MIN_WORDS content words (of three letters or more, with
# a space after each): no need to read it.
_COHESION_CHARS = 4 * MIN_WORDS
# A text unit that leads the table after it: a caption ("Table 4.1.", "表 4.2."), a line that
# ends in a colon, or one that says a table comes (_POINTS_AHEAD), of at most this many tokens
# (and a quarter of the budget); any other paragraph stays with the text before it.
_LEAD_IN_TOKENS = 48
# An admonition's label on a line of its own, as PDFs and HTML pages set it above the note.
_LABEL = re.compile(
    r"(?i)(?:notes?|tips?|warnings?|cautions?|important|hints?|see also|examples?|remarks?)\s*:?"
)
# The opening line of a MkDocs admonition or content tab (``!!! note "Title"``, ``??? tip``,
# ``=== "Python 3.10"``), which the Markdown parser makes a unit of its own above the body.
_MKDOCS_OPENING = re.compile(r'(?:!!!|\?\?\?\+?)[ \t]+[\w-]+(?:[ \t]+".*")?|===\+?[ \t]+".*"')
# Words of a short paragraph that point at what follows it ("The following directories are
# required in /.", "Here is an example of ...", "... are listed below."), whatever it ends in.
_POINTS_AHEAD = re.compile(
    r"(?i)\b(?:the following|as follows|here (?:is|are)"
    r"|(?:listed|shown|given) below|(?:table|list|example)s? below)\b"
)


def _leads_table(text: str) -> bool:
    """Whether a short text unit right before a table introduces it beyond what
    :func:`_announces` finds: a caption, or words that point at what follows (see
    ``_LEAD_IN_TOKENS``)."""
    return _CAPTION.match(text) is not None or _POINTS_AHEAD.search(text) is not None


def _announces(text: str) -> bool:
    """Whether a short text unit only announces what follows it, whatever that is: a line
    ending in a colon ("The options are:", "Notes:") or an admonition's label ("Note", "Tip").
    A MkDocs admonition's or tab's opening line announces its body the same way. Such a unit
    leads the next one as a heading does: a chunk that ended on it said nothing."""
    stripped = text.rstrip()
    return (
        stripped.endswith((":", "："))
        or _LABEL.fullmatch(stripped) is not None
        or _MKDOCS_OPENING.fullmatch(stripped) is not None
    )


def _short_intro(sections: Sequence[Section], index: int, tokens: Sequence[int], most: int) -> bool:
    """Whether the text under section ``index``'s heading is a short intro to the subsections
    that follow it (a release's link line, "The options are:"): at most ``most`` tokens in
    all (``tokens``: its units' counts), and the next section is one of its own. Such an intro
    leads the subsections' text as the heading does; else a chunk could end on the heading
    and its intro, and the next chunk's text lose the heading it belongs under."""
    path = sections[index].heading_path
    if not path or index + 1 == len(sections):
        return False
    following = sections[index + 1].heading_path
    if len(following) <= len(path) or following[: len(path)] != path:
        return False
    units = sections[index].units
    intro = [count for unit, count in zip(units, tokens, strict=True) if unit.content_kind != "heading"]
    return bool(intro) and sum(intro) <= most


# A caption is the word and a number ("Table 4.1.", "Table A.2", "表 4.2."), not any line that
# opens with "Table" ("Tables are listed below.").
_CAPTION = re.compile(r"(?:(?i:table|tab\.|tabelle|tableau|tabla|tabella|таблица)\s+|表\s*)(?:[A-Z]\.?)?\d")

_KIND_OF_UNIT: dict[str, ContentKind] = {
    "code": "code",
    "heading": "heading",
    "table": "table_row",
    "toc": "toc",
}


class SectionChunker(BaseChunker):
    """Pack the sections of a document into chunks of at most ``chunk_size`` tokens.

    Attributes:
        chunk_size: The most tokens in a chunk (formerly ``size``).
        min_size: A chunk with fewer tokens than this at the end of a section goes on into the
            next section. None, the default, means a quarter of ``chunk_size``.
        tokenizer: The tokenizer that counts tokens.
        cohesion: End a chunk past ``min_size`` early at a change of topic (lexical cohesion,
            :mod:`chunking.chunkers.cohesion`). Off by default: on Chroma's chunking benchmark
            it moved recall by less than the benchmark's noise, and it costs about a tenth of
            the chunker's time.
        overlap: Tokens of the previous chunk's end (of the same section, from a sentence start
            where one fits) put into a chunk's ``contextual_text`` only; its stored text stays
            the exact slice (:mod:`chunking.chunkers.overlap`). 0, the default, adds none.
    """

    strategy: Literal["section"] = "section"
    version_sources: ClassVar[dict[str, str]] = {
        "packer": "SECTION_PACKER_VERSION",
        "splitter": "SPLITTER_VERSION",
        "table_rendering": "TABLE_RENDERING_VERSION",
        "chonkie": "package:chonkie",
    }

    renamed: ClassVar[dict[str, str]] = {"size": "chunk_size"}

    chunk_size: int = Field(default=1024, ge=4)
    min_size: int | None = Field(default=None, ge=0)
    cohesion: bool = False
    overlap: int = Field(default=0, ge=0)

    _splitter: RecursiveChunker = PrivateAttr()
    _packer: PackedSplitter = PrivateAttr()

    @model_validator(mode="after")
    def _min_size_fits(self) -> SectionChunker:
        if self.min_size is not None and self.min_size > self.chunk_size:
            raise ValueError(f"min_size ({self.min_size}) must not exceed chunk_size ({self.chunk_size})")
        return self

    def model_post_init(self, context: Any) -> None:
        """Load the tokenizer and build the splitter for oversized units once."""
        super().model_post_init(context)
        self._splitter = RecursiveChunker(chunk_size=self.chunk_size, tokenizer=self.tokenizer)
        # Units over the budget are cut at sentence ends where the topic moves (packing.py).
        self._packer = PackedSplitter(self._splitter.packer.tokenizer, self.chunk_size, topic_cuts=True)

    @property
    def size(self) -> int:
        """``chunk_size`` under its old name, with a ``DeprecationWarning``."""
        warnings.warn(
            "SectionChunker.size is now chunk_size; size is deprecated", DeprecationWarning, stacklevel=2
        )
        return self.chunk_size

    @property
    def effective_min_size(self) -> int:
        """The carry-over threshold: ``min_size``, or a quarter of ``size``."""
        return self.min_size if self.min_size is not None else self.chunk_size // 4

    def split(self, text: str) -> list[TextPiece]:
        """Split a text into pieces of at most ``chunk_size`` tokens, each an exact slice of it.

        Raises:
            ChunkingError: The pieces do not join back into the text.
        """
        return self._splitter.split(text)

    def _within_budget(self, chunk: Chunk) -> bool:
        return chunk.metadata.get("token_count", 0) <= self.chunk_size

    # ----------------------------------------------------------------------------- packing

    def _chunk(self, document: Document) -> list[Chunk]:
        paged = check_positions(document)
        # Units over the budget are split anyway: their counts stop at size + 1.
        # Bound once: this runs per unit and per split, and private attributes of a pydantic
        # model are read through __getattr__.
        packer = self._packer
        tokenizer = packer.tokenizer
        counts = tokenizer.count_capped(
            [unit.text for section in document.sections for unit in section.units], self.chunk_size
        )
        drafts: list[Draft] = []
        chunks: list[Chunk] = []
        now = datetime.now(UTC)  # the chunks of one call share one created_at
        open_draft: Draft | None = None
        position = 0
        size, min_size = self.chunk_size, self.effective_min_size
        cohesive = self.cohesion
        lead_in_tokens = min(_LEAD_IN_TOKENS, size // 4)
        seam, count = tokenizer.seam_function(), tokenizer.count
        text = document.text
        tables: TableDrafter | None = None

        def join(draft: Draft, piece: Piece) -> bool:
            """Add ``piece`` to ``draft`` when the joined text fits the budget; a table of
            contents or index never shares a chunk with text, whatever headings stand between
            them (a heading may lead either)."""
            last = draft.pieces[-1]
            if piece.kind != "heading":
                for earlier in reversed(draft.pieces):
                    if earlier.kind != "heading":
                        if (earlier.kind == "toc") != (piece.kind == "toc"):
                            return False
                        break
            # separator(text, last, piece), written out: this runs for every unit.
            left_end, right_start = last.end, piece.start
            if left_end is None or right_start is None or right_start < left_end:
                gap = BLANK_LINE
            else:
                gap = text[left_end:right_start]
                if gap and not gap.isspace():
                    gap = BLANK_LINE
            delta = seam(last.text, gap, piece.text, len(draft.pieces) == 1)
            exact = delta is not None
            if not exact:
                # No local seam (the word tokenizer, text without a word end nearby): estimate
                # from the parts, never by counting the growing chunk again; _finish counts the
                # chunk once and repacks it if the estimate was low.
                delta = count(gap) if gap else 0
            joined = draft.tokens + piece.tokens + delta
            if joined > size:
                return False
            draft.pieces.append(piece)
            draft.tokens = joined
            draft.exact = draft.exact and exact
            draft.own_joins = draft.own_joins and gap is not BLANK_LINE
            return True

        def words_of(piece: Piece) -> frozenset[str]:
            if piece.words is None:
                piece.words = content_words(piece.text)
            return piece.words

        def shifts(draft: Draft, piece: Piece, following: Unit) -> bool:
            """True when ``piece`` belongs with ``following`` rather than with ``draft``: the
            chunk's side is its last pieces, as many words as the unit after (blocks of one
            size, so neither side wins by being longer)."""
            nonlocal next_words
            next_words = content_words(following.text)
            pieces = draft.pieces
            before = words_of(pieces[-1])
            if len(pieces) > 1 and len(before) < len(next_words):
                before = set(before)
                for earlier in reversed(pieces[:-1]):
                    before |= words_of(earlier)
                    if len(before) >= len(next_words):
                        break
            return topic_shifts(before, words_of(piece), next_words)

        def take_lead() -> Draft | None:
            """Close the open draft, keeping back its trailing headings to lead what follows."""
            nonlocal open_draft
            draft, open_draft = open_draft, None
            if draft is None:
                return None
            if not draft.pieces[-1].leads:  # most drafts: nothing to keep back
                drafts.append(draft)
                return None
            keep = draft.trailing_headings()
            if keep == len(draft.pieces):
                lead = draft
            else:
                lead = Draft(draft.pieces[-keep:], 0, exact=draft.exact, own_joins=draft.own_joins)
                del draft.pieces[-keep:]
                draft.exact = False  # its count included the headings: _finish counts it
                drafts.append(draft)
                lead.tokens = count(render(document, lead, paged)[0])
            while len(lead.pieces) > 1 and lead.tokens > size // 2:
                # A run of headings too big to lead: the earlier ones go alone, the later ones
                # on with what follows.
                drafts.append(Draft([lead.pieces[0]], lead.pieces[0].tokens))
                lead = Draft(lead.pieces[1:], 0, own_joins=lead.own_joins)
                lead.tokens = count(render(document, lead, paged)[0])
            return lead

        # The content words of the unit after the one being placed, when packing read them.
        next_words: frozenset[str] | None = None
        sections = document.sections
        for section_index, section in enumerate(sections):
            path = section.heading_path
            units = section.units
            last_index = len(units) - 1
            own_counts = counts[position : position + len(units)]
            intro_leads = _short_intro(sections, section_index, own_counts, lead_in_tokens)
            for index, unit in enumerate(units):
                if len(drafts) > _FINISH_EVERY:
                    # Finish the drafts so far (all but the last, which a trailing heading may
                    # yet join): their pieces die young instead of outliving collector passes
                    # (a document's worth of them, kept, made the collector scan the heap).
                    chunks += self._finish(document, drafts[:-1], paged, now)
                    del drafts[:-1]
                tokens = counts[position]
                position += 1
                content_kind = unit.content_kind
                if content_kind == "table":
                    if tables is None:
                        tables = self._table_drafter(packer, document, paged)
                    drafts.extend(tables.drafts(unit, path, tokens, take_lead()))
                    continue
                kind = _KIND_OF_UNIT.get(content_kind, "text")
                # Only page pieces use their pages (a chunk of a text document has a span).
                pages = unit.pages if paged else ()
                piece = Piece(unit.text, unit.start, unit.end, pages, kind, path, tokens)
                piece.words, next_words = next_words, None
                if kind == "text" and intro_leads:
                    piece.intro = True
                elif (
                    kind == "text"
                    and tokens <= lead_in_tokens
                    and index < last_index
                    and (
                        _announces(unit.text)
                        or (units[index + 1].content_kind == "table" and _leads_table(unit.text))
                    )
                ):
                    piece.lead_in = True
                if unit.clipped_from is not None:
                    self._fence(unit, [piece])
                if tokens > size:
                    pieces = self._split_pieces(
                        packer, unit.text, unit.start, pages, kind, path, tokens, levels_for(content_kind)
                    )
                    if not pieces:
                        continue
                    parted = len(pieces) > 1
                    if parted:
                        lead = take_lead()
                        if lead is not None:  # headings lead the first part: cut it to fit
                            pieces = self._fit_after(
                                packer, document, paged, lead, piece, drafts, unit, pieces
                            )
                        else:
                            self._fence(unit, pieces)
                    if parted:  # parts of an oversized unit: each fills a chunk
                        drafts.extend(Draft([part], part.tokens) for part in pieces[:-1])
                        # The last part ends its chunk too: packed with the units after it, the
                        # end of a long paragraph shared a chunk with the next topic (retrieval
                        # benchmark: mean difference from the best peer -1.17 -> -0.56 points).
                        # A split code block is code chunks only for the same reason.
                        drafts.append(Draft([pieces[-1]], pieces[-1].tokens))
                        continue
                    piece = pieces[-1]
                elif (
                    # A topic may end here: the chunk is past min_size, this unit would fit
                    # and has a text unit after it in the section.
                    cohesive
                    and kind == "text"
                    and open_draft is not None
                    and open_draft.tokens >= min_size
                    and open_draft.tokens + tokens < size
                    and index < last_index
                    and len(unit.text) >= _COHESION_CHARS
                    and units[index + 1].content_kind in _COHESIVE
                    and len(units[index + 1].text) >= _COHESION_CHARS
                    and not open_draft.pieces[-1].leads
                    and shifts(open_draft, piece, units[index + 1])
                ):
                    drafts.append(open_draft)
                    open_draft = None
                if open_draft is not None and join(open_draft, piece):
                    continue
                lead = take_lead()
                if lead is not None and not join(lead, piece):
                    if piece.leads:
                        # A run of headings over the budget: the earlier ones go alone, the
                        # later ones on with what follows.
                        drafts.append(lead)
                    else:
                        rest = self._fit_after(packer, document, paged, lead, piece, drafts, unit)
                        drafts.extend(Draft([part], part.tokens) for part in rest[:-1])
                        piece = rest[-1]
                    lead = None
                open_draft = lead if lead is not None else Draft([piece], piece.tokens, own_joins=True)
            if open_draft and open_draft.tokens >= min_size and not open_draft.pieces[-1].leads:
                drafts.append(open_draft)
                open_draft = None
        if open_draft:
            drafts.append(self._trailing(open_draft, drafts, join))
        chunks += self._finish(document, drafts, paged, now)
        if self.overlap:
            add_context_before(chunks, self.overlap, tokenizer.count)
        return chunks

    @staticmethod
    def _trailing(last: Draft, drafts: list[Draft], join: Any) -> Draft:
        """The last open draft, or, when it is only headings that fit into the chunk before
        (not a table's), that chunk with them (taken off ``drafts``)."""
        previous = drafts[-1] if drafts else None
        if (
            previous is None
            or last.trailing_headings() != len(last.pieces)
            or previous.rendered is not None
            or previous.header
            or any(p.kind == "table_row" for p in previous.pieces)
        ):
            return last
        trial = Draft(
            list(previous.pieces), previous.tokens, exact=previous.exact, own_joins=previous.own_joins
        )
        if all(join(trial, piece) for piece in last.pieces):
            drafts.pop()
            return trial
        return last

    @staticmethod
    def _fence(unit: Unit, pieces: list[Piece]) -> None:
        """Note the fence lines each part of a unit lacks (see :func:`drafts.mark_fences`)."""
        source = unit.clipped_from or unit
        if source.start is not None:
            mark_fences(pieces, source.text, source.start)

    def _fit_after(
        self,
        packer: PackedSplitter,
        document: Document,
        paged: bool,
        lead: Draft,
        piece: Piece,
        out: list[Draft],
        unit: Unit | None = None,
        parts: list[Piece] | None = None,
    ) -> list[Piece]:
        """Put ``lead`` (headings) and the first part of ``piece`` that fits beside it into a
        chunk added to ``out``; return the rest of ``piece`` in pieces within the budget.

        ``parts`` is ``piece`` already split to the budget (a unit over it): only its first
        part is cut again, to fit beside the lead, and the others are kept as they are. Where
        not even a few tokens fit beside the lead, the lead is a chunk of its own.
        """
        if parts is None:
            parts = [piece]
        first = parts[0]
        gap = separator(document.text, lead.pieces[-1], first)
        count = packer.tokenizer.count
        room = self.chunk_size - lead.tokens - count(gap)
        levels = levels_for(piece.kind if unit is None else unit.content_kind)
        while room >= 4:
            cut = packer.split(first.text, None, levels=levels, size=room)
            head = self._offset_piece(first, cut[0])
            candidate = Draft([*lead.pieces, head], 0, exact=False)
            candidate.tokens = count(render(document, candidate, paged)[0])
            if candidate.tokens <= self.chunk_size:
                out.append(candidate)
                rest_of_first = first.text[cut[0].end :]
                base = None if first.start is None else first.start + cut[0].end
                rest = self._split_pieces(
                    packer, rest_of_first, base, first.pages, first.kind, first.path, levels=levels
                )
                rest += parts[1:]
                if unit is not None:
                    self._fence(unit, [head, *rest])
                return rest or [head]  # never empty: the caller keeps the last piece open
            room -= max(1, candidate.tokens - self.chunk_size)
        out.append(lead)
        if unit is not None:
            self._fence(unit, parts)
        return parts

    @staticmethod
    def _offset_piece(piece: Piece, part: TextPiece) -> Piece:
        """A part of ``piece`` (offsets relative to its text) as a piece of the document."""
        start = None if piece.start is None else piece.start + part.start
        end = None if piece.start is None else piece.start + part.end
        return Piece(part.text, start, end, piece.pages, piece.kind, piece.path, part.token_count)

    @staticmethod
    def _split_pieces(
        packer: PackedSplitter,
        text: str,
        base: int | None,
        pages: tuple[int, ...],
        kind: ContentKind,
        path: tuple[str, ...],
        tokens: int | None = None,
        levels: tuple[Level, ...] | None = None,
    ) -> list[Piece]:
        """Split an oversized text into trimmed pieces; offsets are shifted by ``base``. The
        cut levels are ``levels``, or those of the pieces' ``kind`` (a list unit's pieces are
        text pieces, so their unit's levels are passed)."""
        return [
            Piece(
                part.text,
                None if base is None else base + part.start,
                None if base is None else base + part.end,
                pages,
                kind,
                path,
                part.token_count,
            )
            for part in packer.split(text, tokens, levels=levels or levels_for(kind))
        ]

    # ----------------------------------------------------------------------------- tables

    def _table_drafter(self, packer: PackedSplitter, document: Document, paged: bool) -> TableDrafter:
        """The table helper for one document, bound to this chunker's counts and splitter."""

        def split_text(unit: Unit, path: tuple[str, ...], lead: Draft | None) -> list[Draft]:
            piece = Piece(unit.text, unit.start, unit.end, unit.pages, "table_row", path, self.chunk_size + 1)
            out: list[Draft] = []
            parts = (
                self._fit_after(packer, document, paged, lead, piece, out)
                if lead is not None
                else self._split_pieces(packer, unit.text, unit.start, unit.pages, "table_row", path)
            )
            return out + [Draft([part], part.tokens) for part in parts]

        def split_value(value: str, budget: int) -> list[tuple[int, int]]:
            return [(p.start, p.end) for p in packer.split(value, None, size=budget)]

        return TableDrafter(
            size=self.chunk_size,
            document=document,
            count=packer.tokenizer.count,
            count_many=packer.tokenizer.count_many,
            lead_text=lambda lead: render(document, lead, paged)[0],
            split_text=split_text,
            split_value=split_value,
        )

    # ----------------------------------------------------------------------------- output

    def _finish(self, document: Document, drafts: list[Draft], paged: bool, now: datetime) -> list[Chunk]:
        """Render drafts, count the estimated ones (row groups), and repack any that overflow;
        every chunk is made at ``now``."""
        size = self.chunk_size
        rendered = [render(document, d, paged) for d in drafts]
        needs_count = [i for i, d in enumerate(drafts) if not d.exact]
        recount: dict[int, int] = {}
        if needs_count:
            exact = self.count_many([rendered[i][0] for i in needs_count])
            recount = dict(zip(needs_count, exact, strict=True))
        chunks: list[Chunk] = []
        for i, draft in enumerate(drafts):
            tokens = recount.get(i, draft.tokens) if recount else draft.tokens
            if tokens > size and draft.rendered is None:
                # Tokenization across a join cost more than its parts (rare with BPE): repack
                # these pieces one at a time with exact counts.
                chunks.extend(self._repack(document, draft, paged, now))
                continue
            chunks.append(make_chunk(document, draft, paged, rendered[i], tokens, now))
        return chunks

    def _repack(self, document: Document, draft: Draft, paged: bool, now: datetime) -> list[Chunk]:
        """Pack ``draft``'s pieces again with exact counts; split a piece that fits nowhere.

        Headings at the end of a repacked chunk go on with the piece after them when they fit
        beside it."""
        chunks: list[Chunk] = []
        current = Draft([], 0, draft.header)

        def emit(pending: Draft) -> None:
            if pending.pieces:
                chunks.append(
                    make_chunk(
                        document, pending, paged, render(document, pending, paged), pending.tokens, now
                    )
                )

        def fits(candidate: Draft) -> bool:
            candidate.tokens = self.count_tokens(render(document, candidate, paged)[0])
            return candidate.tokens <= self.chunk_size

        for piece in draft.pieces:
            joined = Draft([*current.pieces, piece], 0, draft.header)
            if fits(joined):
                current = joined
                continue
            keep = current.trailing_headings()
            if keep and keep < len(current.pieces):
                led = Draft([*current.pieces[-keep:], piece], 0, draft.header)
                if fits(led):
                    rest = Draft(current.pieces[:-keep], 0, draft.header)
                    fits(rest)
                    emit(rest)
                    current = led
                    continue
            alone = Draft([piece], 0, draft.header)
            if fits(alone):
                emit(current)
                current = alone
                continue
            # Even alone (with its repeated header) the piece is too big: split it bare.
            emit(current)
            current = Draft([], 0, draft.header)
            parts = self._split_pieces(
                self._packer, piece.text, piece.start, piece.pages, piece.kind, piece.path
            )
            for part in parts:
                emit(Draft([part], part.tokens))
        emit(current)
        return chunks
